import type {Prediction} from "../../../../../../electron/contract/ipc";
import type {OffloadSettings} from "../../../../stores/planStore";
import {predictedPromptTokensPerSecond} from "../../../../format/promptTimeLeft";

/**
 * A plan whose predicted time to the first token of its typical prompt is over this is called slow before it loads: a
 * newcomer otherwise waits minutes on a progress bar without knowing it was foreseen (a 512-token prompt predicted at
 * 293 s loaded without a word).
 */
export const SLOW_TTFT_MS = 10_000;

/** What can be done about a slow plan, most specific first. */
export type SlowPlanOption = "strategy" | "budget" | "knobs" | "smaller-model";

export type SlowPlanAdvice = {ttftMs: number; promptTokens: number; promptTokensPerSec: number; options: SlowPlanOption[]};

/** Whether `settings` leave `option` to the planner (what following that option of the advice sets). */
function leftToPlanner(option: SlowPlanOption, settings: OffloadSettings): boolean {
    switch (option) {
        case "strategy": return settings.strategy === "optimal";
        case "budget": return settings.budget.kind === "auto";
        case "knobs": {
            const {kvCacheType: _type, ...onOff} = settings.knobs;
            return Object.values(onOff).every((value) => value == null);
        }
        case "smaller-model": return false;
    }
}

/**
 * The options of `advice` (given for a plan made with the settings it was given) that `settings`, the Offload
 * screen's settings now, have already taken: the plan shown is still the slow one until Auto-offload runs again.
 */
export function optionsTaken(advice: SlowPlanAdvice, settings: OffloadSettings): SlowPlanOption[] {
    return advice.options.filter((option) => leftToPlanner(option, settings));
}

/**
 * Whether the plan is slow and what could make it faster: the planner's own strategy where another was chosen, the
 * whole free GPU memory where a smaller budget was set, the planner's choice of the llama.cpp knobs where some were
 * fixed, and otherwise a smaller quantization (the planner already chose the fastest plan it could for this model and
 * budget). `null` when the plan is not slow or has no prediction.
 */
export function slowPlanAdvice(prediction: Pick<Prediction, "ttftMs" | "promptTokens"> | null, settings: OffloadSettings): SlowPlanAdvice | null {
    const ttftMs = prediction?.ttftMs;
    if (prediction == null || ttftMs == null || !Number.isFinite(ttftMs) || ttftMs <= SLOW_TTFT_MS) return null;
    const options = (["strategy", "budget", "knobs", "smaller-model"] as const).filter((option) => !leftToPlanner(option, settings));
    return {ttftMs, promptTokens: prediction.promptTokens, promptTokensPerSec: predictedPromptTokensPerSecond(prediction) ?? 0, options};
}
