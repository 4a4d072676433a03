/**
 * Anthropic Messages API bodies (`POST /v1/messages`, `/v1/messages/count_tokens`), as Claude Code and the
 * `@anthropic-ai/sdk` package send them, checked field by field against the bounds table (contract/limits.ts) and
 * turned into the server's own chat request; tools and tool turns go to the server's one tool path (anthropicTools.ts).
 * What a local text model cannot honour yet (images, documents, extended thinking…) is refused by name;
 * `cache_control` marks (on the request or on a block) are accepted: the server keeps every conversation's prefix
 * cached anyway (ConversationKvStore.ts).
 */
import {checkLimit, TEXT_LIMITS} from "../contract/limits.js";
import {OpenAiError} from "./OpenAiError.js";
import {anthropicToolUse, checkCacheControl, readAnthropicToolChoice, readAnthropicTools, readToolResultBlock, readToolUseBlock} from "./anthropicTools.js";
import {DEFAULT_TEMPERATURE, limitedNumber, UNSENT_SAMPLING, type ChatCompletionRequest, type ChatMessage} from "./parseGenerationRequest.js";
import {isPlainObject, type ToolCall, type ToolUse} from "./toolRequest.js";

type Body = Record<string, unknown>;

/** Fields `/v1/messages` honours; any other is refused by name. */
const MESSAGE_FIELDS = new Set(["model", "messages", "system", "max_tokens", "stop_sequences", "temperature", "top_p", "top_k", "metadata", "stream", "cache_control", "tools",
    "tool_choice"]);
