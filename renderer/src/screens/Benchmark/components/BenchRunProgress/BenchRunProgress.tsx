import type {BenchProgress} from "../../../../../../electron/contract/ipc";
import {ProgressBar} from "../../../../components/ProgressBar/ProgressBar";
import {formatMs} from "../../../../format/format";

/** The running benchmark: measurements done of all, the current step, and the last measured sample. */
export function BenchRunProgress({progress, stopping}: {progress: BenchProgress | null; stopping: boolean}) {
    const last = progress?.lastSample;
    return (
        <section className="panel bench-progress" data-testid="bench-progress" data-done={progress?.done ?? 0} data-total={progress?.total ?? 0}>
            <ProgressBar testId="bench-progress-bar" value={progress == null || progress.total === 0 ? null : progress.done / progress.total}
                label={progress?.cell ?? "Starting: profiling this machine and planning…"}
                detail={progress == null ? undefined : `${progress.done} / ${progress.total} measurements`}/>
            <div className="row bench-step">
                <span className="faint mono" data-testid="bench-step">{stopping ? "stopping after the current measurement…" : progress?.step ?? ""}</span>
                {last != null && (
                    <span className="muted">last: {last.kind === "ttft" ? `TTFT, ${last.tokens}-token prompt` : `TPOT over ${last.tokens} tokens`} · <b>{formatMs(last.ms)}</b></span>
                )}
            </div>
        </section>
    );
}
