import type {ContractError} from "../../../../electron/contract/ipc";
import {humanError} from "../../../../electron/contract/TensorwiseError";
import "./ErrorNotice.css";

export type ErrorNoticeProps = {
    /** What failed, in the user's words ("broken.gguf cannot be opened."). */
    title: string;
    error: ContractError;
    /** The user's own file, when the engine saw the app's copy of it (a web-mode upload). */
    file?: {copyPath: string; name: string};
    testId?: string;
};

/** An error as a person reads it: what went wrong and what to do, with the technical detail one click away. */
export function ErrorNotice({title, error, file, testId}: ErrorNoticeProps) {
    const human = humanError(error, file);
    return (
        <div className="error-box error-notice" role="alert" data-testid={testId} data-code={human.code}>
            <strong className="error-notice-title">{title}</strong>{" "}
            <span data-testid="error-sentence">{human.sentence}</span>
            {human.fix != null && <>{" "}<span className="error-notice-fix" data-testid="error-fix">{human.fix}</span></>}
            {human.detail != null && (
                <details className="error-notice-details" data-testid="error-details">
                    <summary>Technical detail</summary>
                    <pre>{human.detail}</pre>
                </details>
            )}
        </div>
    );
}
