import type {ChatSettings} from "../../../electron/contract/ipc";
import {useChatStore} from "../stores/chatStore";
import {getTransport} from "../transport/getTransport";
import {errorMessage} from "../transport/Transport";
import {TensorwiseError} from "../../../electron/contract/TensorwiseError";
import {newId} from "./ids";
import {markOpening, unfinishedOpening} from "./openingGuard";

/** The conversation list and what the host says about the saved files (shown above the list). */
export async function refreshConversations(): Promise<void> {
    const [summaries, notices] = await Promise.all([
        getTransport().request("conversations.list"), getTransport().request("conversations.notices")
    ]);
    useChatStore.getState().setSummaries(summaries);
    useChatStore.getState().setNotices(notices);
}

export async function openConversation(id: string): Promise<void> {
    const store = useChatStore.getState();
    markOpening(id);
    if (store.notOpened === id)
        store.setNotOpened(null);
    store.setActive(id);
    try {
        store.putConversation(await getTransport().request("conversations.get", {id}));
    } catch (error) {
        // a file damaged since the list was read: the host moved it aside, and its notice (shown above the list) says why
        if (error instanceof TensorwiseError && error.code === "damaged-conversation") {
            useChatStore.getState().removeConversation(id);
            await refreshConversations();
            return;
        }
        throw error;
    }
}

/**
 * What the app does at start: opens the newest conversation, unless the page stopped while showing it last time
 * (openingGuard.ts); that one is left closed, and the list says why.
 */
export async function openNewestConversation(): Promise<void> {
    const newest = useChatStore.getState().summaries[0];
    if (newest == null)
        return;
    if (newest.id === unfinishedOpening()) {
        useChatStore.getState().setNotOpened(newest.id);
        return;
    }
    await openConversation(newest.id);
}

/** Re-reads a conversation from the host without changing which one is shown. */
export async function reloadConversation(id: string): Promise<void> {
    useChatStore.getState().putConversation(await getTransport().request("conversations.get", {id}));
}

/**
 * A new conversation with the settings new conversations start with (chatStore's `options`: the defaults, or those
 * set for the next new chat) — never those of the conversation shown before.
 */
export async function newConversation(): Promise<string> {
    const conversation = await getTransport().request("conversations.create", {settings: useChatStore.getState().options});
    useChatStore.getState().putConversation(conversation);
    useChatStore.getState().setActive(conversation.id);
    await refreshConversations();
    return conversation.id;
}

export async function deleteConversation(id: string): Promise<void> {
    await getTransport().request("conversations.delete", {id});
    useChatStore.getState().removeConversation(id);
    await refreshConversations();
}

export async function renameConversation(id: string, title: string): Promise<void> {
    await getTransport().request("conversations.rename", {id, title});
    await Promise.all([refreshConversations(), openConversation(id)]);
}

/** Sends a message in the active conversation (creating one if none), streaming the reply. */
export async function sendMessage(text: string): Promise<void> {
    const trimmed = text.trim();
    if (trimmed === "")
        return;
    const conversationId = useChatStore.getState().activeId ?? await newConversation();
    const store = useChatStore.getState();
    const streamId = newId("stream");
    store.setError(conversationId, null);
    const localId = newId("local");
    store.appendLocal(conversationId, {id: localId, role: "user", text: trimmed, createdAt: Date.now()});
    store.startStream(streamId, conversationId);
    try {
        await settingsSaved(conversationId);
        const saved = await getTransport().request("chat.send", {conversationId, text: trimmed, streamId});
        useChatStore.getState().confirmLocal(conversationId, localId, saved);
    } catch (error) {
        useChatStore.getState().finishStream(streamId, null);
        useChatStore.getState().setError(conversationId, errorMessage(error));
        await reloadConversation(conversationId);
    }
    void refreshConversations();
}

