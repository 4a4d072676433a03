import type {ToolCallRecord, ToolDecision, ToolResult} from "../../../../../../electron/contract/ipc";
import {TOOL_IMAGE_TYPES} from "../../../../../../electron/contract/tools";
import {formatMs} from "../../../../format/format";
import "./ToolCalls.css";

/** A call's state in words; `live`: the reply that made it is still running (a pending call of an ended reply never ran). */
function stateLabel(call: ToolCallRecord, live: boolean): {text: string; tone: "" | "warn" | "danger" | "ok"} {
    switch (call.state) {
        case "pending": return live ? {text: "waiting for your approval", tone: "warn"} : {text: "not run", tone: ""};
        case "running": return live ? {text: "running…", tone: "warn"} : {text: "not finished", tone: ""};
        case "done": return call.result?.isError === true ? {text: "the tool reported an error", tone: "danger"} : {text: "done", tone: "ok"};
        case "failed": return {text: "failed", tone: "danger"};
        case "denied": return {text: "denied", tone: ""};
        case "stopped": return {text: "stopped", tone: ""};
    }
}

/** The arguments as the model wrote them, indented when they are JSON. */
function prettyArguments(text: string): string {
    try {
        return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
        return text;
    }
}

/** A result, always as text and raster images: never markup a browser would run. */
function Result({result}: {result: ToolResult}) {
    return (
        <div className="tool-call-parts">
            {result.parts.map((part, index) => part.type === "text"
                ? <pre key={index} className="tool-call-text">{part.text}</pre>
                : part.type === "image"
                    ? (TOOL_IMAGE_TYPES as readonly string[]).includes(part.mimeType)
                        ? <img key={index} className="tool-call-image" data-testid="tool-call-image" alt="An image the tool returned" src={`data:${part.mimeType};base64,${part.data}`}/>
                        : <p key={index} className="faint">An image of type {part.mimeType} is not shown.</p>
                    : <p key={index} className="faint tool-call-note">{part.text}</p>)}
            {result.structured != null && <pre className="tool-call-text" data-testid="tool-call-structured">{result.structured}</pre>}
            {result.parts.length === 0 && result.structured == null && <p className="faint">(no content)</p>}
        </div>
    );
}

/**
 * The tool calls of one round of a reply, inline: each with its server, arguments, state, and — while its reply waits
 * for the user — Approve, Always for this tool, and Deny; its result folded once it ran, capped as the host capped it.
 */
export function ToolCalls({calls, live, onDecide}: {calls: ToolCallRecord[]; live: boolean; onDecide?: (callId: string, decision: ToolDecision) => void}) {
    return (
        <div className="tool-calls">
            {calls.map((call) => {
                const state = stateLabel(call, live);
                const waiting = call.state === "pending" && live && onDecide != null;
                return (
                    <section key={call.id} className={`tool-call state-${call.state}`} data-testid="tool-call" data-state={call.state} data-tool={call.tool}
                        aria-label={`Tool call ${call.tool}`}>
                        <header className="tool-call-head">
                            <span className="tool-call-name">{call.tool}</span>
                            {call.server !== "" && <span className="faint">{call.server}</span>}
                            <span className={`pill ${state.tone !== "" ? `tone-${state.tone}` : ""}`} data-testid="tool-call-state">{state.text}</span>
                            {call.approval === "always" && <span className="faint" title="You chose Always for this tool">always allowed</span>}
                            {call.ms != null && <span className="faint">{formatMs(call.ms)}</span>}
                        </header>
                        <pre className="tool-call-args" data-testid="tool-call-args">{prettyArguments(call.arguments)}</pre>
                        {waiting && (
                            <div className="row tool-call-decide">
                                <button className="button primary small" data-testid="tool-approve" onClick={() => onDecide(call.id, "approve")}>Approve</button>
                                <button className="button small" data-testid="tool-always" title={`Run every later call of ${call.tool} without asking (undo on the Tools screen)`}
                                    onClick={() => onDecide(call.id, "always")}>Always for this tool</button>
                                <button className="button ghost small" data-testid="tool-deny" onClick={() => onDecide(call.id, "deny")}>Deny</button>
                            </div>
                        )}
                        {call.state === "failed" && call.error != null && <div className="error-box tool-call-error" data-testid="tool-call-error">{call.error}</div>}
                        {call.result != null && (
                            <details className="tool-call-result" data-testid="tool-call-result">
                                <summary>Result{call.result.capped != null && <span className="pill tone-warn" data-testid="tool-call-capped">cut: {call.result.capped}</span>}</summary>
                                <Result result={call.result}/>
                            </details>
                        )}
                    </section>
                );
            })}
        </div>
    );
}
