/**
 * Anthropic Messages API bodies (`POST /v1/messages`, `/v1/messages/count_tokens`), as Claude Code and the
 * `@anthropic-ai/sdk` package send them, checked field by field against the bounds table (contract/limits.ts) and
 * turned into the server's own chat request. What a local text model cannot honour yet (tools, images, documents,
 * extended thinking…) is refused by name; `cache_control` marks (on the request or on a block) are accepted: the
 * server keeps every conversation's prefix cached anyway (ConversationKvStore.ts).
 */
import {checkLimit, TEXT_LIMITS} from "../contract/limits.js";
import {OpenAiError} from "./OpenAiError.js";
import {DEFAULT_TEMPERATURE, limitedNumber, UNSENT_SAMPLING, type ChatCompletionRequest, type ChatMessage} from "./parseGenerationRequest.js";

type Body = Record<string, unknown>;

/** Fields `/v1/messages` honours; any other is refused by name. */
const MESSAGE_FIELDS = new Set(["model", "messages", "system", "max_tokens", "stop_sequences", "temperature", "top_p", "top_k", "metadata", "stream", "cache_control"]);
/** `/v1/messages/count_tokens` takes the prompt's fields only. */
const COUNT_FIELDS = new Set(["model", "messages", "system", "cache_control"]);

/** A `/v1/messages` body as the server's chat request. */
export function parseAnthropicMessagesRequest(body: unknown): ChatCompletionRequest {
    const object = asObject(body, MESSAGE_FIELDS, "/v1/messages");
    if (object.max_tokens == null)
        throw OpenAiError.badRequest("`max_tokens` is required: the most tokens to generate.", "max_tokens");
    if (object.stream != null && typeof object.stream !== "boolean")
        throw OpenAiError.badRequest("`stream` must be true or false.", "stream");
    const metadata = object.metadata;
    if (metadata != null) {
        const userId = (metadata as Body).user_id;
        if (typeof metadata !== "object" || Array.isArray(metadata) || Object.keys(metadata).some((key) => key !== "user_id") ||
            (userId != null && (typeof userId !== "string" || userId.length > TEXT_LIMITS.path)))
            throw OpenAiError.badRequest("`metadata` may only hold `user_id`, a string.", "metadata");
    }
    const stop = object.stop_sequences;
    if (stop != null && (!Array.isArray(stop) || !stop.every((item): item is string => typeof item === "string" && item !== "" && item.length <= TEXT_LIMITS.stopString)))
        throw OpenAiError.badRequest(`\`stop_sequences\` must be a list of non-empty strings of at most ${TEXT_LIMITS.stopString} characters.`, "stop_sequences");
    const stopList = (stop as string[] | undefined) ?? [];
    const count = checkLimit("stopCount", stopList.length);
    if (!count.ok)
        throw OpenAiError.badRequest(`\`stop_sequences\`: ${count.message}`, "stop_sequences");
    return {
        kind: "chat",
        messages: promptMessages(object),
        tools: null,
        model: modelName(object),
        maxTokens: limitedNumber(object, "max_tokens", "maxTokens"),
        temperature: limitedNumber(object, "temperature", "temperature") ?? DEFAULT_TEMPERATURE,
        topP: limitedNumber(object, "top_p", "topP"),
        topK: limitedNumber(object, "top_k", "topK"),
        seed: undefined,
        stop: stopList,
        stream: object.stream === true,
        includeUsage: false,
        ...UNSENT_SAMPLING
    };
}

/**
 * A `/v1/messages/count_tokens` body: the prompt `/v1/messages` would evaluate, as a chat request of one token to
 * generate (so the same bounds refuse it).
 */
export function parseAnthropicCountTokensRequest(body: unknown): ChatCompletionRequest {
    const object = asObject(body, COUNT_FIELDS, "/v1/messages/count_tokens");
    return {kind: "chat", messages: promptMessages(object), tools: null, model: modelName(object), maxTokens: 1, temperature: DEFAULT_TEMPERATURE, topP: undefined,
        topK: undefined, seed: undefined, stop: [], stream: false, includeUsage: false, ...UNSENT_SAMPLING};
}

function asObject(body: unknown, known: ReadonlySet<string>, endpoint: string): Body {
    if (typeof body !== "object" || body == null || Array.isArray(body))
        throw OpenAiError.badRequest("The request body must be a JSON object.");
    const unknown = Object.keys(body).find((key) => !known.has(key));
    if (unknown != null) {
        const name = unknown.slice(0, 40);
        throw OpenAiError.badRequest(`\`${name}\` is not supported by this server's ${endpoint} (it takes ${[...known].join(", ")}): send the request without it.`, name);
    }
    return body as Body;
}

