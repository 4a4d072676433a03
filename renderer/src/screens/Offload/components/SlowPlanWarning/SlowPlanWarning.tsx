import "./SlowPlanWarning.css";
import {formatMs} from "../../../../format/format";
import {DEFAULT_OFFLOAD_SETTINGS, usePlanStore, type OffloadSettings} from "../../../../stores/planStore";
import {useUiStore} from "../../../../stores/uiStore";
import {optionsTaken, slowPlanAdvice} from "./slowPlanAdvice";
import type {Prediction} from "../../../../../../electron/contract/ipc";

/**
 * Says that the plan shown is predicted to be slow, and offers what could make it faster (see slowPlanAdvice), judged
 * by `planSettings`, the settings that plan was made with where known (else the screen's settings). An option taken
 * since is shown as taken, with Auto-offload offered again (`onReplan`): until then the plan shown is the slow one.
 */
export function SlowPlanWarning({prediction, loading, planSettings, onReplan}: {
    prediction: Prediction | null; loading: boolean; planSettings?: OffloadSettings; onReplan?: () => void;
}) {
    const settings = usePlanStore((state) => state.settings);
    const setSettings = usePlanStore((state) => state.setSettings);
    const show = useUiStore((state) => state.show);
    const advice = slowPlanAdvice(prediction, planSettings ?? settings);
    if (advice == null) return null;
    const taken = planSettings == null ? [] : optionsTaken(advice, settings);
    const mark = (option: typeof taken[number]) => taken.includes(option) ? "✓ " : "";
    const seconds = advice.promptTokensPerSec >= 10 ? advice.promptTokensPerSec.toFixed(0) : advice.promptTokensPerSec.toFixed(1);
    return (
        <section className="panel slow-plan" role="status" data-testid="slow-plan">
            <b>This plan is slow on this machine.</b> The first token of a {advice.promptTokens}-token prompt is predicted after
            {" "}<span data-testid="slow-plan-ttft">{formatMs(advice.ttftMs)}</span> (it reads about {seconds} prompt tokens/s){loading ? "; it is loading now" : ""}.
            {" "}Replies to short follow-ups start sooner, since the conversation so far is kept.
            <div className="row slow-plan-options">
                {advice.options.includes("strategy") && (
                    <button className="button small" data-testid="slow-plan-strategy" disabled={taken.includes("strategy")} aria-pressed={taken.includes("strategy")}
                        onClick={() => setSettings({strategy: "optimal"})}>{mark("strategy")}Use the planner's strategy (optimal)</button>
                )}
                {advice.options.includes("budget") && (
                    <button className="button small" data-testid="slow-plan-budget" disabled={taken.includes("budget")} aria-pressed={taken.includes("budget")}
                        onClick={() => setSettings({budget: {kind: "auto"}})}>{mark("budget")}Let it use all free GPU memory (Auto budget)</button>
                )}
                {advice.options.includes("knobs") && (
                    <button className="button small" data-testid="slow-plan-knobs" disabled={taken.includes("knobs")} aria-pressed={taken.includes("knobs")}
                        onClick={() => setSettings({knobs: {...DEFAULT_OFFLOAD_SETTINGS.knobs, kvCacheType: settings.knobs.kvCacheType}})}>
                        {mark("knobs")}Let the planner choose the llama.cpp settings
                    </button>
                )}
                <button className="button small" data-testid="slow-plan-smaller" onClick={() => show("get-model")}>Get a smaller quantization</button>
            </div>
            {taken.length > 0
                ? (
                    <div className="row slow-plan-replan" data-testid="slow-plan-changed">
                        <span>Changed since this plan: it stays slow until Auto-offload plans again.</span>
                        {onReplan != null && !loading && (
                            <button className="button primary small" data-testid="slow-plan-replan" onClick={onReplan}>⚡ Auto-offload again</button>
                        )}
                    </div>
                )
                : advice.options.length > 1 && <div className="faint">After changing a setting, press Auto-offload again.</div>}
        </section>
    );
}
