import {useEffect, useMemo, useState} from "react";
import type {BenchExportFormat} from "../../../../electron/contract/ipc";
import {exportBench, refreshBenchList} from "../../actions/benchActions";
import {ProgressBar} from "../../components/ProgressBar/ProgressBar";
import {formatMs} from "../../format/format";
import {useBenchStore} from "../../stores/benchStore";
import {useEngineStore} from "../../stores/engineStore";
import {usePlanStore} from "../../stores/planStore";
import {useUiStore} from "../../stores/uiStore";
import {errorMessage} from "../../transport/Transport";
import {BenchChart} from "./components/BenchChart/BenchChart";
import {chartSeries} from "./components/BenchChart/chartSeries";
import {BenchSetup} from "./components/BenchSetup/BenchSetup";
import {PastRuns} from "./components/PastRuns/PastRuns";
import {ResultsTable} from "./components/ResultsTable/ResultsTable";
import {PredictionErrors} from "./components/PredictionErrors/PredictionErrors";
import {SpeedupTable} from "./components/SpeedupTable/SpeedupTable";
import "./Benchmark.css";

const FORMATS: {format: BenchExportFormat; label: string}[] = [{format: "html", label: "HTML"}, {format: "csv", label: "CSV"}, {format: "json", label: "JSON"}];

/** Runs placement strategies side by side on the loaded model, live, and keeps every run's report for export. */
export function Benchmark() {
    const run = useBenchStore((state) => state.run);
    const detail = useBenchStore((state) => state.detail);
    const loaded = usePlanStore((state) => state.loaded);
    const engine = useEngineStore((state) => state.engine);
    const show = useUiStore((state) => state.show);
    const [exported, setExported] = useState<string | null>(null);
    useEffect(() => {
        void refreshBenchList();
    }, []);

    const running = run.status === "running";
    const reason = running ? null
        : loaded == null ? "Load a model first (Auto-offload): the benchmark runs on the loaded model."
            : engine.state !== "ready" ? "Wait for the engine to be ready." : null;
    const ttft = useMemo(() => detail == null ? null : chartSeries(detail.report, "ttft"), [detail]);
    const tpot = useMemo(() => detail == null ? null : chartSeries(detail.report, "tpot"), [detail]);
    const progress = run.status === "running" ? run.progress : null;

    const doExport = async (format: BenchExportFormat) => {
        if (detail == null)
            return;
        try {
            const where = await exportBench(detail.summary.id, format);
            setExported(where == null ? null : `Saved ${where}`);
        } catch (error) {
            setExported(`Export failed: ${errorMessage(error)}`);
        }
    };

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
                {running && (
                    <section className="panel bench-progress" data-testid="bench-progress" data-done={progress?.done ?? 0} data-total={progress?.total ?? 0}>
                        <ProgressBar testId="bench-progress-bar" value={progress == null || progress.total === 0 ? null : progress.done / progress.total}
                            label={progress?.cell ?? "Starting: profiling this machine and planning…"}
                            detail={progress == null ? undefined : `${progress.done} / ${progress.total} measurements`}/>
                        <div className="row bench-step">
                            <span className="faint mono" data-testid="bench-step">{run.stopping ? "stopping after the current measurement…" : progress?.step ?? ""}</span>
                            {progress?.lastSample != null && (
                                <span className="muted">last: {progress.lastSample.kind === "ttft" ? `TTFT, ${progress.lastSample.tokens}-token prompt` : `TPOT over ${progress.lastSample.tokens} tokens`} · <b>{formatMs(progress.lastSample.ms)}</b></span>
                            )}
                        </div>
                    </section>
                )}
                {run.status === "failed" && <div className="error-box" data-testid="bench-error">{run.message}</div>}
                {detail != null && (
                    <>
                        <div className="bench-detail-head" data-testid="bench-detail" data-status={detail.summary.status}>
                            <div>
                                <h2>{detail.summary.modelName} <span className={`bench-status status-${detail.summary.status}`}>{detail.summary.status}</span></h2>
                                <div className="faint bench-detail-meta">
                                    {new Date(detail.report.startedAt).toLocaleString()} · {detail.report.environment.cpu.model} · {detail.report.environment.gpu?.name ?? "no GPU"} · llama.cpp {detail.report.environment.llamaCppRelease}
                                </div>
                            </div>
                            <div className="row bench-export">
                                {exported != null && <span className="faint bench-exported" data-testid="bench-exported">{exported}</span>}
                                <span className="faint">Export</span>
                                {FORMATS.map(({format, label}) => (
                                    <button key={format} className="button small" data-testid={`bench-export-${format}`} onClick={() => void doExport(format)}>{label}</button>
                                ))}
                            </div>
                        </div>
                        <ResultsTable report={detail.report}/>
                        <div className="grid-2">
                            <BenchChart testId="bench-chart-ttft" title="TTFT vs prompt length" xLabel="prompt tokens" x={ttft?.x ?? []} series={ttft?.series ?? []}/>
                            <BenchChart testId="bench-chart-tpot" title="TPOT vs generation length" xLabel="generated tokens" x={tpot?.x ?? []} series={tpot?.series ?? []}/>
                        </div>
                        <div className="bench-tables">
                            <SpeedupTable report={detail.report} cells={detail.speedups}/>
                            <PredictionErrors errors={detail.errors}/>
                        </div>
                    </>
                )}
                {detail == null && !running && run.status !== "failed" && (
                    <div className="notice">Run a benchmark, or pick a past run, to see its measurements, charts and speed-ups here.</div>
                )}
            </div>
        </div>
    );
}
