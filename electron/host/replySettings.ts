import type {ChatSettings} from "../contract/ipc.js";
import type {EngineChatRequest} from "../engine/service/engineProtocol.js";

/** What a reply is generated with, besides its history and message. */
export type ReplySettings = Omit<EngineChatRequest, "streamId" | "history" | "message">;

/**
 * A reply's generation settings: the conversation's own (kept with it), with a request's `maxTokens` / `temperature`
 * on top; unset and empty fields are left out so the engine's defaults apply.
 */
export function replySettings(settings: ChatSettings | undefined, request: {maxTokens?: number; temperature?: number}): ReplySettings {
    const merged: ChatSettings = {
        ...settings,
        ...(request.maxTokens != null && {maxTokens: request.maxTokens}),
        ...(request.temperature != null && {temperature: request.temperature})
    };
    return Object.fromEntries(Object.entries(merged).filter(([, value]) =>
        value != null && value !== "" && !(Array.isArray(value) && value.length === 0))) as ReplySettings;
}
