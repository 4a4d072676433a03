import {useEffect, useRef, useState} from "react";
import {deleteMessage, editAndResend, regenerate, stopActiveStream} from "../../actions/chatActions";
import {useChatStore} from "../../stores/chatStore";
import {useEngineStore} from "../../stores/engineStore";
import {usePlanStore} from "../../stores/planStore";
import {useUiStore} from "../../stores/uiStore";
import {ChatSettingsPanel} from "./components/ChatSettingsPanel/ChatSettingsPanel";
import {Composer} from "./components/Composer/Composer";
import {ConversationList} from "./components/ConversationList/ConversationList";
import {Message, StreamingMessage} from "./components/Message/Message";
import {useFollowTail} from "./hooks/useFollowTail";
import "./Chat.css";
import {makeDemoModel} from "../../actions/hubActions";
import {ExportMenu} from "./components/ExportMenu/ExportMenu";
import {markShown} from "../../actions/openingGuard";
import {ContextNote} from "./components/ContextNote/ContextNote";
import {decideTool} from "../../actions/toolActions";

export function Chat() {
    const activeId = useChatStore((state) => state.activeId);
    const conversation = useChatStore((state) => activeId == null ? null : state.conversations[activeId] ?? null);
    const stream = useChatStore((state) => Object.values(state.streams).find((candidate) => candidate.conversationId === activeId) ?? null);
    const summaryTitle = useChatStore((state) => state.summaries.find((summary) => summary.id === activeId)?.title);
    const error = useChatStore((state) => activeId == null ? null : state.errors[activeId] ?? null);
    const defaults = useChatStore((state) => state.options);
    const loaded = usePlanStore((state) => state.loaded);
    const engine = useEngineStore((state) => state.engine);
    const show = useUiStore((state) => state.show);
    const transcript = useRef<HTMLDivElement>(null);
    const [settingsOpen, setSettingsOpen] = useState(false);
    const composerInput = useRef<HTMLTextAreaElement>(null);

    const messages = conversation?.messages ?? [];
    const settings = conversation?.settings ?? (activeId == null ? defaults : {});
    const streamText = stream?.text.length ?? 0;
    const {onScroll} = useFollowTail(transcript, `${messages.length}:${streamText}:${stream?.prompt?.evaluated ?? ""}:${error?.message ?? ""}`, activeId);

    // its messages are on the page: the conversation may open by itself at the next start again (openingGuard.ts)
    useEffect(() => {
        if (activeId != null && conversation != null)
            markShown(activeId);
    }, [activeId, conversation]);

    // the message box has the focus on entering Chat and whenever another conversation is shown (chosen or created)
    useEffect(() => {
        composerInput.current?.focus();
    }, [activeId]);

    // Esc, wherever the focus is: closes the settings panel if it is open (the focus back to the message box),
    // otherwise stops the reply being streamed here; one thing per press
    useEffect(() => {
        const onKey = (event: KeyboardEvent) => {
            if (event.key !== "Escape" || event.defaultPrevented)
                return;
            if (settingsOpen) {
                event.preventDefault();
                // focus first: a settings field being edited saves on blur while it is still there
                composerInput.current?.focus();
                setSettingsOpen(false);
            } else if (stopActiveStream())
                event.preventDefault();
        };
        window.addEventListener("keydown", onKey);
        return () => window.removeEventListener("keydown", onKey);
    }, [settingsOpen]);

    const idle = stream == null && activeId != null;
    const lastAssistant = messages.at(-1)?.role === "assistant" ? messages.at(-1) : undefined;
    // a reply that failed before its first text left no message: the user's message is the last one, and can be
    // answered again (after a "conversation too long", once the context is larger or the chat may be shortened)
    const retry = error != null && idle && loaded != null && messages.at(-1)?.role === "user" ? () => void regenerate(activeId) : null;
    return (
        <div className="chat">
            <ConversationList/>
            <section className="chat-main">
                <header className="chat-header">
                    <h1 data-testid="conversation-title">{summaryTitle ?? conversation?.title ?? "New chat"}</h1>
                    {activeId != null && <ExportMenu conversationId={activeId}/>}
                    <span className="pill" data-testid="chat-model">
                        <span className={`dot ${loaded != null ? "on" : ""}`}/>
                        {loaded != null ? `${loaded.card.name ?? loaded.card.fileName} · ${loaded.placement.strategy}` : "no model loaded"}
                    </span>
                </header>
                <div className="chat-body">
                    <div className="chat-messages" data-testid="messages" ref={transcript} onScroll={onScroll}>
                        {loaded == null && engine.state !== "busy" && engine.state !== "crashed" && (
                            <div className="notice chat-empty">
                                <h2>No model loaded</h2>
                                <p>Get one from Hugging Face (each quant's speed on this machine shown before the download), or drop a .gguf anywhere on this window, then press Auto-offload.</p>
                                <div className="row">
                                    <button className="button primary" data-testid="chat-get-model" onClick={() => show("get-model")}>Get a model</button>
                                    <button className="button" onClick={() => show("model")}>Open a file</button>
                                    <button className="button" data-testid="chat-demo-model" title="A tiny model with random weights: it answers gibberish, but every screen works with it"
                                        onClick={() => void makeDemoModel()}>Make a demo model (random weights)</button>
                                </div>
                            </div>
                        )}
                        {messages.map((message) => (
                            <Message key={message.id} message={message} actions={{
                                onRegenerate: message === lastAssistant && idle && loaded != null ? () => void regenerate(activeId) : undefined,
                                onDelete: idle ? () => void deleteMessage(activeId, message.id) : undefined,
                                onEditResend: idle && loaded != null && message.role === "user"
                                    ? (text) => void editAndResend(activeId, message.id, text) : undefined,
                                // only the running reply's last round can wait for a decision
                                live: stream != null && message === messages.at(-1),
                                onDecide: stream != null && !stream.stopping && message === messages.at(-1)
                                    ? (callId, decision) => void decideTool(activeId!, stream.streamId, callId, decision) : undefined
                            }}/>
                        ))}
                        {stream != null && stream.awaiting == null && <StreamingMessage stream={stream}/>}
                        {error != null && (
                            <div className="error-box chat-error" data-testid="chat-error" role="alert">
                                {error.message}
                                {(retry != null || error.code === "conversation-too-long") && (
                                    <div className="row chat-error-actions">
                                        {retry != null && (
                                            <button className="button small" data-testid="chat-retry" title="Ask for a reply to your last message again"
                                                onClick={retry}>↻ Retry</button>
                                        )}
                                        {error.code === "conversation-too-long" && <ContextNote leftOut={null}/>}
                                    </div>
                                )}
                            </div>
                        )}
                    </div>
                    {settingsOpen && (
                        <ChatSettingsPanel key={activeId ?? "new"} conversationId={activeId} settings={settings} onClose={() => setSettingsOpen(false)}/>
                    )}
                </div>
                <Composer inputRef={composerInput} stream={stream} disabled={loaded == null} conversationId={activeId} settings={settings}
                    onOpenSettings={() => setSettingsOpen(!settingsOpen)}/>
            </section>
        </div>
    );
}
