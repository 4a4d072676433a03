import type {BenchReport} from "../../../../../../electron/contract/ipc";
import {formatMs} from "../../../../format/format";
import {strategyStyle} from "../../../../../../electron/contract/strategyStyles";
import "./ResultsTable.css";

function errorPct(predicted: number | null, measured: number): string {
    if (predicted == null || measured <= 0)
        return "—";
    const pct = (predicted - measured) / measured * 100;
    return `${pct >= 0 ? "+" : ""}${pct.toFixed(0)}%`;
}

/** One row per measured point of every finished run (budget × strategy), as the runs finish. */
export function ResultsTable({report}: {report: BenchReport}) {
    return (
        <section className="panel bench-results">
            <div className="row bench-section-head">
                <h2>Measurements</h2>
                <span className="faint">{report.runs.length} of {report.plannedRuns} runs · median of {report.settings.repeats} · {report.environment.backend}</span>
            </div>
            <div className="bench-table-scroll">
                <table className="data bench-results-table" data-testid="bench-results">
                    <thead>
                        <tr>
                            <th>Budget</th><th>Strategy</th><th>Measure</th><th className="num">Tokens</th><th className="num">Median</th>
                            <th className="num">Spread</th><th className="num">Speed</th><th className="num">Predicted</th><th className="num">Error</th>
                        </tr>
                    </thead>
                    <tbody>
                        {report.runs.map((run) => run.status !== "ok" && run.points.length === 0
                            ? (
                                <tr key={run.id} className="bench-run-failed" data-testid="bench-result-row" data-status={run.status}>
                                    <td>{run.budget}</td>
                                    <td><span className="swatch" style={{background: strategyStyle(run.variant.label).color}}/>{run.variant.label}</td>
                                    <td colSpan={7} className="bench-run-error">{run.status}: {run.error}</td>
                                </tr>
                            )
                            : run.points.map((point, index) => (
                                <tr key={`${run.id}/${point.kind}${point.tokens}`} data-testid="bench-result-row" data-status={run.status}
                                    className={index === 0 ? "bench-run-first" : ""}>
                                    <td>{index === 0 ? run.budget : ""}</td>
                                    <td>{index === 0 && <><span className="swatch" style={{background: strategyStyle(run.variant.label).color}}/>{run.variant.label}</>}</td>
                                    <td>{point.kind === "ttft" ? "TTFT" : "TPOT"}</td>
                                    <td className="num">{point.tokens}</td>
                                    <td className="num"><b>{formatMs(point.medianMs)}</b></td>
                                    <td className="num faint">{point.samplesMs.length > 1 ? `±${point.spreadPct.toFixed(0)}%` : "—"}</td>
                                    <td className="num">{point.tokensPerSec >= 100 ? point.tokensPerSec.toFixed(0) : point.tokensPerSec.toFixed(1)} tok/s</td>
                                    <td className="num muted">{formatMs(point.predictedMs)}</td>
                                    <td className="num muted">{errorPct(point.predictedMs, point.medianMs)}</td>
                                </tr>
                            )))}
                    </tbody>
                </table>
            </div>
        </section>
    );
}
