/**
 * Replies: send a message, regenerate the last reply, edit a message and reply again, stop a reply. One reply at a
 * time per conversation; each uses the conversation's own settings (system prompt, sampling).
 */
import {randomUUID} from "node:crypto";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {checkConversationFree as checkFree, type HostContext, type RequestHandlers} from "../HostContext.js";
import {replySettings} from "../replySettings.js";

type ChatRequestName = "chat.send" | "chat.regenerate" | "chat.edit" | "chat.stop";

export function chatRequests(host: HostContext): RequestHandlers<ChatRequestName> {
    const checkConversationFree = (conversationId: string): void => checkFree(host, conversationId);
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
                streamId, conversationId, history, message: text, ...replySettings(conversation.settings, arg)
            });
        },
        "chat.edit": async (arg, client) => {
            const {conversationId, text} = arg;
            const streamId = checkNewStream(arg.streamId);
            checkConversationFree(conversationId);
            host.requireModel();
            const kept = await host.store.truncateBefore(conversationId, arg.messageId);
            const history = kept.messages.map(({role, text: turn}) => ({role, text: turn}));
            await host.store.append(conversationId, {id: randomUUID(), role: "user", text, createdAt: Date.now()});
            host.startStream(client, {streamId, conversationId, history, message: text, ...replySettings(kept.settings, {})});
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
                streamId, conversationId, history, message: lastUser.text, ...replySettings(conversation.settings, arg)
            });
        },
        "chat.stop": async (arg) => {
            await host.streams.get(arg.streamId)?.stop();
        }
    };
}
