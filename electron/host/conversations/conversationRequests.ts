/** Conversations on disk: list, read, create, rename, delete (stopping a reply that is still writing to it). */
import type {HostContext, RequestHandlers} from "../HostContext.js";

type ConversationRequestName =
    | "conversations.list" | "conversations.get" | "conversations.create" | "conversations.delete" | "conversations.rename";

export function conversationRequests(host: HostContext): RequestHandlers<ConversationRequestName> {
    return {
        "conversations.list": async () => host.store.list(),
        "conversations.get": async (arg) => await host.store.get(arg.id),
        "conversations.create": async (arg) => await host.store.create(arg.title),
        "conversations.delete": async ({id}) => {
            for (const stream of host.streams.values())
                if (stream.conversationId === id)
                    await stream.stop();
            await host.store.delete(id);
        },
        "conversations.rename": async (arg) => await host.store.rename(arg.id, arg.title)
    };
}
