import {create} from "zustand";
import type {ChatMessage, Conversation, ConversationSummary} from "../../../electron/contract/ipc";

/** A reply being streamed: text so far, engine token count and engine clock. */
export type LiveStream = {streamId: string; conversationId: string; messageId: string | null; text: string; tokens: number; elapsedMs: number};

export type ChatStore = {
    summaries: ConversationSummary[];
    activeId: string | null;
    conversations: Record<string, Conversation>;
    streams: Record<string, LiveStream>;
    /** Last error of a send/stream, per conversation. */
    errors: Record<string, string>;
    options: {maxTokens: number; temperature: number};
    setSummaries(summaries: ConversationSummary[]): void;
    setActive(id: string | null): void;
    putConversation(conversation: Conversation): void;
    removeConversation(id: string): void;
    /** The user's message shown at once, before the host confirms it. */
    appendLocal(conversationId: string, message: ChatMessage): void;
    /** For a regenerate: hides the reply being replaced. */
    dropLastAssistant(conversationId: string): void;
    startStream(streamId: string, conversationId: string): void;
    appendDelta(delta: {streamId: string; messageId: string; text: string; tokens: number; elapsedMs: number}): void;
    finishStream(streamId: string, message: ChatMessage | null): void;
    setError(conversationId: string, error: string | null): void;
    setOptions(change: Partial<ChatStore["options"]>): void;
};

export const useChatStore = create<ChatStore>((set) => ({
    summaries: [],
    activeId: null,
    conversations: {},
    streams: {},
    errors: {},
    options: {maxTokens: 256, temperature: 0.7},
    setSummaries: (summaries) => set({summaries}),
    setActive: (activeId) => set({activeId}),
    putConversation: (conversation) => set((state) => ({conversations: {...state.conversations, [conversation.id]: conversation}})),
    removeConversation: (id) => set((state) => {
        const {[id]: _removed, ...conversations} = state.conversations;
        return {
            conversations,
            summaries: state.summaries.filter((summary) => summary.id !== id),
            activeId: state.activeId === id ? null : state.activeId
        };
    }),
    appendLocal: (conversationId, message) => set((state) => {
        const conversation = state.conversations[conversationId];
        if (conversation == null)
            return {};
        return {conversations: {...state.conversations, [conversationId]: {...conversation, messages: [...conversation.messages, message]}}};
    }),
    dropLastAssistant: (conversationId) => set((state) => {
        const conversation = state.conversations[conversationId];
        if (conversation == null || conversation.messages.at(-1)?.role !== "assistant")
            return {};
        return {conversations: {...state.conversations, [conversationId]: {...conversation, messages: conversation.messages.slice(0, -1)}}};
    }),
    startStream: (streamId, conversationId) => set((state) => ({
        streams: {...state.streams, [streamId]: {streamId, conversationId, messageId: null, text: "", tokens: 0, elapsedMs: 0}}
    })),
    appendDelta: (delta) => set((state) => {
        const stream = state.streams[delta.streamId];
        if (stream == null)
            return {};
        return {streams: {...state.streams, [delta.streamId]: {
            ...stream, messageId: delta.messageId, text: stream.text + delta.text, tokens: delta.tokens, elapsedMs: delta.elapsedMs
        }}};
    }),
    finishStream: (streamId, message) => set((state) => {
        const stream = state.streams[streamId];
        const {[streamId]: _done, ...streams} = state.streams;
        if (stream == null || message == null)
            return {streams};
        const conversation = state.conversations[stream.conversationId];
        if (conversation == null)
            return {streams};
        const messages = conversation.messages.filter((existing) => existing.id !== message.id);
        return {streams, conversations: {...state.conversations, [stream.conversationId]: {...conversation, messages: [...messages, message]}}};
    }),
    setError: (conversationId, error) => set((state) => {
        const {[conversationId]: _old, ...errors} = state.errors;
        return {errors: error == null ? errors : {...errors, [conversationId]: error}};
    }),
    setOptions: (change) => set((state) => ({options: {...state.options, ...change}}))
}));
