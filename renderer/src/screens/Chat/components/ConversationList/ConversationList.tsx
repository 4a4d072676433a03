import {useEffect, useRef, useState} from "react";
import {SEARCH_QUERY_MAX_CHARS, type SearchMatch} from "../../../../../../electron/contract/conversationFile";
import {deleteConversation, newConversation, openConversation, renameConversation} from "../../../../actions/chatActions";
import {importConversationFile, SEARCH_DEBOUNCE_MS, searchConversations} from "../../../../actions/conversationFileActions";
import {formatRelativeTime} from "../../../../format/format";
import {useChatStore} from "../../../../stores/chatStore";
import {useConversationListStore} from "../../../../stores/conversationListStore";
import "./ConversationList.css";

/** Where a search matched, under the conversation's title: the message's words around the match, the match marked. */
function MatchLine({match}: {match: SearchMatch}) {
    if (match.in === "title")
        return <div className="conversation-match faint" data-testid="search-match">title matches</div>;
    return (
        <div className="conversation-match" data-testid="search-match" title={`${match.before}${match.match}${match.after}`}>
            <span className="faint">{match.role === "user" ? "You: " : "Reply: "}</span>
            {match.before}<mark>{match.match}</mark>{match.after}
        </div>
    );
}

export function ConversationList() {
    const summaries = useChatStore((state) => state.summaries);
    const activeId = useChatStore((state) => state.activeId);
    const streams = useChatStore((state) => state.streams);
    const notices = useChatStore((state) => state.notices);
    const notOpened = useChatStore((state) => state.summaries.find((summary) => summary.id === state.notOpened) ?? null);
    const query = useConversationListStore((state) => state.query);
    const hits = useConversationListStore((state) => state.hits);
    const listError = useConversationListStore((state) => state.error);
    const setQuery = useConversationListStore((state) => state.setQuery);
    const fileInput = useRef<HTMLInputElement>(null);
    const [editing, setEditing] = useState<{id: string; title: string} | null>(null);
    const streaming = new Set(Object.values(streams).map((stream) => stream.conversationId));
    const searching = query.trim() !== "";
    // searched again when the typing pauses, and when the conversations change (a new message may match now)
    useEffect(() => {
        if (!searching)
            return;
        const timer = setTimeout(() => void searchConversations(query), SEARCH_DEBOUNCE_MS);
        return () => clearTimeout(timer);
    }, [query, searching, summaries]);
    const matches = new Map((hits ?? []).map((hit) => [hit.id, hit.match]));
    const shown = searching ? summaries.filter((summary) => matches.has(summary.id)) : summaries;
    return (
        <aside className="conversations">
            <div className="conversations-actions">
                <button className="button primary conversations-new" data-testid="new-conversation" onClick={() => void newConversation()}>
                    + New chat
                </button>
                <button className="button" data-testid="import-conversation" title="Import a conversation exported as JSON"
                    onClick={() => fileInput.current?.click()}>Import…</button>
                <input ref={fileInput} type="file" accept=".json,application/json" hidden data-testid="import-conversation-file"
                    onChange={(event) => {
                        const file = event.target.files?.[0];
                        event.target.value = "";
                        if (file != null)
                            void importConversationFile(file);
                    }}/>
            </div>
            <input className="input conversations-search" type="search" placeholder="Search chats" aria-label="Search conversations"
                data-testid="conversation-search" value={query} maxLength={SEARCH_QUERY_MAX_CHARS}
                onChange={(event) => setQuery(event.target.value)}
                onKeyDown={(event) => {
                    if (event.key === "Escape" && query !== "") {
                        // one thing per press: clearing the search, not also stopping a reply (Chat.tsx)
                        event.preventDefault();
                        setQuery("");
                    }
                }}/>
            {listError != null && (
                <div className="error-box conversations-notice" role="alert" data-testid="conversation-list-error">{listError}</div>
            )}
            {notices.map((notice) => (
                <div key={notice.message} className="error-box conversations-notice" role="alert" data-testid="conversation-notice"
                    data-code={notice.code}>{notice.message}</div>
            ))}
            {notOpened != null && (
                <div className="error-box conversations-notice" role="status" data-testid="conversation-not-opened">
                    “{notOpened.title}” was not opened at start: the app stopped while showing it last time. Open it from the list to try again.
                </div>
            )}
            <ul className="conversations-list" data-testid="conversation-list">
                {summaries.length === 0 && <li className="faint conversations-empty">No conversations yet</li>}
                {searching && hits != null && shown.length === 0 && summaries.length > 0 && (
                    <li className="faint conversations-empty" data-testid="search-empty">No conversation contains “{query.trim()}”</li>
                )}
                {shown.map((summary) => (
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
                            {searching && matches.get(summary.id) != null && <MatchLine match={matches.get(summary.id)!}/>}
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
