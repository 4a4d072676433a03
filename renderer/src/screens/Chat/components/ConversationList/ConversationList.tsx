import {useState} from "react";
import {deleteConversation, newConversation, openConversation, renameConversation} from "../../../../actions/chatActions";
import {formatRelativeTime} from "../../../../format/format";
import {useChatStore} from "../../../../stores/chatStore";
import "./ConversationList.css";

export function ConversationList() {
    const summaries = useChatStore((state) => state.summaries);
    const activeId = useChatStore((state) => state.activeId);
    const streams = useChatStore((state) => state.streams);
    const notices = useChatStore((state) => state.notices);
    const [editing, setEditing] = useState<{id: string; title: string} | null>(null);
    const streaming = new Set(Object.values(streams).map((stream) => stream.conversationId));
    return (
        <aside className="conversations">
            <button className="button primary conversations-new" data-testid="new-conversation" onClick={() => void newConversation()}>
                + New chat
            </button>
            {notices.map((notice) => (
                <div key={notice.message} className="error-box conversations-notice" role="alert" data-testid="conversation-notice"
                    data-code={notice.code}>{notice.message}</div>
            ))}
            <ul className="conversations-list" data-testid="conversation-list">
                {summaries.length === 0 && <li className="faint conversations-empty">No conversations yet</li>}
                {summaries.map((summary) => (
                    <li key={summary.id}>
                        <div className={`conversation-item ${summary.id === activeId ? "active" : ""}`} data-testid="conversation-item"
                            role="button" tabIndex={0}
                            onClick={() => void openConversation(summary.id)}
                            onKeyDown={(event) => event.key === "Enter" && void openConversation(summary.id)}>
                            {editing?.id === summary.id ? (
                                <form onSubmit={(event) => {
                                    event.preventDefault();
                                    void renameConversation(summary.id, editing.title);
                                    setEditing(null);
                                }}>
                                    <input className="input conversation-rename" autoFocus value={editing.title} data-testid="rename-input"
                                        onClick={(event) => event.stopPropagation()}
                                        onChange={(event) => setEditing({id: summary.id, title: event.target.value})}
                                        onBlur={() => setEditing(null)}
                                        onKeyDown={(event) => event.key === "Escape" && setEditing(null)}/>
                                </form>
                            ) : (
                                <div className="conversation-title" title="Double-click to rename"
                                    onDoubleClick={(event) => {
                                        event.stopPropagation();
                                        setEditing({id: summary.id, title: summary.title});
                                    }}>
                                    {streaming.has(summary.id) && <span className="conversation-live" title="replying"/>}
                                    {summary.title}
                                </div>
                            )}
                            <div className="conversation-meta faint">
                                {formatRelativeTime(summary.updatedAt)} · {summary.messageCount} messages
                            </div>
                            <button className="conversation-delete" title="Delete conversation" aria-label="Delete conversation"
                                onClick={(event) => {
                                    event.stopPropagation();
                                    if (confirm(`Delete "${summary.title}"?`))
                                        void deleteConversation(summary.id);
                                }}>×</button>
                        </div>
                    </li>
                ))}
            </ul>
        </aside>
    );
}
