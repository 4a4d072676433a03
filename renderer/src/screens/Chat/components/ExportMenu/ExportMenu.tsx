import {useState} from "react";
import {exportConversation} from "../../../../actions/conversationFileActions";
import {errorMessage} from "../../../../transport/Transport";
import "./ExportMenu.css";

/** Export buttons of the conversation shown: Markdown to read, JSON to import again. */
export function ExportMenu({conversationId}: {conversationId: string}) {
    const [error, setError] = useState<string | null>(null);
    const run = (format: "markdown" | "json") => {
        setError(null);
        exportConversation(conversationId, format).catch((failure: unknown) => setError(errorMessage(failure)));
    };
    return (
        <div className="export-menu" role="group" aria-label="Export this conversation">
            <span className="faint">Export</span>
            <button className="button small" data-testid="export-markdown" title="Download as Markdown, to read" onClick={() => run("markdown")}>Markdown</button>
            <button className="button small" data-testid="export-json" title="Download as JSON, to import again" onClick={() => run("json")}>JSON</button>
            {error != null && <span className="export-error" role="alert" data-testid="export-error">{error}</span>}
        </div>
    );
}
