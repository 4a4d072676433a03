import type {CommandComparisonView} from "../../../../../../electron/contract/llamaCommand";
import {formatBytes, formatMs} from "../../../../format/format";
import "./CommandComparison.css";

/** `a / b` as "1.8× slower", "1.3× faster" or "the same". */
function versus(command: number, plan: number): string {
    if (!(plan > 0) || !Number.isFinite(command)) return "";
    const ratio = command / plan;
    if (Math.abs(ratio - 1) < 0.02) return "the same";
    return ratio > 1 ? `${ratio.toFixed(2)}× slower` : `${(1 / ratio).toFixed(2)}× faster`;
}

/**
 * The user's llama.cpp command beside the plan: predicted TTFT, TPOT and GPU memory (llama.cpp's simulation) of both,
 * whether the command fits, each group of tensors it places otherwise with what that choice costs a request, the knobs
 * that differ, and every flag it did not price or refused, with why.
 */
export function CommandComparison({view}: {view: CommandComparisonView}) {
    const p = view.priced;
    return (
        <section className="panel stack command-comparison" data-testid="command-comparison">
            <h2>Your {view.program} command beside the plan {view.loaded === "command" ? "(loaded: your command)" : "(loaded: the plan)"}</h2>
            <pre className="offload-flags">{view.line}</pre>
            {p == null ? (
                <div className="command-refused" data-testid="command-refused">
                    <b>Not priced:</b>
                    <ul>{view.refused.map((note, i) => <li key={i}><code>{note.flag}</code>: {note.why}</li>)}</ul>
                </div>
            ) : (
                <>
                    <table className="command-table">
                        <thead><tr><th></th><th>Your command</th><th>The plan</th><th></th></tr></thead>
                        <tbody>
                            <tr data-testid="command-ttft"><td>TTFT</td><td>{formatMs(p.ttftMs)}</td><td>{formatMs(view.plan.ttftMs)}</td><td>{versus(p.ttftMs, view.plan.ttftMs)}</td></tr>
                            <tr data-testid="command-tpot"><td>TPOT</td><td>{formatMs(p.tpotMs)}</td><td>{formatMs(view.plan.tpotMs)}</td><td>{versus(p.tpotMs, view.plan.tpotMs)}</td></tr>
                            <tr data-testid="command-vram"><td>GPU memory</td><td>{formatBytes(p.vramBytes)}</td><td>{formatBytes(view.plan.vramBytes)}</td>
                                <td className={p.fits ? "" : "command-over"}>{p.fits ? "fits" : `does not fit: ${formatBytes(view.overshootBytes)} over`}</td></tr>
                        </tbody>
                    </table>
                    {view.differences.length === 0 && view.knobDifferences.length === 0
                        ? <div className="muted" data-testid="command-same">The same placement and knobs as the plan.</div>
                        : (
                            <ul className="command-differences" data-testid="command-differences">
                                {view.differences.map((d, i) => (
                                    <li key={i}>
                                        <code>{d.what}</code> ({formatBytes(d.bytes)}) on the {d.command}, the plan: {d.plan}
                                        {d.requestMsDelta != null && ` — this choice alone ${d.requestMsDelta >= 0 ? "costs" : "saves"} ${formatMs(Math.abs(d.requestMsDelta))} a request`}
                                    </li>
                                ))}
                                {view.knobDifferences.map((k, i) => <li key={`k${i}`}>{k}</li>)}
                            </ul>
                        )}
                    {p.notes.length > 0 && <ul className="faint command-notes">{p.notes.map((note, i) => <li key={i}>{note}</li>)}</ul>}
                </>
            )}
            {view.notPriced.length > 0 && (
                <div className="faint" data-testid="command-not-priced">
                    Not part of the price: {view.notPriced.map((note) => note.flag).join(", ")} ({[...new Set(view.notPriced.map((note) => note.why))].join("; ")})
                </div>
            )}
        </section>
    );
}
