import {SERVER_STARTUP_STEP_TEXT, type ServerStartup} from "../../../../../../electron/contract/server";
import {ProgressBar} from "../../../../components/ProgressBar/ProgressBar";
import "./ServerStartupProgress.css";

/** A step's words with a capital first letter, as a label. */
function capitalized(text: string): string {
    return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * What a server start is doing: the current step with its progress (a bar that moves where the step's length is
 * known, the KV measurement; an indeterminate one otherwise) and the steps already done.
 */
export function ServerStartupProgress({startup}: {startup: ServerStartup}) {
    const done = startup.step == null ? startup.steps : startup.steps.slice(0, -1);
    return (
        <div className="stack-tight server-startup" data-testid="server-startup" data-step={startup.step ?? ""}>
            <ProgressBar testId="server-startup-progress" value={startup.fraction}
                label={startup.step == null ? "Waiting for the engine" : capitalized(SERVER_STARTUP_STEP_TEXT[startup.step])}/>
            {done.length > 0 && (
                <ol className="server-startup-done faint" data-testid="server-startup-done">
                    {done.map((step) => <li key={step}>✓ {SERVER_STARTUP_STEP_TEXT[step]}</li>)}
                </ol>
            )}
        </div>
    );
}
