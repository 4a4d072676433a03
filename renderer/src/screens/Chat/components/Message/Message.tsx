import {useState} from "react";
import type {ChatMessage, ToolDecision} from "../../../../../../electron/contract/ipc";
import {ReplyText} from "../../../../components/ReplyText/ReplyText";
import {ProgressBar} from "../../../../components/ProgressBar/ProgressBar";
import {formatMs, formatRate, tokensPerSecond} from "../../../../format/format";
import {formatTimeLeft, predictedPromptTokensPerSecond, streamPromptTimeLeftMs, streamWaitedMs} from "../../../../format/promptTimeLeft";
import {useNow} from "../../../../hooks/useNow";
import type {LiveStream} from "../../../../stores/chatStore";
import {usePlanStore} from "../../../../stores/planStore";
import {ContextNote} from "../ContextNote/ContextNote";
import {ToolCalls} from "../ToolCalls/ToolCalls";
import type {SpeculativeKind} from "../../../../../../electron/contract/speculative";
import "./Message.css";

const speculativeNames: Record<SpeculativeKind, string> = {ngram: "n-gram lookup", draft: "a draft model", mtp: "the model's MTP head"};

/** What a user can do with a message; an absent action is not offered (e.g. while the conversation replies). */
export type MessageActions = {
    onRegenerate?: () => void;
    onDelete?: () => void;
    /** User messages: replaces the text, drops what came after, and asks again. */
    onEditResend?: (text: string) => void;
    /** A reply's round whose calls wait for the user (its reply still running): Approve, Always for this tool, Deny. */
    onDecide?: (callId: string, decision: ToolDecision) => void;
    /** The reply this round belongs to is still running (a call left waiting by an ended reply never ran). */
    live?: boolean;
};

/** Why the reply ended, in words; `null` for a reply that simply finished. */
function stopLabel(message: ChatMessage): {text: string; tone: "" | "warn" | "danger"; testId: string} | null {
    if (message.stopped === "crash")
        return {text: "cut off: engine stopped", tone: "danger", testId: "stopped-crash"};
    if (message.stopped === "user" || message.stopReason === "stopped")
        return {text: "Stopped", tone: "", testId: "stopped-user"};
    if (message.stopReason === "max-tokens")
        return {text: "max tokens reached", tone: "warn", testId: "stop-max-tokens"};
    if (message.stopReason === "stop-string")
        return {text: "stop string", tone: "", testId: "stop-string"};
    return null;
}

