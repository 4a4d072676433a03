import {useChatStore} from "../stores/chatStore";
import {getTransport} from "../transport/getTransport";
import {errorMessage} from "../transport/Transport";
import {newId} from "./ids";

export async function refreshConversations(): Promise<void> {
    useChatStore.getState().setSummaries(await getTransport().request("conversations.list"));
}

export async function openConversation(id: string): Promise<void> {
    const store = useChatStore.getState();
    store.setActive(id);
    store.putConversation(await getTransport().request("conversations.get", {id}));
}

/** Re-reads a conversation from the host without changing which one is shown. */
export async function reloadConversation(id: string): Promise<void> {
    useChatStore.getState().putConversation(await getTransport().request("conversations.get", {id}));
}

export async function newConversation(): Promise<string> {
    const conversation = await getTransport().request("conversations.create", {});
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
    store.appendLocal(conversationId, {id: newId("local"), role: "user", text: trimmed, createdAt: Date.now()});
    store.startStream(streamId, conversationId);
    try {
        await getTransport().request("chat.send", {conversationId, text: trimmed, streamId, ...store.options});
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
        await getTransport().request("chat.regenerate", {conversationId, streamId, ...store.options});
    } catch (error) {
        useChatStore.getState().finishStream(streamId, null);
        useChatStore.getState().setError(conversationId, errorMessage(error));
        await reloadConversation(conversationId);
    }
}

export async function stopStream(streamId: string): Promise<void> {
    await getTransport().request("chat.stop", {streamId});
}
