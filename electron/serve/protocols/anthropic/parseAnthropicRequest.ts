/**
 * Anthropic Messages API bodies (`POST /v1/messages`, `/v1/messages/count_tokens`), as Claude Code and the
 * `@anthropic-ai/sdk` package send them, checked field by field against the bounds table (contract/limits.ts) and
 * turned into the server's own chat request; tools and tool turns go to the server's one tool path (anthropicTools.ts).
 * `thinking` turns a reasoning model's thinking on or off (chatReasoning.ts), and an assistant's `thinking` blocks sent
 * back reach the chat template as its reasoning; what a local text model cannot honour yet (images, documents, redacted
 * thinking…) is refused by name;
 * `cache_control` marks (on the request or on a block) are accepted: the server keeps every conversation's prefix
 * cached anyway (ConversationKvStore.ts).
 */
import {checkLimit, TEXT_LIMITS} from "../../../contract/limits.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import {
    anthropicToolUse, checkCacheControl, readAnthropicToolChoice, readAnthropicTools, readToolResultBlock, readToolUseBlock
} from "./anthropicTools.js";
import {
    DEFAULT_REASONING, type ChatCompletionRequest, type ChatMessage, type ReasoningRequest, type ToolCall, type ToolUse
} from "../../common/GenerationRequest.js";
import {DEFAULT_TEMPERATURE, limitedNumber, UNSENT_SAMPLING} from "../openai/parseGenerationRequest.js";
import {isPlainObject} from "../openai/toolRequest.js";

type Body = Record<string, unknown>;

/** Fields `/v1/messages` honours; any other is refused by name. */
const MESSAGE_FIELDS = new Set(["model", "messages", "system", "max_tokens", "stop_sequences", "temperature", "top_p", "top_k", "metadata", "stream", "cache_control", "tools",
    "tool_choice", "thinking"]);
/** `/v1/messages/count_tokens` takes the prompt's fields only (`thinking` changes the prompt: its switch is the template's). */
const COUNT_FIELDS = new Set(["model", "messages", "system", "cache_control", "tools", "tool_choice", "thinking"]);

/** Anthropic's least thinking budget (ThinkingConfigEnabled.budget_tokens: "Must be ≥1024 and less than max_tokens"). */
const MIN_THINKING_BUDGET = 1024;

/**
 * `thinking`: `{type: "enabled", budget_tokens}` and `{type: "adaptive"}` turn thinking on (the budget: the most tokens
 * the thinking may take, enforced by serveOpenAi.ts), `{type: "disabled"}` off, through the chat template's switch.
 * `maxTokens`: the request's, which the budget must stay below (Anthropic's rule); `null` for count_tokens.
 */