/** `{type: "ephemeral"}`, optionally with a `ttl` of "5m" or "1h" (Anthropic's `CacheControlEphemeral`). */
function checkCacheControl(value: unknown, param: string): void {
    if (value == null)
        return;
    const {type, ttl, ...rest} = (typeof value === "object" && !Array.isArray(value) ? value : {}) as Body;
    if (type !== "ephemeral" || (ttl != null && ttl !== "5m" && ttl !== "1h") || Object.keys(rest).length > 0)
        throw OpenAiError.badRequest(`${param} must be {"type": "ephemeral"}, optionally with "ttl": "5m" or "1h".`, param);
}

function modelName(object: Body): string | null {
    const model = object.model;
    if (model != null && (typeof model !== "string" || model.length > TEXT_LIMITS.path))
        throw OpenAiError.badRequest("`model` must be a string.", "model");
    return typeof model === "string" ? model : null;
}

/** `system` and `messages` as chat messages, the last one the user's. */
function promptMessages(object: Body): ChatMessage[] {
    checkCacheControl(object.cache_control, "`cache_control`");
    const messages = object.messages;
    if (!Array.isArray(messages) || messages.length === 0)
        throw OpenAiError.badRequest("`messages` must be a non-empty list of {role, content} objects.", "messages");
    const count = checkLimit("chatMessages", messages.length);
    if (!count.ok)
        throw OpenAiError.badRequest(`\`messages\`: ${count.message}`, "messages");
    const system = object.system == null ? [] : [{role: "system" as const, text: blocksText(object.system, "system")}];
    const parsed = messages.map((message: unknown, index): ChatMessage => {
        const param = `messages[${index}]`;
        if (typeof message !== "object" || message == null || Array.isArray(message))
            throw OpenAiError.badRequest(`${param} must be an object with "role" and "content".`, param);
        const {role, content, ...rest} = message as Body;
        const extra = Object.keys(rest)[0];
        if (extra != null)
            throw OpenAiError.badRequest(`${param}.${extra.slice(0, 40)} is not supported by this server: a message has only role and content.`, param);
        if (role !== "user" && role !== "assistant")
            throw OpenAiError.badRequest(`${param}.role must be "user" or "assistant" (got ${JSON.stringify(String(role).slice(0, 20))}); the system prompt goes in \`system\`.`, `${param}.role`);
        return {role, text: blocksText(content, `${param}.content`)};
    });
    if (parsed.at(-1)!.role !== "user")
        throw OpenAiError.badRequest("The last message must be the user's: this server does not continue a prefilled assistant turn.", "messages");
    return [...system, ...parsed];
}

/** A string, or a list of `{type: "text", text}` blocks joined; any other block (image, document, tool_use…) is refused by its type. */
function blocksText(content: unknown, param: string): string {
    let text: string;
    if (typeof content === "string")
        text = content;
    else if (Array.isArray(content) && content.length > 0) {
        text = content.map((block: unknown, index) => {
            const at = `${param}[${index}]`;
            if (typeof block !== "object" || block == null || Array.isArray(block))
                throw OpenAiError.badRequest(`${at} must be a content block such as {"type": "text", "text": "…"}.`, at);
            const {type, text: blockText, cache_control: cacheControl, ...rest} = block as Body;
            if (type !== "text")
                throw OpenAiError.badRequest(`${at} is a ${JSON.stringify(String(type).slice(0, 30))} block: this server takes text blocks only, so far.`, at);
            if (typeof blockText !== "string")
                throw OpenAiError.badRequest(`${at}.text must be a string.`, at);
            const extra = Object.keys(rest)[0];
            if (extra != null)
                throw OpenAiError.badRequest(`${at}.${extra.slice(0, 40)} is not supported by this server (text blocks take text and cache_control).`, at);
            checkCacheControl(cacheControl, `${at}.cache_control`);
            return blockText;
        }).join("");
    } else
        throw OpenAiError.badRequest(`${param} must be a string or a non-empty list of text blocks.`, param);
    if (text.length > TEXT_LIMITS.message)
        throw OpenAiError.badRequest(`${param} is longer than ${TEXT_LIMITS.message} characters.`, param);
    return text;
}
