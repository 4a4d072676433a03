import {useRef} from "react";
import {regenerate} from "../../actions/chatActions";
import {useChatStore} from "../../stores/chatStore";
import {useEngineStore} from "../../stores/engineStore";
import {usePlanStore} from "../../stores/planStore";
import {useUiStore} from "../../stores/uiStore";
import {Composer} from "./components/Composer/Composer";
import {ConversationList} from "./components/ConversationList/ConversationList";
import {Message, StreamingMessage} from "./components/Message/Message";
import {useFollowTail} from "./hooks/useFollowTail";
import "./Chat.css";

export function Chat() {
    const activeId = useChatStore((state) => state.activeId);
    const conversation = useChatStore((state) => activeId == null ? null : state.conversations[activeId] ?? null);
    const stream = useChatStore((state) => Object.values(state.streams).find((candidate) => candidate.conversationId === activeId) ?? null);
    const summaryTitle = useChatStore((state) => state.summaries.find((summary) => summary.id === activeId)?.title);
    const error = useChatStore((state) => activeId == null ? null : state.errors[activeId] ?? null);
    const loaded = usePlanStore((state) => state.loaded);
    const engine = useEngineStore((state) => state.engine);
    const show = useUiStore((state) => state.show);
    const transcript = useRef<HTMLDivElement>(null);

    const messages = conversation?.messages ?? [];
    const streamText = stream?.text.length ?? 0;
    const {onScroll} = useFollowTail(transcript, `${messages.length}:${streamText}:${error ?? ""}`, activeId);

    const lastAssistant = messages.at(-1)?.role === "assistant" ? messages.at(-1) : undefined;
    return (
        <div className="chat">
            <ConversationList/>
            <section className="chat-main">
                <header className="chat-header">
                    <h1 data-testid="conversation-title">{summaryTitle ?? conversation?.title ?? "New chat"}</h1>
                    <span className="pill" data-testid="chat-model">
                        <span className={`dot ${loaded != null ? "on" : ""}`}/>
                        {loaded != null ? `${loaded.card.name ?? loaded.card.fileName} · ${loaded.placement.strategy}` : "no model loaded"}
                    </span>
                </header>
                <div className="chat-messages" data-testid="messages" ref={transcript} onScroll={onScroll}>
                    {loaded == null && engine.state !== "busy" && engine.state !== "crashed" && (
                        <div className="notice chat-empty">
                            <h2>No model loaded</h2>
                            <p>Drop a .gguf anywhere on this window, or open one on the Model screen, then press Auto-offload.</p>
                            <button className="button primary" onClick={() => show("model")}>Open a model</button>
                        </div>
                    )}
                    {messages.map((message) => (
                        <Message key={message.id} message={message}
                            onRegenerate={message === lastAssistant && stream == null && loaded != null && activeId != null
                                ? () => void regenerate(activeId) : undefined}/>
                    ))}
                    {stream != null && <StreamingMessage stream={stream}/>}
                    {error != null && <div className="error-box chat-error" data-testid="chat-error">{error}</div>}
                </div>
                <Composer stream={stream} disabled={loaded == null}/>
            </section>
        </div>
    );
}
