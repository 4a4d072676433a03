import type {ReactNode} from "react";
import "./ProgressBar.css";

/** A progress bar; `value` in 0..1, or `null` for an indeterminate one. */
export function ProgressBar({value, label, detail, testId}: {value: number | null; label?: string; detail?: ReactNode; testId?: string}) {
    const percent = value == null ? null : Math.round(Math.min(1, Math.max(0, value)) * 100);
    return (
        <div className="progress" data-testid={testId} data-progress={percent ?? "indeterminate"}>
            {(label != null || detail != null) && (
                <div className="progress-labels">
                    <span>{label}</span>
                    <span className="muted">{detail}{percent != null ? ` · ${percent}%` : ""}</span>
                </div>
            )}
            <div className={`progress-track ${percent == null ? "indeterminate" : ""}`} role="progressbar"
                aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent ?? undefined}>
                <div className="progress-fill" style={percent == null ? undefined : {width: `${percent}%`}}/>
            </div>
        </div>
    );
}
