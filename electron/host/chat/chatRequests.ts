/**
 * Replies: send a message, regenerate the last reply, edit a message and reply again, stop a reply, decide a tool call.
 * One reply at a time per conversation, taken atomically before anything is read or written (HostContext's
 * `reserveReply`); each uses the conversation's own settings (system prompt, sampling, tools) and is bound to the
 * conversation it was sent for. A conversation's tools are resolved before its message is saved: the MCP servers they
 * need are started then, and one that cannot start refuses the send in a sentence.
 */
import {randomUUID} from "node:crypto";
import type {ChatMessage, ChatSettings} from "../../contract/ipc.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import type {HostClient, HostContext, ReplyRequest, ReplySlot, RequestHandlers} from "../HostContext.js";
import {chatTurnOf} from "../tools/toolCallText.js";
import type {ReplyTools} from "./ChatStream.js";
import {replySettings} from "./replySettings.js";

type ChatRequestName = "chat.send" | "chat.regenerate" | "chat.edit" | "chat.stop" | "chat.decideTool";

export function chatRequests(host: HostContext): RequestHandlers<ChatRequestName> {
    /**
     * Holds the conversation's reply slot while `prepare` reads and writes it, then starts the reply it returns;
     * resolves with what `prepare` gave along with it (the user message it saved).
     */
    const reply = async <Saved>(client: HostClient, conversationId: string, streamId: string,
        prepare: (stopped: AbortSignal) => Promise<{request: ReplyRequest; saved: Saved}>): Promise<Saved> => {
        const slot: ReplySlot = host.reserveReply(conversationId, streamId);
        try {
            const {request, saved} = await prepare(slot.stopped);
            host.startStream(client, slot, request);
            return saved;
        } catch (error) {
            slot.release();
            throw error;
        }
    };

    /**
     * The conversation's tools, resolved (their servers started); none when none are on or the choice is "none". A Stop
     * while a server starts (`stopped`) refuses the reply at once, before anything is saved; the start goes on.
     */
    const toolsOf = async (settings: ChatSettings | undefined, stopped: AbortSignal): Promise<{tools?: ReplyTools}> => {
        const tools = settings?.tools;
        if (tools == null || tools.on.length === 0 || tools.choice === "none")
            return {};
        const resolved = await host.tools.resolve(tools, stopped);
        return {tools: {resolved, choice: tools.choice}};
    };

    return {
        "chat.send": async (arg, client) => {
            const {conversationId, text} = arg;
            return await reply(client, conversationId, arg.streamId, async (stopped) => {
                const conversation = await host.store.get(conversationId);
                host.requireModel();
                const tools = await toolsOf(conversation.settings, stopped);
                const history = conversation.messages.map(chatTurnOf);
                const saved: ChatMessage = {id: randomUUID(), role: "user", text, createdAt: Date.now()};
                await host.store.append(conversationId, saved);
                return {request: {history, message: text, ...replySettings(conversation.settings, arg), ...tools}, saved};
            });
        },
        "chat.edit": async (arg, client) => {
            const {conversationId, text} = arg;
            return await reply(client, conversationId, arg.streamId, async (stopped) => {
                host.requireModel();
                const tools = await toolsOf((await host.store.get(conversationId)).settings, stopped);
                const kept = await host.store.truncateBefore(conversationId, arg.messageId);
                const history = kept.messages.map(chatTurnOf);
                const saved: ChatMessage = {id: randomUUID(), role: "user", text, createdAt: Date.now()};
                await host.store.append(conversationId, saved);
                return {request: {history, message: text, ...replySettings(kept.settings, {}), ...tools}, saved};
            });
        },
        "chat.regenerate": async (arg, client) => {
            const {conversationId} = arg;
            await reply(client, conversationId, arg.streamId, async (stopped) => {
                host.requireModel();
                const tools = await toolsOf((await host.store.get(conversationId)).settings, stopped);
                const conversation = await host.store.dropLastAssistant(conversationId);
                const lastUser = conversation.messages.at(-1);
                if (lastUser?.role !== "user")
                    throw new TensorwiseError("bad-request", "there is no message to reply to");
                const history = conversation.messages.slice(0, -1).map(chatTurnOf);
                return {request: {history, message: lastUser.text, ...replySettings(conversation.settings, arg), ...tools}, saved: undefined};
            });
        },
        "chat.stop": async (arg) => {
            // a reply still being prepared (its tools' servers starting) is refused instead of started
            if (!host.stopPreparing(arg.streamId))
                await host.streams.get(arg.streamId)?.stop();
        },
        "chat.decideTool": async (arg, client) => {
            const stream = host.streams.get(arg.streamId);
            // only the window that sent the reply answers its calls
            if (stream == null || stream.clientId !== client.id)
                throw new TensorwiseError("bad-request", "no reply of this window is waiting with that stream id");
            stream.decide(arg.callId, arg.decision);
        }
    };
}
