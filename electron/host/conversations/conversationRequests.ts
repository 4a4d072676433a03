/**
 * Conversations on disk: list, read, create, rename, delete (stopping a reply that is still writing to it), change
 * their settings, delete one message (not while replying), export one as a file, import one, search them all.
 */
import {checkConversationFree, type HostContext, type RequestHandlers} from "../HostContext.js";
import {exportConversation} from "./exportConversation.js";
import {importConversation} from "./importConversation.js";

type ConversationRequestName =
    | "conversations.list" | "conversations.notices" | "conversations.get" | "conversations.create" | "conversations.delete" | "conversations.rename"
    | "conversations.setSettings" | "conversations.deleteMessage" | "conversations.export" | "conversations.import"
    | "conversations.search";

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
        },
        "conversations.export": async (arg) => exportConversation(await host.store.get(arg.id), arg.format),
        // checked whole before anything is written: a refused file stores nothing
        "conversations.import": async (arg) => await host.store.importConversation(importConversation(arg.text)),
        "conversations.search": async (arg) => host.store.search(arg.query)
    };
}