export function Message({message, actions}: {message: ChatMessage; actions: MessageActions}) {
    const [editing, setEditing] = useState<string | null>(null);
    const [copied, setCopied] = useState(false);
    const timing = message.timing;
    const stop = stopLabel(message);
    const copy = () => {
        void navigator.clipboard?.writeText(message.text).then(() => {
            setCopied(true);
            setTimeout(() => setCopied(false), 1200);
        });
    };
    return (
        <article className={`message ${message.role}`} data-testid={`message-${message.role}`} data-stopped={message.stopped ?? ""}
            data-stop-reason={message.stopReason ?? ""}>
            <div className="message-role">{message.role === "user" ? "You" : "Model"}</div>
            <div className="message-body">
                {editing != null ? (
                    <form className="message-edit" onSubmit={(event) => {
                        event.preventDefault();
                        if (editing.trim() === "")
                            return;
                        actions.onEditResend?.(editing);
                        setEditing(null);
                    }}>
                        <textarea className="message-edit-input" data-testid="edit-input" autoFocus value={editing} rows={Math.min(10, editing.split("\n").length + 1)}
                            onChange={(event) => setEditing(event.target.value)}
                            onKeyDown={(event) => {
                                if (event.key === "Escape") {
                                    event.stopPropagation();
                                    setEditing(null);
                                } else if (event.key === "Enter" && !event.shiftKey) {
                                    event.preventDefault();
                                    event.currentTarget.form?.requestSubmit();
                                }
                            }}/>
                        <div className="row">
                            <button className="button primary small" type="submit" data-testid="edit-send" disabled={editing.trim() === ""}>Send</button>
                            <button className="button ghost small" type="button" onClick={() => setEditing(null)}>Cancel</button>
                        </div>
                    </form>
                ) : message.role === "user" ? <div className="message-plain">{message.text}</div> : <ReplyText text={message.text}/>}
                {message.role === "assistant" && message.text === "" && (message.toolCalls?.length ?? 0) === 0 && <div className="faint">(no text)</div>}
                {message.toolCalls != null && message.toolCalls.length > 0 && (
                    <ToolCalls calls={message.toolCalls} live={actions.live === true} onDecide={actions.onDecide}/>
                )}
            </div>
            {message.role === "assistant" && message.leftOutMessages != null && message.leftOutMessages > 0 && (
                <div className="message-context-note"><ContextNote leftOut={message.leftOutMessages}/></div>
            )}
            <footer className="message-meta">
                {message.role === "assistant" && timing != null && (
                    <span className="message-timing" data-testid="message-timing"
                        data-ttft={timing.ttftMs} data-tpot={timing.tpotMs ?? ""}>
                        <span title="time to first token: prompt processing and the first decode step (engine clock)">TTFT <b>{formatMs(timing.ttftMs)}</b></span>
                        <span title="time per output token after the first">TPOT <b>{formatMs(timing.tpotMs)}</b></span>
                        <span><b>{formatRate(tokensPerSecond(timing.tpotMs))}</b></span>
                        <span>{timing.generatedTokens} tokens</span>
                        {message.prompt != null && (
                            <span data-testid="message-prompt" title="prompt tokens of this reply (template, history and message); reused ones were already in the KV cache">
                                prompt {message.prompt.tokens}{message.prompt.reused > 0 ? ` (${message.prompt.reused} reused)` : ""}
                            </span>
                        )}
                        {message.toolTokens != null && (
                            <span data-testid="message-tool-tokens" title="prompt tokens taken by the tool definitions this chat offers the model (part of the prompt, counted when the context is full)">
                                tools {message.toolTokens}
                            </span>
                        )}
                        {message.speculative != null && message.speculative.drafted > 0 && (
                            <span data-testid="message-speculative" title={`speculative decoding (${speculativeNames[message.speculative.kind]}): draft tokens the model accepted, of those proposed`}>
                                drafts {message.speculative.accepted} / {message.speculative.drafted} accepted
                            </span>
                        )}
                        {(message.restore?.path === "swap" || message.restore?.path === "recompute") && (
                            <span data-testid="message-restore" title="the server gave this conversation's sequence to another; its KV cache came back this way, inside the TTFT">
                                KV {message.restore.path === "swap" ? "swapped in" : "recomputed"} {formatMs(message.restore.ms)}
                            </span>
                        )}
                    </span>
                )}
                {message.role === "assistant" && message.context != null && (
                    <span className="message-context" data-testid="message-context" title="tokens in the context after this reply, of the context size">
                        <span className="message-context-track">
                            <span className="message-context-fill" style={{width: `${Math.min(100, 100 * message.context.usedTokens / message.context.size)}%`}}/>
                        </span>
                        context {message.context.usedTokens} / {message.context.size}
                    </span>
                )}
                {stop != null && <span className={`pill ${stop.tone !== "" ? `tone-${stop.tone}` : ""}`} data-testid={stop.testId}>{stop.text}</span>}
                {editing == null && (
                    <span className="message-actions">
                        <button className="button ghost small" data-testid="copy" title="Copy the text" onClick={copy}>{copied ? "Copied" : "Copy"}</button>
                        {message.role === "user" && actions.onEditResend != null && (
                            <button className="button ghost small" data-testid="edit" title="Edit this message and ask again" onClick={() => setEditing(message.text)}>Edit</button>
                        )}
                        {actions.onRegenerate != null && <button className="button ghost small" data-testid="regenerate" onClick={actions.onRegenerate}>↻ Regenerate</button>}
                        {actions.onDelete != null && (
                            <button className="button ghost small" data-testid="delete-message" title="Delete this message" onClick={actions.onDelete}>Delete</button>
                        )}
                    </span>
                )}
            </footer>
        </article>
    );
}

/**
 * The reply being streamed: prompt processing progress until the first token, with the time waited since the Send
 * counting up and the time left counting down between the engine's events (see promptTimeLeft.ts), then the text,
 * engine clock and count.
 */
export function StreamingMessage({stream}: {stream: LiveStream}) {
    const prompt = stream.prompt;
    const processing = stream.tokens === 0 && stream.text === "";
    const prediction = usePlanStore((state) => state.loaded?.prediction ?? null);
    const now = useNow(processing && !stream.stopping);
    const timeLeftMs = stream.stopping ? null : streamPromptTimeLeftMs(stream, now, predictedPromptTokensPerSecond(prediction));
    const timeLeft = formatTimeLeft(timeLeftMs);
    return (
        <article className="message assistant streaming" data-testid="message-streaming" data-tokens={stream.tokens}
            data-phase={processing ? "prompt" : "reply"}>
            <div className="message-role">Model</div>
            <div className="message-body">
                {processing
                    ? prompt != null && prompt.total > 0
                        ? <ProgressBar testId="prompt-progress" value={prompt.evaluated / prompt.total}
                            label={stream.stopping ? "Stopping…" : "Processing the prompt"}
                            detail={<>
                                {`${prompt.evaluated} / ${prompt.total} tokens${prompt.reused > 0 ? ` (${prompt.reused} reused)` : ""}`}
                                {timeLeft != null && <> · <span data-testid="prompt-time-left" data-ms={Math.round(timeLeftMs!)}>{timeLeft}</span></>}
                            </>}/>
                        : <div className="typing" title={stream.stopping ? "stopping" : "waiting for the engine"}><span/><span/><span/></div>
                    : <ReplyText text={stream.text}/>}
            </div>
            <footer className="message-meta">
                <span className="message-timing">
                    {processing
                        ? <>
                            <span>{stream.stopping ? "Stopping…" : prompt == null ? "Starting…" : "Processing the prompt…"}</span>
                            <span data-testid="reply-waited">{formatMs(streamWaitedMs(stream, now))}</span>
                        </>
                        : <>
                            <span>{stream.tokens} tokens</span>
                            <span>{formatMs(stream.elapsedMs)}</span>
                            {stream.stopping && <span>Stopping…</span>}
                        </>}
                </span>
            </footer>
        </article>
    );
}
