/**
 * Replies: send a message, regenerate the last reply, edit a message and reply again, stop a reply. One reply at a
 * time per conversation, taken atomically before anything is read or written (HostContext's `reserveReply`); each
 * uses the conversation's own settings (system prompt, sampling) and is bound to the conversation it was sent for.
 */
import {randomUUID} from "node:crypto";
import type {ChatMessage} from "../../contract/ipc.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import type {HostClient, HostContext, ReplyRequest, ReplySlot, RequestHandlers} from "../HostContext.js";
import {replySettings} from "./replySettings.js";

type ChatRequestName = "chat.send" | "chat.regenerate" | "chat.edit" | "chat.stop";

export function chatRequests(host: HostContext): RequestHandlers<ChatRequestName> {
    /**
     * Holds the conversation's reply slot while `prepare` reads and writes it, then starts the reply it returns;
     * resolves with what `prepare` gave along with it (the user message it saved).
     */
    const reply = async <Saved>(client: HostClient, conversationId: string, streamId: string,
        prepare: () => Promise<{request: ReplyRequest; saved: Saved}>): Promise<Saved> => {
        const slot: ReplySlot = host.reserveReply(conversationId, streamId);
        try {
            const {request, saved} = await prepare();
            host.startStream(client, slot, request);
            return saved;
        } catch (error) {
            slot.release();
            throw error;
        }
    };

    return {
        "chat.send": async (arg, client) => {
            const {conversationId, text} = arg;
            return await reply(client, conversationId, arg.streamId, async () => {
                const conversation = await host.store.get(conversationId);
                host.requireModel();
                const history = conversation.messages.map(({role, text: turn}) => ({role, text: turn}));
                const saved: ChatMessage = {id: randomUUID(), role: "user", text, createdAt: Date.now()};
                await host.store.append(conversationId, saved);
                return {request: {history, message: text, ...replySettings(conversation.settings, arg)}, saved};
            });
        },
        "chat.edit": async (arg, client) => {
            const {conversationId, text} = arg;
            return await reply(client, conversationId, arg.streamId, async () => {
                host.requireModel();
                const kept = await host.store.truncateBefore(conversationId, arg.messageId);
                const history = kept.messages.map(({role, text: turn}) => ({role, text: turn}));
                const saved: ChatMessage = {id: randomUUID(), role: "user", text, createdAt: Date.now()};
                await host.store.append(conversationId, saved);
                return {request: {history, message: text, ...replySettings(kept.settings, {})}, saved};
            });
        },
        "chat.regenerate": async (arg, client) => {
            const {conversationId} = arg;
            await reply(client, conversationId, arg.streamId, async () => {
                host.requireModel();
                const conversation = await host.store.dropLastAssistant(conversationId);
                const lastUser = conversation.messages.at(-1);
                if (lastUser?.role !== "user")
                    throw new TensorwiseError("bad-request", "there is no message to reply to");
                const history = conversation.messages.slice(0, -1).map(({role, text}) => ({role, text}));
                return {request: {history, message: lastUser.text, ...replySettings(conversation.settings, arg)}, saved: undefined};
            });
        },
        "chat.stop": async (arg) => {
            await host.streams.get(arg.streamId)?.stop();
        }
    };
}
