import type {BenchSummary} from "../../../../../../electron/contract/ipc";
import {openBench} from "../../../../actions/benchActions";
import {useBenchStore} from "../../../../stores/benchStore";
import "./PastRuns.css";

const STATUS_LABEL: Record<BenchSummary["status"], string> = {running: "running", done: "done", interrupted: "stopped", incomplete: "incomplete"};

function when(iso: string): string {
    const date = new Date(iso);
    return `${date.toLocaleDateString(undefined, {month: "short", day: "numeric"})} · ${date.toLocaleTimeString(undefined, {hour: "2-digit", minute: "2-digit"})}`;
}

/** Benchmarks kept in the data dir, newest first; picking one shows its report. */
export function PastRuns() {
    const summaries = useBenchStore((state) => state.summaries);
    const selectedId = useBenchStore((state) => state.selectedId);
    return (
        <section className="panel bench-past" data-testid="bench-past">
            <div className="row bench-section-head">
                <h2>Past runs</h2>
                <span className="faint">{summaries.length}</span>
            </div>
            {summaries.length === 0 && <div className="faint bench-past-empty">Finished benchmarks are kept here, with their reports.</div>}
            <ul className="bench-past-list">
                {summaries.map((summary) => (
                    <li key={summary.id}>
                        <button className={`bench-past-item ${summary.id === selectedId ? "active" : ""}`} data-testid="bench-past-item"
                            data-status={summary.status} onClick={() => void openBench(summary.id)}>
                            <span className="bench-past-title">
                                <span className="bench-past-model">{summary.modelName}</span>
                                <span className={`bench-status status-${summary.status}`}>{STATUS_LABEL[summary.status]}</span>
                            </span>
                            <span className="bench-past-meta faint">
                                {when(summary.startedAt)} · {summary.finishedRuns}/{summary.plannedRuns} runs{summary.failedRuns > 0 ? ` (${summary.failedRuns} failed)` : ""}
                            </span>
                            <span className="bench-past-meta faint mono">{summary.budgets.join(" ")} · {summary.strategies.join(", ")}</span>
                        </button>
                    </li>
                ))}
            </ul>
        </section>
    );
}
