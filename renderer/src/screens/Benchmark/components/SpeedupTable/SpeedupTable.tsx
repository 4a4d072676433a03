import type {BenchReport, SpeedupCell} from "../../../../../../electron/contract/ipc";
import {strategyStyle} from "../../../../../../electron/contract/strategyStyles";
import {formatMs} from "../../../../format/format";
import "./SpeedupTable.css";

const BASELINE_TITLES: Record<string, string> = {layers: "layers", fit: "fit", "best-tuned": "best hand-tuned"};

function tone(speedup: number): string {
    return speedup >= 1.05 ? "faster" : speedup <= 0.95 ? "slower" : "even";
}

/** Speed-up of every strategy over a baseline (baseline time / strategy time), per budget and point. */
export function SpeedupTable({report, cells}: {report: BenchReport; cells: SpeedupCell[]}) {
    const baselines = ["layers", "fit", "best-tuned"].filter((baseline) => cells.some((cell) => cell.baseline === baseline));
    const points = [...report.settings.prompts.map((tokens) => ({kind: "ttft" as const, tokens})), ...report.settings.gens.map((tokens) => ({kind: "tpot" as const, tokens}))];
    return (
        <section className="panel bench-speedups" data-testid="bench-speedups">
            <div className="row bench-section-head">
                <h2>Speed-up</h2>
                <span className="faint">baseline time ÷ strategy time; above 1× is faster</span>
            </div>
            {baselines.length === 0 && <div className="faint">Needs a finished <code>layers</code> or <code>fit</code> run to compare against.</div>}
            {baselines.map((baseline) => {
                const rows = [...new Set(cells.filter((cell) => cell.baseline === baseline && cell.variant !== baseline).map((cell) => `${cell.budget}\u0000${cell.variant}`))];
                return (
                    <div key={baseline} className="bench-table-scroll">
                        <table className="data bench-speedup-table" data-baseline={baseline}>
                            <thead>
                                <tr>
                                    <th>vs {BASELINE_TITLES[baseline]}</th>
                                    {points.map((point) => <th key={`${point.kind}${point.tokens}`} className="num">{point.kind === "ttft" ? "pp" : "tg"}{point.tokens}</th>)}
                                </tr>
                            </thead>
                            <tbody>
                                {rows.length === 0 && <tr><td colSpan={points.length + 1} className="faint">only the baseline itself ran</td></tr>}
                                {rows.map((row) => {
                                    const [budget, variant] = row.split("\u0000") as [string, string];
                                    return (
                                        <tr key={row}>
                                            <td><span className="swatch" style={{background: strategyStyle(variant).color}}/><span className="mono">{variant}</span> <span className="faint">@ {budget}</span></td>
                                            {points.map((point) => {
                                                const cell = cells.find((c) => c.baseline === baseline && c.budget === budget && c.variant === variant && c.kind === point.kind && c.tokens === point.tokens);
                                                return <td key={`${point.kind}${point.tokens}`} className={`num ${cell == null ? "faint" : tone(cell.speedup)}`}
                                                    title={cell == null ? undefined : `${formatMs(cell.variantMs)} vs ${formatMs(cell.baselineMs)}`}>
                                                    {cell == null ? "—" : `${cell.speedup.toFixed(2)}×`}
                                                </td>;
                                            })}
                                        </tr>
                                    );
                                })}
                            </tbody>
                        </table>
                    </div>
                );
            })}
        </section>
    );
}
