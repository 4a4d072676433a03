/**
 * Conversations on disk: list, read, create, rename, delete (stopping a reply that is still writing to it), change
 * their settings, delete one message (not while replying).
 */
import {checkConversationFree, type HostContext, type RequestHandlers} from "../HostContext.js";

type ConversationRequestName =
    | "conversations.list" | "conversations.notices" | "conversations.get" | "conversations.create" | "conversations.delete" | "conversations.rename"
    | "conversations.setSettings" | "conversations.deleteMessage";

export function conversationRequests(host: HostContext): RequestHandlers<ConversationRequestName> {
    return {
        "conversations.list": async () => host.store.list(),
        "conversations.notices": async () => host.store.notices(),
        "conversations.get": async (arg) => await host.store.get(arg.id),
        "conversations.create": async (arg) => await host.store.create(arg.title, arg.settings),
        "conversations.delete": async ({id}) => {
            for (const stream of host.streams.values())
                if (stream.conversationId === id)
                    await stream.stop();
            await host.store.delete(id);
        },
        "conversations.rename": async (arg) => await host.store.rename(arg.id, arg.title),
        "conversations.setSettings": async (arg) => await host.store.setSettings(arg.id, arg.settings),
        "conversations.deleteMessage": async (arg) => {
            checkConversationFree(host, arg.id);
            return await host.store.deleteMessage(arg.id, arg.messageId);
        }
    };
}
