/**
 * OpenAI-compatible request bodies (`/v1/chat/completions`, `/v1/completions`) checked field by field against the one
 * bounds table (`electron/contract/limits.ts`). Fields a local model cannot honour (`n` > 1, tools, images) are refused
 * with a sentence rather than ignored; fields that only tune OpenAI's service (`user`, `store`…) are ignored.
 */
import {checkLimit, TEXT_LIMITS, type LimitName} from "../contract/limits.js";
import {OpenAiError} from "./OpenAiError.js";

/** One chat message, its content flattened to text. */
export type ChatMessage = {role: "system" | "user" | "assistant"; text: string};

/** What both endpoints share: sampling, stopping and streaming. */
export type SamplingRequest = {
    /** The `model` field as sent (echoed back); the server always answers with its one loaded model. */
    model: string | null;
    /** `max_tokens` (or `max_completion_tokens`); `undefined` when not sent: the rest of the context. */
    maxTokens: number | undefined;
    temperature: number;
    topP: number | undefined;
    topK: number | undefined;
    seed: number | undefined;
    stop: string[];
    stream: boolean;
    /** `stream_options.include_usage`: a last chunk with `usage` (and an empty `choices`). */
    includeUsage: boolean;
};

export type ChatCompletionRequest = SamplingRequest & {kind: "chat"; messages: ChatMessage[]};
export type CompletionRequest = SamplingRequest & {kind: "completion"; prompt: string};
export type GenerationRequest = ChatCompletionRequest | CompletionRequest;

/** OpenAI's default temperature. */
const DEFAULT_TEMPERATURE = 1;

type Body = Record<string, unknown>;

/** A `/v1/chat/completions` body. */
export function parseChatCompletionRequest(body: unknown): ChatCompletionRequest {
    const object = asObject(body);
    const messages = object.messages;
    if (!Array.isArray(messages) || messages.length === 0)
        throw OpenAiError.badRequest("`messages` must be a non-empty array of {role, content} objects.", "messages");
    const count = checkLimit("chatMessages", messages.length);
    if (!count.ok)
        throw OpenAiError.badRequest(`\`messages\`: ${count.message}`, "messages");
    const parsed = messages.map((message, index) => parseMessage(message, index));
    if (parsed.at(-1)?.role !== "user")
        throw OpenAiError.badRequest("The last message must have the role \"user\" (this server answers the user's latest message).", "messages");
    if (object.tools != null && !(Array.isArray(object.tools) && object.tools.length === 0))
        throw OpenAiError.badRequest("`tools` are not supported by this server: send the request without them.", "tools");
    return {kind: "chat", messages: parsed, ...parseSampling(object)};
}

/** A `/v1/completions` body (one prompt string). */
export function parseCompletionRequest(body: unknown): CompletionRequest {
    const object = asObject(body);
    let prompt = object.prompt;
    if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === "string")
        prompt = prompt[0];
    if (typeof prompt !== "string" || prompt === "")
        throw OpenAiError.badRequest("`prompt` must be one non-empty string.", "prompt");
    if (prompt.length > TEXT_LIMITS.message)
        throw OpenAiError.badRequest(`\`prompt\` is longer than ${TEXT_LIMITS.message} characters.`, "prompt");
    if (object.suffix != null)
        throw OpenAiError.badRequest("`suffix` (fill-in-the-middle) is not supported by this server.", "suffix");
    return {kind: "completion", prompt, ...parseSampling(object)};
}

function asObject(body: unknown): Body {
    if (typeof body !== "object" || body == null || Array.isArray(body))
        throw OpenAiError.badRequest("The request body must be a JSON object.");
    return body as Body;
}

