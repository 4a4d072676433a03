import {create} from "zustand";
import type {ChatMessage, ChatSettings, Conversation, ConversationNotice, ConversationSummary, PromptProgress} from "../../../electron/contract/ipc";
import type {ErrorCode} from "../../../electron/contract/errorCodes";

/**
 * A reply being streamed: text so far, engine token count and engine clock; `sentAt` when the request went out
 * (`performance.now()`, what the wait shown before the first token counts from: see streamWaitedMs in
 * promptTimeLeft.ts); `prompt` is the engine's prompt processing progress (before the first token) and `promptAt` when
 * it arrived (`performance.now()`, so the time left keeps moving between events), `stopping` is set from the user's
 * stop until the engine confirms it.
 */
export type LiveStream = {
    streamId: string; conversationId: string; messageId: string | null; text: string; tokens: number; elapsedMs: number;
    sentAt: number; prompt: PromptProgress | null; promptAt: number | null; stopping: boolean;
    /**
     * A reply with tools between rounds: its calls wait for the user (`approval`) or run (`tool`); the round's message,
     * with its calls, is in the conversation, and nothing streams until the next round. `null` while a round streams.
     */
    awaiting: "approval" | "tool" | null;
};

/** What a reply whose last round is `message` waits for, by its calls' states. */
export function awaitingOf(message: ChatMessage): LiveStream["awaiting"] {
    const calls = message.toolCalls ?? [];
    return calls.some((call) => call.state === "pending") ? "approval" : calls.some((call) => call.state === "running") ? "tool" : null;
}

/** What a new conversation starts with, until the user changes its settings. */
export const DEFAULT_CHAT_SETTINGS: ChatSettings = {maxTokens: 256, temperature: 0.7};

/** A send or reply that failed: the host's sentence, and its code where it had one. */
export type ChatError = {message: string; code?: ErrorCode};

export type ChatStore = {
    summaries: ConversationSummary[];
    /** What the host says about the saved conversations: not being saved, or a file it could not read and moved aside. */
    notices: ConversationNotice[];
    activeId: string | null;
    /** The newest conversation when the app did not open it by itself: the page stopped while showing it (openingGuard.ts). */
    notOpened: string | null;
    conversations: Record<string, Conversation>;
    streams: Record<string, LiveStream>;
    /** Last error of a send/stream, per conversation, with its code where the host gave one. */
    errors: Record<string, ChatError>;
    /**
     * Settings a new conversation starts with: DEFAULT_CHAT_SETTINGS, unless the user set them in the settings panel
     * while no conversation was shown (it says "For the next new chat"). A conversation's own settings never leak here.
     */
    options: ChatSettings;
    setSummaries(summaries: ConversationSummary[]): void;
    setNotices(notices: ConversationNotice[]): void;
    setActive(id: string | null): void;
    setNotOpened(id: string | null): void;
    putConversation(conversation: Conversation): void;
    removeConversation(id: string): void;
    /** The user's message shown at once, before the host confirms it. */
    appendLocal(conversationId: string, message: ChatMessage): void;
    /**
     * Swaps the message shown at once (`localId`) for the host's saved copy, so that later edits and deletes name a
     * message the host knows. Nothing happens when the local one is gone (the conversation was re-read meanwhile).
     */
    confirmLocal(conversationId: string, localId: string, saved: ChatMessage): void;
    /** For a regenerate: hides the reply being replaced. */
    dropLastAssistant(conversationId: string): void;
    /** A reply about to be requested: call it just before sending, as its wait counts from here. */
    startStream(streamId: string, conversationId: string): void;
    appendDelta(delta: {streamId: string; messageId: string; text: string; tokens: number; elapsedMs: number}): void;
    promptProgress(progress: {streamId: string} & PromptProgress): void;
    markStopping(streamId: string): void;
    finishStream(streamId: string, message: ChatMessage | null): void;
    /**
     * A round of reply `streamId` saved before its end (its tool calls, as they are decided and run): shown in the
     * conversation, and the stream starts over for the next round.
     */
    roundMessage(streamId: string, message: ChatMessage): void;
    setError(conversationId: string, error: string | null, code?: ErrorCode): void;
    /** Shows `settings` on conversation `id` at once (the host saves them); with `id` null, new conversations start with them. */
    setSettings(id: string | null, settings: ChatSettings): void;
    /** Removes one message from the shown conversation (after the host removed it). */
    removeMessage(conversationId: string, messageId: string): void;
};

