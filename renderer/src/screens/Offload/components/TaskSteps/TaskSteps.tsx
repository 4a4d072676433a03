import type {TaskProgress} from "../../../../../../electron/contract/ipc";
import {ProgressBar} from "../../../../components/ProgressBar/ProgressBar";

const labels: Record<string, string> = {inspect: "Inspect", profile: "Profile this machine", plan: "Plan placement", load: "Load weights"};

/** The steps of a running placement job, each with its own progress bar; earlier steps show as done. */
export function TaskSteps({steps, running}: {steps: TaskProgress[]; running: boolean}) {
    return (
        <section className="panel stack" data-testid="task-steps">
            {steps.length === 0 && <ProgressBar value={null} label="Starting…"/>}
            {steps.map((step, index) => {
                const done = index < steps.length - 1 || !running;
                return (
                    <ProgressBar key={step.step} testId={`step-${step.step}`} label={labels[step.step] ?? step.step}
                        value={done ? 1 : step.progress} detail={step.detail}/>
                );
            })}
        </section>
    );
}
