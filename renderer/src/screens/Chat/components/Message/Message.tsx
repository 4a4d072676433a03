import type {ChatMessage} from "../../../../../../electron/contract/ipc";
import {Markdown} from "../../../../components/Markdown/Markdown";
import {formatMs, formatRate, tokensPerSecond} from "../../../../format/format";
import type {LiveStream} from "../../../../stores/chatStore";
import "./Message.css";

export function Message({message, onRegenerate}: {message: ChatMessage; onRegenerate?: () => void}) {
    const timing = message.timing;
    return (
        <article className={`message ${message.role}`} data-testid={`message-${message.role}`} data-stopped={message.stopped ?? ""}>
            <div className="message-role">{message.role === "user" ? "You" : "Model"}</div>
            <div className="message-body">
                {message.role === "user" ? <div className="message-plain">{message.text}</div> : <Markdown text={message.text}/>}
                {message.role === "assistant" && message.text === "" && <div className="faint">(no text)</div>}
            </div>
            {message.role === "assistant" && (
                <footer className="message-meta">
                    {timing != null && (
                        <span className="message-timing" data-testid="message-timing"
                            data-ttft={timing.ttftMs} data-tpot={timing.tpotMs ?? ""}>
                            <span title="time to first token (engine clock)">TTFT <b>{formatMs(timing.ttftMs)}</b></span>
                            <span title="time per output token after the first">TPOT <b>{formatMs(timing.tpotMs)}</b></span>
                            <span><b>{formatRate(tokensPerSecond(timing.tpotMs))}</b></span>
                            <span>{timing.generatedTokens} tokens · prompt {timing.promptTokens}</span>
                        </span>
                    )}
                    {message.stopped === "user" && <span className="pill" data-testid="stopped-user">stopped</span>}
                    {message.stopped === "crash" && <span className="pill tone-danger" data-testid="stopped-crash">cut off: engine stopped</span>}
                    {onRegenerate != null && <button className="button ghost small" data-testid="regenerate" onClick={onRegenerate}>↻ Regenerate</button>}
                </footer>
            )}
        </article>
    );
}

/** The reply being streamed, with the engine's clock and token count so far. */
export function StreamingMessage({stream}: {stream: LiveStream}) {
    return (
        <article className="message assistant streaming" data-testid="message-streaming" data-tokens={stream.tokens}>
            <div className="message-role">Model</div>
            <div className="message-body">
                {stream.text === "" ? <div className="typing"><span/><span/><span/></div> : <Markdown text={stream.text}/>}
            </div>
            <footer className="message-meta">
                <span className="message-timing">
                    <span>{stream.tokens} tokens</span>
                    <span>{formatMs(stream.elapsedMs)}</span>
                </span>
            </footer>
        </article>
    );
}