export const useChatStore = create<ChatStore>((set) => ({
    summaries: [],
    notices: [],
    activeId: null,
    notOpened: null,
    conversations: {},
    streams: {},
    errors: {},
    options: DEFAULT_CHAT_SETTINGS,
    setSummaries: (summaries) => set({summaries}),
    setNotices: (notices) => set({notices}),
    setActive: (activeId) => set({activeId}),
    setNotOpened: (notOpened) => set({notOpened}),
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
    confirmLocal: (conversationId, localId, saved) => set((state) => {
        const conversation = state.conversations[conversationId];
        if (conversation == null || !conversation.messages.some((message) => message.id === localId))
            return {};
        const messages = conversation.messages.map((message) => message.id === localId ? saved : message);
        return {conversations: {...state.conversations, [conversationId]: {...conversation, messages}}};
    }),
    dropLastAssistant: (conversationId) => set((state) => {
        const conversation = state.conversations[conversationId];
        if (conversation == null || conversation.messages.at(-1)?.role !== "assistant")
            return {};
        // a reply with tools is one message per round: all of them go
        let kept = conversation.messages.length;
        while (kept > 0 && conversation.messages[kept - 1]!.role === "assistant")
            kept--;
        return {conversations: {...state.conversations, [conversationId]: {...conversation, messages: conversation.messages.slice(0, kept)}}};
    }),
    startStream: (streamId, conversationId) => set((state) => ({
        streams: {...state.streams, [streamId]: {streamId, conversationId, messageId: null, text: "", tokens: 0, elapsedMs: 0,
            sentAt: performance.now(), prompt: null, promptAt: null, stopping: false, awaiting: null}}
    })),
    appendDelta: (delta) => set((state) => {
        const stream = state.streams[delta.streamId];
        if (stream == null)
            return {};
        return {streams: {...state.streams, [delta.streamId]: {
            ...stream, messageId: delta.messageId, text: stream.text + delta.text, tokens: delta.tokens, elapsedMs: delta.elapsedMs
        }}};
    }),
    promptProgress: ({streamId, ...progress}) => set((state) => {
        const stream = state.streams[streamId];
        return stream == null ? {} : {streams: {...state.streams, [streamId]: {...stream, prompt: progress, promptAt: performance.now(), elapsedMs: progress.elapsedMs}}};
    }),
    markStopping: (streamId) => set((state) => {
        const stream = state.streams[streamId];
        return stream == null ? {} : {streams: {...state.streams, [streamId]: {...stream, stopping: true}}};
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
    roundMessage: (streamId, message) => set((state) => {
        const stream = state.streams[streamId];
        if (stream == null)
            return {};
        const conversation = state.conversations[stream.conversationId];
        const next: LiveStream = {...stream, messageId: null, text: "", tokens: 0, prompt: null, promptAt: null, sentAt: performance.now(), awaiting: awaitingOf(message)};
        const streams = {...state.streams, [streamId]: next};
        if (conversation == null)
            return {streams};
        const at = conversation.messages.findIndex((existing) => existing.id === message.id);
        const messages = at >= 0 ? conversation.messages.map((existing, index) => index === at ? message : existing) : [...conversation.messages, message];
        return {streams, conversations: {...state.conversations, [stream.conversationId]: {...conversation, messages}}};
    }),
    setError: (conversationId, error, code) => set((state) => {
        const {[conversationId]: _old, ...errors} = state.errors;
        return {errors: error == null ? errors : {...errors, [conversationId]: {message: error, ...(code != null && {code})}}};
    }),
    setSettings: (id, settings) => set((state) => {
        if (id == null)
            return {options: settings};
        const conversation = state.conversations[id];
        return conversation == null ? {} : {conversations: {...state.conversations, [id]: {...conversation, settings}}};
    }),
    removeMessage: (conversationId, messageId) => set((state) => {
        const conversation = state.conversations[conversationId];
        if (conversation == null)
            return {};
        const messages = conversation.messages.filter((message) => message.id !== messageId);
        return {conversations: {...state.conversations, [conversationId]: {...conversation, messages}}};
    })
}));
