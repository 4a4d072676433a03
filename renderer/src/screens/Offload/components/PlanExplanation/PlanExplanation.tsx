import type {PlanExplanation as Explanation} from "../../../../../../electron/contract/ipc";
import "./PlanExplanation.css";

/** The planner's decisions, one sentence each (the same sentences `tensorwise plan` prints). */
export function PlanExplanation({explanation}: {explanation: Explanation}) {
    const rows: [string, string, string][] = [
        ["Placement", "placement", explanation.placement],
        ["Budget", "budget", explanation.budget],
        ["-ngl", "ngl", explanation.gpuLayers],
        ["Settings", "settings", explanation.settings],
        ["Profile", "profile", explanation.profile],
        ...(explanation.speculative != null ? [["Speculative", "speculative", explanation.speculative] as [string, string, string]] : []),
        ...(explanation.ranges != null ? [["Ranges", "ranges", explanation.ranges] as [string, string, string]] : [])
    ];
    return (
        <dl className="plan-why" data-testid="plan-why" data-profile-reused={explanation.profileReused}>
            {rows.map(([label, id, sentence]) => (
                <div key={id} className="plan-why-row">
                    <dt className="muted">{label}</dt>
                    <dd data-testid={`plan-why-${id}`}>{sentence}</dd>
                </div>
            ))}
        </dl>
    );
}
