/** Replies: send a message, regenerate the last reply, stop a reply. One reply at a time per conversation. */
import {randomUUID} from "node:crypto";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import type {HostContext, RequestHandlers} from "../HostContext.js";

type ChatRequestName = "chat.send" | "chat.regenerate" | "chat.stop";

export function chatRequests(host: HostContext): RequestHandlers<ChatRequestName> {
    /** A second send would interleave its messages with the running reply. */
    const checkConversationFree = (conversationId: string): void => {
        for (const stream of host.streams.values())
            if (stream.conversationId === conversationId)
                throw new TensorwiseError("busy", "this conversation is still replying: stop the reply or wait for it to finish");
    };
    const checkNewStream = (streamId: string): string => {
        if (host.streams.has(streamId))
            throw new TensorwiseError("bad-request", `stream ${streamId} is already running`);
        return streamId;
    };

    return {
        "chat.send": async (arg, client) => {
            const {conversationId, text} = arg;
            const streamId = checkNewStream(arg.streamId);
            checkConversationFree(conversationId);
            const conversation = await host.store.get(conversationId);
            host.requireModel();
            const history = conversation.messages.map(({role, text: turn}) => ({role, text: turn}));
            await host.store.append(conversationId, {id: randomUUID(), role: "user", text, createdAt: Date.now()});
            host.startStream(client, {
                streamId, conversationId, history, message: text, maxTokens: arg.maxTokens, temperature: arg.temperature
            });
        },
        "chat.regenerate": async (arg, client) => {
            const {conversationId} = arg;
            const streamId = checkNewStream(arg.streamId);
            checkConversationFree(conversationId);
            host.requireModel();
            const conversation = await host.store.dropLastAssistant(conversationId);
            const lastUser = conversation.messages.at(-1);
            if (lastUser?.role !== "user")
                throw new TensorwiseError("bad-request", "there is no message to reply to");
            const history = conversation.messages.slice(0, -1).map(({role, text}) => ({role, text}));
            host.startStream(client, {
                streamId, conversationId, history, message: lastUser.text, maxTokens: arg.maxTokens, temperature: arg.temperature
            });
        },
        "chat.stop": async (arg) => {
            await host.streams.get(arg.streamId)?.stop();
        }
    };
}
