import {useEffect} from "react";
import {refreshBenchList} from "../../actions/benchActions";
import {useBenchStore} from "../../stores/benchStore";
import {useEngineStore} from "../../stores/engineStore";
import {usePlanStore} from "../../stores/planStore";
import {useUiStore} from "../../stores/uiStore";
import {BenchReportView} from "./components/BenchReportView/BenchReportView";
import {BenchRunProgress} from "./components/BenchRunProgress/BenchRunProgress";
import {BenchSetup} from "./components/BenchSetup/BenchSetup";
import {PastRuns} from "./components/PastRuns/PastRuns";
import "./Benchmark.css";

/** Runs placement strategies side by side on the loaded model, live, and keeps every run's report for export. */
export function Benchmark() {
    const run = useBenchStore((state) => state.run);
    const detail = useBenchStore((state) => state.detail);
    const loaded = usePlanStore((state) => state.loaded);
    const engine = useEngineStore((state) => state.engine);
    const show = useUiStore((state) => state.show);
    useEffect(() => {
        void refreshBenchList();
    }, []);

    const running = run.status === "running";
    const reason = running ? null
        : loaded == null ? "Load a model first (Auto-offload): the benchmark runs on the loaded model."
            : engine.state !== "ready" ? "Wait for the engine to be ready." : null;

    return (
        <div className="screen bench-screen">
            <div className="screen-header">
                <div>
                    <h1>Benchmark</h1>
                    <p>Each strategy loads the model its own way and is timed on this machine: TTFT per prompt length, TPOT per generation length, next to the planner's prediction.</p>
                </div>
                {loaded != null
                    ? <span className="pill bench-model-pill" title={loaded.card.path}>model · <b>{loaded.card.name ?? loaded.card.fileName}</b></span>
                    : !running && <button className="button small" onClick={() => show("offload")}>Load a model</button>}
            </div>
            <div className="stack">
                <div className="bench-top">
                    <BenchSetup canStart={reason == null && !running} reason={reason}/>
                    <PastRuns/>
                </div>
                {run.status === "running" && <BenchRunProgress progress={run.progress} stopping={run.stopping}/>}
                {run.status === "failed" && <div className="error-box" data-testid="bench-error">{run.message}</div>}
                {detail != null && <BenchReportView detail={detail}/>}
                {detail == null && !running && run.status !== "failed" && (
                    <div className="notice">Run a benchmark, or pick a past run, to see its measurements, charts and speed-ups here.</div>
                )}
            </div>
        </div>
    );
}