/** `/v1/messages/count_tokens` takes the prompt's fields only. */
const COUNT_FIELDS = new Set(["model", "messages", "system", "cache_control", "tools", "tool_choice"]);

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
        ...promptOf(object),
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
    return {kind: "chat", ...promptOf(object), model: modelName(object), maxTokens: 1, temperature: DEFAULT_TEMPERATURE, topP: undefined,
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

function modelName(object: Body): string | null {
    const model = object.model;
    if (model != null && (typeof model !== "string" || model.length > TEXT_LIMITS.path))
        throw OpenAiError.badRequest("`model` must be a string.", "model");
    return typeof model === "string" ? model : null;
}

/** `system`, `messages`, `tools` and `tool_choice` as chat messages and the tool use, the last message the user's. */
function promptOf(object: Body): {messages: ChatMessage[]; tools: ToolUse | null} {
    checkCacheControl(object.cache_control, "`cache_control`");
    const messages = object.messages;
    if (!Array.isArray(messages) || messages.length === 0)
        throw OpenAiError.badRequest("`messages` must be a non-empty list of {role, content} objects.", "messages");
    const count = checkLimit("chatMessages", messages.length);
    if (!count.ok)
        throw OpenAiError.badRequest(`\`messages\`: ${count.message}`, "messages");
    const system = object.system == null ? [] : [{role: "system" as const, text: blocksText(object.system, "system")}];
    const parsed: ChatMessage[] = [];
    // the tool_use ids of the assistant message before: the next message's tool_result blocks must answer each of them
    let open: string[] = [];
    messages.forEach((message: unknown, index) => {
        const param = `messages[${index}]`;
        if (!isPlainObject(message))
            throw OpenAiError.badRequest(`${param} must be an object with "role" and "content".`, param);
        const {role, content, ...rest} = message;
        const extra = Object.keys(rest)[0];
        if (extra != null)
            throw OpenAiError.badRequest(`${param}.${extra.slice(0, 40)} is not supported by this server: a message has only role and content.`, param);
        if (role !== "user" && role !== "assistant")
            throw OpenAiError.badRequest(`${param}.role must be "user" or "assistant" (got ${JSON.stringify(String(role).slice(0, 20))}); the system prompt goes in \`system\`.`, `${param}.role`);
        const turn = role === "assistant" ? assistantTurn(content, `${param}.content`) : userTurn(content, `${param}.content`);
        const answered = turn.results.map((result) => result.toolCallId);
        const stray = answered.find((id) => !open.includes(id));
        if (stray != null)
            throw OpenAiError.badRequest(`${param}.content has a tool_result for ${JSON.stringify(stray)}, which is no tool_use of the message right before it.`,
                `${param}.content`);
        const unanswered = open.find((id) => !answered.includes(id));
        if (unanswered != null)
            throw OpenAiError.badRequest(`${param} must answer the tool_use ${JSON.stringify(unanswered)} of the message before with a tool_result block.`, param);
        const repeated = turn.calls.find((id, at) => turn.calls.indexOf(id) !== at);
        if (repeated != null)
            throw OpenAiError.badRequest(`${param}.content repeats the tool_use id ${JSON.stringify(repeated)}: each call needs its own id.`, `${param}.content`);
        parsed.push(...turn.results, ...turn.messages);
        open = turn.calls;
    });
    const last = parsed.at(-1);
    if (last == null || open.length > 0 || (last.role !== "user" && last.role !== "tool"))
        throw OpenAiError.badRequest("The last message must be the user's: this server does not continue a prefilled assistant turn.", "messages");
    const tools = anthropicToolUse(object.tools == null ? undefined : readAnthropicTools(object.tools),
        object.tool_choice == null ? undefined : readAnthropicToolChoice(object.tool_choice),
        parsed.some((message) => message.role === "tool" || (message.role === "assistant" && message.toolCalls != null)));
    return {messages: [...system, ...parsed], tools};
}

type Turn = {results: Extract<ChatMessage, {role: "tool"}>[]; messages: ChatMessage[]; calls: string[]};

/** An assistant message: its text blocks joined, and its tool_use blocks as tool calls. */
function assistantTurn(content: unknown, param: string): Turn {
    const calls: ToolCall[] = [];
    const text = blocksText(content, param, "tool_use", (block, at) => calls.push(readToolUseBlock(block, at)));
    return {results: [], messages: [calls.length > 0 ? {role: "assistant", text, toolCalls: calls} : {role: "assistant", text}], calls: calls.map((call) => call.id)};
}

/** A user message: its tool_result blocks (first, as Anthropic requires) as tool messages, then its text, if any. */
function userTurn(content: unknown, param: string): Turn {
    const results: Turn["results"] = [];
    let other = false;
    const text = blocksText(content, param, "tool_result", (block, at) => {
        if (other)
            throw OpenAiError.badRequest(`${at} is a tool_result after other content: tool_result blocks come first in a message.`, at);
        const result = readToolResultBlock(block, at);
        results.push({role: "tool", text: result.text, toolCallId: result.toolUseId});
    }, () => {
        other = true;
    });
    return {results, messages: results.length > 0 && !other ? [] : [{role: "user", text}], calls: []};
}

/**
 * A string, or a list of `{type: "text", text}` blocks joined; blocks of type `toolBlock` (a message's tool_use or
 * tool_result) go to `onToolBlock` instead, and `onText` hears of each text block. Any other block (image, document,
 * thinking…) is refused by its type.
 */
function blocksText(content: unknown, param: string, toolBlock?: "tool_use" | "tool_result", onToolBlock?: (block: Body, at: string) => void,
    onText?: () => void): string {
    let text: string;
    if (typeof content === "string") {
        text = content;
        onText?.();
    } else if (Array.isArray(content) && content.length > 0) {
        text = content.map((block: unknown, index) => {
            const at = `${param}[${index}]`;
            if (typeof block !== "object" || block == null || Array.isArray(block))
                throw OpenAiError.badRequest(`${at} must be a content block such as {"type": "text", "text": "…"}.`, at);
            const {type, text: blockText, cache_control: cacheControl, ...rest} = block as Body;
            if (toolBlock != null && type === toolBlock) {
                onToolBlock!(block as Body, at);
                return "";
            }
            onText?.();
            if (type !== "text")
                throw OpenAiError.badRequest(`${at} is a ${JSON.stringify(String(type).slice(0, 30))} block: this server takes text blocks here` +
                    `${toolBlock != null ? ` and ${toolBlock} blocks` : ""}.`, at);
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