function readThinking(value: unknown, maxTokens: number | null): ReasoningRequest {
    if (value == null)
        return DEFAULT_REASONING;
    const field = "thinking";
    if (!isPlainObject(value))
        throw OpenAiError.badRequest("`thinking` must be {\"type\": \"enabled\", \"budget_tokens\": …}, {\"type\": \"adaptive\"} or {\"type\": \"disabled\"}.", field);
    const {type, budget_tokens: budget, display, ...rest} = value;
    const extra = Object.keys(rest)[0];
    if (extra != null)
        throw OpenAiError.badRequest(`\`thinking.${extra.slice(0, 40)}\` is not supported by this server (it takes type, budget_tokens and display).`, `thinking.${extra.slice(0, 40)}`);
    if (display != null)
        throw OpenAiError.badRequest("`thinking.display` is not supported by this server: the thinking is given as the model wrote it, never summarized or omitted.",
            "thinking.display");
    if (type === "disabled" || type === "adaptive") {
        if (budget != null)
            throw OpenAiError.badRequest(`\`thinking.budget_tokens\` goes with "type": "enabled", not "${type}".`, "thinking.budget_tokens");
        return {...DEFAULT_REASONING, thinking: {on: type === "adaptive", field}};
    }
    if (type !== "enabled")
        throw OpenAiError.badRequest("`thinking.type` must be \"enabled\", \"adaptive\" or \"disabled\".", "thinking.type");
    const tokens = limitedNumber(value, "budget_tokens", "maxTokens");
    if (tokens == null || tokens < MIN_THINKING_BUDGET || (maxTokens != null && tokens >= maxTokens))
        throw OpenAiError.badRequest(`\`thinking.budget_tokens\` must be at least ${MIN_THINKING_BUDGET} and less than max_tokens.`, "thinking.budget_tokens");
    return {...DEFAULT_REASONING, thinking: {on: true, field}, budget: {tokens, field: "thinking.budget_tokens"}};
}

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
    const maxTokens = limitedNumber(object, "max_tokens", "maxTokens");
    return {
        kind: "chat",
        ...promptOf(object),
        reasoning: readThinking(object.thinking, maxTokens ?? null),
        model: modelName(object),
        maxTokens,
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
    return {kind: "chat", ...promptOf(object), reasoning: readThinking(object.thinking, null), model: modelName(object), maxTokens: 1, temperature: DEFAULT_TEMPERATURE, topP: undefined,
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

/**
 * An assistant message: its text blocks joined, its tool_use blocks as tool calls, and its `thinking` blocks (first, as
 * Anthropic writes them) as its reasoning, for the chat template.
 */
function assistantTurn(content: unknown, param: string): Turn {
    const calls: ToolCall[] = [];
    const thoughts: string[] = [];
    let other = false;
    const text = blocksText(content, param, ["tool_use", "thinking"], (block, at) => {
        if (block.type === "tool_use") {
            other = true;
            calls.push(readToolUseBlock(block, at));
        } else if (other)
            throw OpenAiError.badRequest(`${at} is a thinking block after other content: thinking blocks come first in a message.`, at);
        else
            thoughts.push(readThinkingBlock(block, at));
    }, () => {
        other = true;
    });
    const reasoning = thoughts.join("");
    const thought = reasoning !== "" ? {reasoning} : {};
    return {results: [], messages: [calls.length > 0 ? {role: "assistant", text, toolCalls: calls, ...thought} : {role: "assistant", text, ...thought}],
        calls: calls.map((call) => call.id)};
}

/** A `thinking` block sent back: `{type: "thinking", thinking, signature}` (this server signs none: any signature is taken as sent). */
function readThinkingBlock(block: Body, at: string): string {
    const {thinking, signature, type: _type, ...rest} = block;
    const extra = Object.keys(rest)[0];
    if (extra != null)
        throw OpenAiError.badRequest(`${at}.${extra.slice(0, 40)} is not supported by this server (a thinking block has type, thinking and signature).`, at);
    if (typeof thinking !== "string" || thinking.length > TEXT_LIMITS.message)
        throw OpenAiError.badRequest(`${at}.thinking must be a string of at most ${TEXT_LIMITS.message} characters.`, `${at}.thinking`);
    if (signature != null && (typeof signature !== "string" || signature.length > TEXT_LIMITS.message))
        throw OpenAiError.badRequest(`${at}.signature must be a string.`, `${at}.signature`);
    return thinking;
}

/** A user message: its tool_result blocks (first, as Anthropic requires) as tool messages, then its text, if any. */
function userTurn(content: unknown, param: string): Turn {
    const results: Turn["results"] = [];
    let other = false;
    const text = blocksText(content, param, ["tool_result"], (block, at) => {
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
 * A string, or a list of `{type: "text", text}` blocks joined; blocks of the `handled` types (a message's tool_use,
 * thinking or tool_result) go to `onBlock` instead, and `onText` hears of each text block. Any other block (image,
 * document, redacted thinking…) is refused by its type.
 */
function blocksText(content: unknown, param: string, handled: readonly ("tool_use" | "tool_result" | "thinking")[] = [],
    onBlock?: (block: Body, at: string) => void, onText?: () => void): string {
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
            if ((handled as readonly unknown[]).includes(type)) {
                onBlock!(block as Body, at);
                return "";
            }
            onText?.();
            if (type !== "text")
                throw OpenAiError.badRequest(`${at} is a ${JSON.stringify(String(type).slice(0, 30))} block: this server takes text blocks here` +
                    `${handled.length > 0 ? ` and ${handled.join(" and ")} blocks` : ""}.`, at);
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
