import type {ErrorStat} from "../../../../../../electron/contract/ipc";
import {strategyStyle} from "../../../../../../electron/contract/strategyStyles";
import "./PredictionErrors.css";

function pct(value: number | null): string {
    return value == null ? "—" : `${value.toFixed(1)}%`;
}

/** Median absolute error of the planner's predictions against the measurements, per strategy. */
export function PredictionErrors({errors}: {errors: ErrorStat[]}) {
    return (
        <section className="panel bench-errors" data-testid="bench-errors">
            <div className="row bench-section-head">
                <h2>Predicted vs measured</h2>
                <span className="faint">median absolute error of the cost model</span>
            </div>
            <div className="bench-table-scroll">
                <table className="data">
                    <thead><tr><th>Strategy</th><th className="num">TTFT</th><th className="num">TPOT</th><th className="num">All</th><th className="num" title="points with a prediction">n</th></tr></thead>
                    <tbody>
                        {errors.length === 0 && <tr><td colSpan={5} className="faint">no finished runs yet</td></tr>}
                        {errors.map((stat) => (
                            <tr key={stat.variant}>
                                <td><span className="swatch" style={{background: strategyStyle(stat.variant).color}}/><span className="mono">{stat.variant}</span></td>
                                <td className="num">{pct(stat.ttft)}</td><td className="num">{pct(stat.tpot)}</td>
                                <td className={`num ${stat.all != null && stat.all <= 5 ? "faster" : ""}`}><b>{pct(stat.all)}</b></td>
                                <td className="num faint">{stat.points}</td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            </div>
        </section>
    );
}
