import {autoOffload, cancelAutoOffload} from "../../actions/modelActions";
import {CommandComparison} from "./components/CommandComparison/CommandComparison";
import {ErrorNotice} from "../../components/ErrorNotice/ErrorNotice";
import {formatBytes, formatMs, formatMsRange, formatRate, tokensPerSecond} from "../../format/format";
import {useEngineStore} from "../../stores/engineStore";
import {useModelStore} from "../../stores/modelStore";
import {usePlanStore} from "../../stores/planStore";
import {useUiStore} from "../../stores/uiStore";
import {OffloadControls} from "./components/OffloadControls/OffloadControls";
import {PlacementMap} from "./components/PlacementMap/PlacementMap";
import {MemoryEstimate} from "./components/MemoryEstimate/MemoryEstimate";
import {PlanExplanation} from "./components/PlanExplanation/PlanExplanation";
import {SlowPlanWarning} from "./components/SlowPlanWarning/SlowPlanWarning";
import {TaskSteps} from "./components/TaskSteps/TaskSteps";
import "./Offload.css";

export function Offload() {
    const inspection = useModelStore((state) => state.inspection);
    const run = usePlanStore((state) => state.run);
    const loaded = usePlanStore((state) => state.loaded);
    const engine = useEngineStore((state) => state.engine);
    const show = useUiStore((state) => state.show);
    const card = inspection.status === "ready" ? inspection.card : loaded?.card ?? null;
    const running = run.status === "running" || engine.state === "busy";
    // the engine stops a task at its next step until its weights start loading; then it finishes the load
    const cancellable = run.status === "running" && !run.steps.some((step) => step.step === "load");
    // while a job runs, the plan it sent before loading; afterwards the loaded model's
    const planned = run.status === "running" ? run.planned ?? null : null;
    const prediction = planned?.prediction ?? loaded?.prediction ?? null;
    return (
        <div className="screen offload-screen">
            <div className="screen-header">
                <div>
                    <h1>Auto-offload</h1>
                    <p>Profiles this machine, plans where every weight tensor lives, loads the model that way, and measures the result.</p>
                </div>
            </div>
            <div className="stack">
                <section className="panel offload-hero">
                    <div className="offload-model">
                        <h3>Model</h3>
                        {card != null
                            ? <div><b>{card.name ?? card.fileName}</b> <span className="muted">· {formatBytes(card.fileBytes)} · {card.layerCount ?? "?"} layers</span></div>
                            : <div className="muted">No model open. <button className="button small" onClick={() => show("model")}>Open one</button></div>}
                    </div>
                    <OffloadControls disabled={running}/>
                    <div className="row offload-actions">
                        <button className="button primary large" data-testid="auto-offload" disabled={card == null || running || engine.state === "crashed"}
                            title="Profiles this machine if no saved profile fits it, plans the placement and loads the model"
                            onClick={() => card != null && void autoOffload(card.path)}>
                            {running ? "Working…" : "⚡ Auto-offload"}
                        </button>
                        {cancellable
                            ? <button className="button" data-testid="auto-offload-cancel" disabled={run.cancelling === true}
                                onClick={() => void cancelAutoOffload()}>{run.cancelling === true ? "Cancelling…" : "Cancel"}</button>
                            : <button className="button small" data-testid="auto-offload-reprofile" disabled={card == null || running || engine.state === "crashed"}
                                title="Measures this machine again instead of reusing its saved profile, then plans and loads"
                                onClick={() => card != null && void autoOffload(card.path, {refreshProfile: true})}>Re-profile and auto-offload</button>}
                    </div>
                </section>
                {run.status !== "idle" && <TaskSteps steps={run.steps} running={run.status === "running"}/>}
                {run.status === "failed" && <ErrorNotice testId="offload-error" title="The model was not loaded." error={run.error ?? {code: "internal", message: run.message}}/>}
                {run.status === "cancelled" && <div className="muted" data-testid="offload-cancelled">Cancelled.{loaded != null ? " The model loaded before is still loaded." : ""}</div>}
                <SlowPlanWarning prediction={prediction} loading={planned != null}
                    planSettings={(run.status === "running" || run.status === "done") && (planned != null || loaded != null) ? run.settings : undefined}
                    onReplan={loaded != null && !running && engine.state !== "crashed" ? () => void autoOffload(loaded.card.path) : undefined}/>
                {prediction?.explanation != null && (
                    <section className="panel stack" data-testid="offload-plan">
                        <h2>Why this plan</h2>
                        <PlanExplanation explanation={prediction.explanation}/>
                        <h2>Memory {planned != null ? "it will take" : "planned"} per device</h2>
                        <MemoryEstimate memory={prediction.memory}/>
                        <div className="faint offload-note">Estimated before loading by llama.cpp's no-alloc simulation of this plan; the Memory screen compares it with what was allocated.</div>
                    </section>
                )}
                {planned != null && <PlacementMap placement={planned.placement}/>}
                {run.status !== "running" && loaded != null && (
                    <>
                        {card != null && card.path !== loaded.card.path && (
                            <div className="muted" data-testid="offload-loaded-other">
                                Below: the plan of the loaded model, <b>{loaded.card.name ?? loaded.card.fileName}</b>. Auto-offload plans and loads {card.name ?? card.fileName} instead.
                            </div>
                        )}
                        <section className="panel offload-result" data-testid="offload-result">
                            <div className="offload-stats">
                                <div className="stat"><span className="label">Strategy</span><span className="value" data-testid="plan-strategy">{loaded.placement.strategy}</span></div>
                                <div className="stat"><span className="label">Predicted TTFT</span><span className="value" data-testid="predicted-ttft">{formatMs(loaded.prediction?.ttftMs)}</span>
                                    {loaded.prediction?.ranges != null && <span className="faint" data-testid="predicted-ttft-range">{formatMsRange(loaded.prediction.ranges.ttft.lowMs, loaded.prediction.ranges.ttft.highMs)}</span>}</div>
                                <div className="stat"><span className="label">Predicted TPOT</span><span className="value" data-testid="predicted-tpot">{formatMs(loaded.prediction?.tpotMs)}</span>
                                    {loaded.prediction?.ranges != null && <span className="faint" data-testid="predicted-tpot-range">{formatMsRange(loaded.prediction.ranges.tpot.lowMs, loaded.prediction.ranges.tpot.highMs)}</span>}</div>
                                <div className="stat"><span className="label">Predicted speed</span><span className="value">{formatRate(tokensPerSecond(loaded.prediction?.tpotMs))}</span></div>
                                <div className="stat"><span className="label">Load time</span><span className="value">{formatMs(loaded.loadMs)}</span></div>
                                <div className="stat"><span className="label">Context · batch</span><span className="value">{loaded.settings.contextSize} · {loaded.settings.batchSize}</span></div>
                                {engine.state === "ready" && (
                                    <button className="button primary offload-start-chatting" data-testid="start-chatting" onClick={() => show("chat")}>Start chatting →</button>
                                )}
                            </div>
                            {loaded.prediction != null && <div className="faint offload-note">Predictions for a {loaded.prediction.promptTokens}-token prompt. Each reply in Chat and Dashboards is predicted for its own prompt and length, beside what was measured.</div>}
                        </section>
                        {loaded.command != null && <CommandComparison view={loaded.command}/>}
                        <PlacementMap placement={loaded.placement}/>
                        <section className="panel">
                            <div className="row offload-flags-head">
                                <h2>Equivalent llama.cpp command</h2>
                                <button className="button small" onClick={() => void navigator.clipboard?.writeText(loaded.placement.llamaCppFlags)}>Copy</button>
                            </div>
                            <pre className="offload-flags" data-testid="llama-flags">{loaded.placement.llamaCppFlags}</pre>
                        </section>
                    </>
                )}
            </div>
        </div>
    );
}
