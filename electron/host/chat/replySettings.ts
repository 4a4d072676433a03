import type {ChatSettings} from "../../contract/ipc.js";
import type {EngineChatRequest} from "../../contract/engineProtocol.js";

/** What a reply is generated with, besides its history and message. */
export type ReplySettings = Omit<EngineChatRequest, "streamId" | "history" | "message">;

/** Every field of {@link ChatSettings}: what checkRequest.ts accepts and what a reply takes from a conversation. */
export const CHAT_SETTING_KEYS = [
    "systemPrompt", "maxTokens", "temperature", "topK", "topP", "minP", "repeatPenalty", "seed", "stopStrings", "contextOverflow"
] as const satisfies readonly (keyof ChatSettings)[];

/**
 * A reply's generation settings: the conversation's own (kept with it), with a request's `maxTokens` / `temperature`
 * on top; unset and empty fields are left out so the engine's defaults apply. Only {@link CHAT_SETTING_KEYS} are
 * taken: nothing in a conversation's settings can name the stream or conversation a reply belongs to.
 */
export function replySettings(settings: ChatSettings | undefined, request: {maxTokens?: number; temperature?: number}): ReplySettings {
    const merged: ChatSettings = {
        ...settings,
        ...(request.maxTokens != null && {maxTokens: request.maxTokens}),
        ...(request.temperature != null && {temperature: request.temperature})
    };
    return Object.fromEntries(CHAT_SETTING_KEYS.map((key) => [key, merged[key]]).filter(([, value]) =>
        value != null && value !== "" && !(Array.isArray(value) && value.length === 0))) as ReplySettings;
}