function parseMessage(message: unknown, index: number): ChatMessage {
    const param = `messages[${index}]`;
    if (typeof message !== "object" || message == null)
        throw OpenAiError.badRequest(`${param} must be an object with "role" and "content".`, param);
    const {role, content} = message as Body;
    const mapped = role === "system" || role === "developer" ? "system" : role === "user" || role === "assistant" ? role : null;
    if (mapped == null)
        throw OpenAiError.badRequest(`${param}.role must be "system", "developer", "user" or "assistant" (got ${JSON.stringify(String(role).slice(0, 20))}).`, `${param}.role`);
    const text = contentText(content, `${param}.content`);
    if (text.length > TEXT_LIMITS.message)
        throw OpenAiError.badRequest(`${param}.content is longer than ${TEXT_LIMITS.message} characters.`, `${param}.content`);
    return {role: mapped, text};
}

/** A string, or an array of `{type: "text", text}` parts joined. */
function contentText(content: unknown, param: string): string {
    if (typeof content === "string")
        return content;
    if (Array.isArray(content)) {
        const texts = content.map((part: unknown) => {
            if (typeof part === "object" && part != null && (part as Body).type === "text" && typeof (part as Body).text === "string")
                return (part as Body).text as string;
            throw OpenAiError.badRequest(`${param} may only hold text parts ({"type": "text", "text": "…"}): this model reads text only.`, param);
        });
        return texts.join("");
    }
    throw OpenAiError.badRequest(`${param} must be a string or an array of text parts.`, param);
}

function parseSampling(object: Body): SamplingRequest {
    if (object.n != null && object.n !== 1)
        throw OpenAiError.badRequest("`n` must be 1: this server returns one choice per request.", "n");
    if (object.stream != null && typeof object.stream !== "boolean")
        throw OpenAiError.badRequest("`stream` must be true or false.", "stream");
    const streamOptions = object.stream_options;
    if (streamOptions != null && (typeof streamOptions !== "object" || Array.isArray(streamOptions)))
        throw OpenAiError.badRequest("`stream_options` must be an object.", "stream_options");
    const includeUsage = (streamOptions as Body | null)?.include_usage;
    if (includeUsage != null && typeof includeUsage !== "boolean")
        throw OpenAiError.badRequest("`stream_options.include_usage` must be true or false.", "stream_options.include_usage");
    const model = object.model;
    if (model != null && (typeof model !== "string" || model.length > TEXT_LIMITS.path))
        throw OpenAiError.badRequest("`model` must be a string.", "model");
    const maxTokens = object.max_completion_tokens ?? object.max_tokens;
    return {
        model: typeof model === "string" ? model : null,
        maxTokens: optionalNumber(object, object.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens", "maxTokens", maxTokens),
        temperature: optionalNumber(object, "temperature", "temperature") ?? DEFAULT_TEMPERATURE,
        topP: optionalNumber(object, "top_p", "topP"),
        topK: optionalNumber(object, "top_k", "topK"),
        seed: optionalNumber(object, "seed", "seed"),
        stop: parseStop(object.stop),
        stream: object.stream === true,
        includeUsage: includeUsage === true
    };
}

/** `object[field]` within `limit`'s range, or `undefined` when absent or `null`. */
function optionalNumber(object: Body, field: string, limit: LimitName, value: unknown = object[field]): number | undefined {
    if (value == null)
        return undefined;
    const checked = checkLimit(limit, value);
    if (!checked.ok)
        throw OpenAiError.badRequest(`\`${field}\`: ${checked.message}`, field);
    return checked.value;
}

function parseStop(stop: unknown): string[] {
    if (stop == null)
        return [];
    const list = typeof stop === "string" ? [stop] : stop;
    if (!Array.isArray(list) || !list.every((item): item is string => typeof item === "string" && item !== ""))
        throw OpenAiError.badRequest("`stop` must be a non-empty string or an array of them.", "stop");
    const count = checkLimit("stopCount", list.length);
    if (!count.ok)
        throw OpenAiError.badRequest(`\`stop\`: ${count.message}`, "stop");
    if (list.some((item) => item.length > TEXT_LIMITS.stopString))
        throw OpenAiError.badRequest(`Each \`stop\` sequence must be at most ${TEXT_LIMITS.stopString} characters.`, "stop");
    return list;
}