export async function regenerate(conversationId: string): Promise<void> {
    const store = useChatStore.getState();
    const streamId = newId("stream");
    store.setError(conversationId, null);
    store.dropLastAssistant(conversationId);
    store.startStream(streamId, conversationId);
    try {
        await settingsSaved(conversationId);
        await getTransport().request("chat.regenerate", {conversationId, streamId});
    } catch (error) {
        useChatStore.getState().finishStream(streamId, null);
        useChatStore.getState().setError(conversationId, errorMessage(error));
        await reloadConversation(conversationId);
    }
}

/** Asks the engine to stop a reply; the reply shows "stopping" until the host confirms it. */
export async function stopStream(streamId: string): Promise<void> {
    useChatStore.getState().markStopping(streamId);
    await getTransport().request("chat.stop", {streamId});
}

/** Stops the reply of the shown conversation, if one is streaming (Esc). */
export function stopActiveStream(): boolean {
    const {activeId, streams} = useChatStore.getState();
    const stream = Object.values(streams).find((candidate) => candidate.conversationId === activeId && !candidate.stopping);
    if (stream == null)
        return false;
    void stopStream(stream.streamId);
    return true;
}

/**
 * Saves the settings of conversation `id` (or, with none shown, those new conversations start with). Returns the
 * host's reason when it refuses them (a value out of bounds); the conversation then keeps its saved settings.
 */
/**
 * Settings saves still on their way to the host, per conversation. A reply waits for them, so it is generated with
 * the settings the user sees (a Send right after changing max tokens would otherwise race the save).
 */
const pendingSaves = new Map<string, Promise<unknown>>();

/** Resolves once every settings save of `conversationId` sent so far has landed (or failed). */
function settingsSaved(conversationId: string): Promise<unknown> {
    return pendingSaves.get(conversationId) ?? Promise.resolve();
}

export async function saveSettings(id: string | null, settings: ChatSettings): Promise<string | null> {
    const before = id == null ? undefined : useChatStore.getState().conversations[id]?.settings;
    // shown at once, so typing in a settings field never waits for the host
    useChatStore.getState().setSettings(id, settings);
    if (id == null)
        return null;
    // saves of one conversation go out in order, so the last change is the one that stays
    const save = settingsSaved(id).then(() => getTransport().request("conversations.setSettings", {id, settings}));
    pendingSaves.set(id, save.catch(() => {}));
    try {
        await save;
        return null;
    } catch (error) {
        useChatStore.getState().setSettings(id, before ?? {});
        return errorMessage(error);
    } finally {
        if (pendingSaves.get(id) === save)
            pendingSaves.delete(id);
    }
}

export async function deleteMessage(conversationId: string, messageId: string): Promise<void> {
    const store = useChatStore.getState();
    store.setError(conversationId, null);
    try {
        store.putConversation(await getTransport().request("conversations.deleteMessage", {id: conversationId, messageId}));
    } catch (error) {
        useChatStore.getState().setError(conversationId, errorMessage(error));
    }
    void refreshConversations();
}

/** Replaces user message `messageId` with `text`, drops what came after it, and streams a new reply. */
export async function editAndResend(conversationId: string, messageId: string, text: string): Promise<void> {
    const trimmed = text.trim();
    const store = useChatStore.getState();
    const conversation = store.conversations[conversationId];
    if (trimmed === "" || conversation == null)
        return;
    const at = conversation.messages.findIndex((message) => message.id === messageId);
    const streamId = newId("stream");
    store.setError(conversationId, null);
    const localId = newId("local");
    store.putConversation({...conversation, messages: [
        ...conversation.messages.slice(0, Math.max(0, at)),
        {id: localId, role: "user", text: trimmed, createdAt: Date.now()}
    ]});
    store.startStream(streamId, conversationId);
    try {
        await settingsSaved(conversationId);
        const saved = await getTransport().request("chat.edit", {conversationId, messageId, text: trimmed, streamId});
        useChatStore.getState().confirmLocal(conversationId, localId, saved);
    } catch (error) {
        useChatStore.getState().finishStream(streamId, null);
        useChatStore.getState().setError(conversationId, errorMessage(error));
        await reloadConversation(conversationId);
    }
    void refreshConversations();
}
