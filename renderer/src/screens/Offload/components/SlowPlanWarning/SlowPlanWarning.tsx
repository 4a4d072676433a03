import "./SlowPlanWarning.css";
import {formatMs} from "../../../../format/format";
import {DEFAULT_OFFLOAD_SETTINGS, usePlanStore} from "../../../../stores/planStore";
import {useUiStore} from "../../../../stores/uiStore";
import {slowPlanAdvice} from "./slowPlanAdvice";
import type {Prediction} from "../../../../../../electron/contract/ipc";

/** Says that the plan shown is predicted to be slow, and offers what could make it faster (see slowPlanAdvice). */
export function SlowPlanWarning({prediction, loading}: {prediction: Prediction | null; loading: boolean}) {
    const settings = usePlanStore((state) => state.settings);
    const setSettings = usePlanStore((state) => state.setSettings);
    const show = useUiStore((state) => state.show);
    const advice = slowPlanAdvice(prediction, settings);
    if (advice == null) return null;
    const seconds = advice.promptTokensPerSec >= 10 ? advice.promptTokensPerSec.toFixed(0) : advice.promptTokensPerSec.toFixed(1);
    return (
        <section className="panel slow-plan" role="status" data-testid="slow-plan">
            <b>This plan is slow on this machine.</b> The first token of a {advice.promptTokens}-token prompt is predicted after
            {" "}<span data-testid="slow-plan-ttft">{formatMs(advice.ttftMs)}</span> (it reads about {seconds} prompt tokens/s){loading ? "; it is loading now" : ""}.
            {" "}Replies to short follow-ups start sooner, since the conversation so far is kept.
            <div className="row slow-plan-options">
                {advice.options.includes("strategy") && (
                    <button className="button small" data-testid="slow-plan-strategy" onClick={() => setSettings({strategy: "optimal"})}>Use the planner's strategy (optimal)</button>
                )}
                {advice.options.includes("budget") && (
                    <button className="button small" data-testid="slow-plan-budget" onClick={() => setSettings({budget: {kind: "auto"}})}>Let it use all free GPU memory (Auto budget)</button>
                )}
                {advice.options.includes("knobs") && (
                    <button className="button small" data-testid="slow-plan-knobs" onClick={() => setSettings({knobs: {...DEFAULT_OFFLOAD_SETTINGS.knobs, kvCacheType: settings.knobs.kvCacheType}})}>
                        Let the planner choose the llama.cpp settings
                    </button>
                )}
                <button className="button small" data-testid="slow-plan-smaller" onClick={() => show("get-model")}>Get a smaller quantization</button>
            </div>
            {advice.options.length > 1 && <div className="faint">After changing a setting, press Auto-offload again.</div>}
        </section>
    );
}
