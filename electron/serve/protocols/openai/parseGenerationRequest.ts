/**
 * OpenAI-compatible request bodies (`/v1/chat/completions`, `/v1/completions`) read field by field through the one
 * table of request fields (requestFields.ts): each field is honoured, or refused with a 400 naming it; a field the
 * table does not list is refused too. Numbers are checked against the one bounds table (`electron/contract/limits.ts`).
 */
import {checkLimit, TEXT_LIMITS, type LimitName} from "../../../contract/limits.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import {
    DEFAULT_REASONING_FORMAT, type ChatCompletionRequest, type ChatMessage, type CompletionRequest, type SamplingRequest
} from "../../common/GenerationRequest.js";
import {emptyDraft, logprobsOf, MESSAGE_FIELDS, requestField, type Endpoint, type FieldDraft} from "./requestFields.js";
import {functionName, readToolCalls, toolCallId, toolUseOf} from "./toolRequest.js";

/**
 * The sampling fields of an API that has no such fields (Anthropic's messages, OpenAI's Responses as served here): not
 * sent, so node-llama-cpp's defaults apply, as for an OpenAI request that leaves them out.
 */
export const UNSENT_SAMPLING: Readonly<Pick<SamplingRequest, "minP" | "frequencyPenalty" | "presencePenalty" | "repeatPenalty" | "repeatLastN" |
    "logitBias" | "constraint" | "logprobs">> = {
    minP: undefined, frequencyPenalty: undefined, presencePenalty: undefined, repeatPenalty: undefined, repeatLastN: undefined,
    logitBias: new Map(), constraint: null, logprobs: null
};

/** The temperature a request that sends none gets: OpenAI's default (chat, completions, Responses), and Anthropic's. */
export const DEFAULT_TEMPERATURE = 1;

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
    const draft = readFields(object, "chat");
    const tools = toolUseOf(draft.tools, draft.toolChoice, draft.parallelToolCalls,
        parsed.some((message) => message.role === "tool" || (message.role === "assistant" && message.toolCalls != null)));
    const last = parsed.at(-1)!;
    if (last.role === "system")
        throw OpenAiError.badRequest("The last message must be the user's (to answer) or the assistant's (to continue), not a system message.", "messages");
    const named = parsed.findIndex((message) => message.name != null);
    if (named >= 0 && tools == null)
        throw OpenAiError.badRequest(`messages[${named}].name reaches the chat template only in a request with tools or tool turns (llama.cpp's chat layer): ` +
            "node-llama-cpp's chat wrappers, which template the others, have no participant names, so send the message without it.", `messages[${named}].name`);
    if (last.role === "tool" && tools == null)
        throw OpenAiError.badRequest("A last tool message needs the request's `tools`.", "messages");
    if (last.role === "assistant" && tools != null)
        throw OpenAiError.badRequest("With tools, the last message must be the user's or a tool result: this server does not continue an assistant message then.", "messages");
    // an assistant message to continue answers the user message right before it
    if (last.role === "assistant" && parsed.at(-2)?.role !== "user")
        throw OpenAiError.badRequest("A last assistant message (to continue) must follow a user message.", "messages");
    if (tools != null) {
        // llama-server refuses a custom grammar with tools too: the tool-call grammar is the one constraint
        if (draft.constraint != null)
            throw OpenAiError.badRequest(`\`${draft.constraint.field}\` cannot be combined with tools: the tool-call grammar already constrains the reply.`,
                draft.constraint.field);
        if (draft.logprobs !== undefined && draft.logprobs !== false)
            throw OpenAiError.badRequest("`logprobs` is not supported together with tools: the reply's text is parsed into tool calls.", "logprobs");
    }
    return {kind: "chat", messages: parsed, tools, ...samplingOf(draft, "chat"), reasoning: {
        format: draft.reasoningFormat ?? DEFAULT_REASONING_FORMAT,
        ...(draft.thinking != null && {thinking: draft.thinking}), ...(draft.effort != null && {effort: draft.effort})
    }};
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
    return {kind: "completion", prompt, ...parseFields(object, "completion")};
}

/** Every field of `object` through its row of the table; a field without one is refused by name. */
function parseFields(object: Body, endpoint: Endpoint): SamplingRequest {
    return samplingOf(readFields(object, endpoint), endpoint);
}

function readFields(object: Body, endpoint: Endpoint): FieldDraft {
    const draft = emptyDraft();
    for (const [field, value] of Object.entries(object)) {
        const row = requestField(field, endpoint);
        if (row == null)
            throw OpenAiError.badRequest(`Unknown field \`${field.slice(0, 64)}\` for ${endpoint === "chat" ? "/v1/chat/completions" : "/v1/completions"}: ` +
                "this server refuses what it would otherwise ignore.", field.slice(0, 64));
        if (value != null)
            row.read(value, draft, field);
    }
    return draft;
}

function samplingOf(draft: FieldDraft, endpoint: Endpoint): SamplingRequest {
    return {
        model: draft.model, maxTokens: draft.maxTokens?.value, temperature: draft.temperature ?? DEFAULT_TEMPERATURE, topP: draft.topP,
        topK: draft.topK, minP: draft.minP, seed: draft.seed, stop: draft.stop, stream: draft.stream, includeUsage: draft.includeUsage,
        frequencyPenalty: draft.frequencyPenalty, presencePenalty: draft.presencePenalty, repeatPenalty: draft.repeatPenalty,
        repeatLastN: draft.repeatLastN, logitBias: draft.logitBias, constraint: draft.constraint?.value ?? null,
        logprobs: logprobsOf(draft, endpoint)
    };
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
    for (const [key, value] of Object.entries(message)) {
        if (!Object.hasOwn(MESSAGE_FIELDS, key))
            throw OpenAiError.badRequest(`${param}.${key.slice(0, 40)} is not a field of a chat message (they are ${Object.keys(MESSAGE_FIELDS).join(", ")}).`,
                `${param}.${key.slice(0, 40)}`);
        const row = MESSAGE_FIELDS[key as keyof typeof MESSAGE_FIELDS];
        if (row.treatment === "refused" && value != null)
            throw OpenAiError.badRequest(`${param}.${key} is not supported by this server: ${row.why}`, `${param}.${key}`);
    }
    const {role, content, tool_calls: toolCalls, tool_call_id: callId, name: sentName, reasoning_content: reasoning} = message as Body;
    const mapped = role === "system" || role === "developer" ? "system" : role === "user" || role === "assistant" || role === "tool" ? role : null;
    if (mapped == null)
        throw OpenAiError.badRequest(`${param}.role must be "system", "developer", "user", "assistant" or "tool" (got ${JSON.stringify(String(role).slice(0, 20))}).`, `${param}.role`);
    if (toolCalls != null && mapped !== "assistant")
        throw OpenAiError.badRequest(`${param}.tool_calls goes only with "role": "assistant".`, `${param}.tool_calls`);
    if (callId != null && mapped !== "tool")
        throw OpenAiError.badRequest(`${param}.tool_call_id goes only with "role": "tool".`, `${param}.tool_call_id`);
    if (reasoning != null && (mapped !== "assistant" || typeof reasoning !== "string" || reasoning.length > TEXT_LIMITS.message))
        throw OpenAiError.badRequest(`${param}.reasoning_content must be a string of at most ${TEXT_LIMITS.message} characters, on an assistant message.`,
            `${param}.reasoning_content`);
    const thought = typeof reasoning === "string" && reasoning !== "" ? {reasoning} : {};
    // an assistant message that calls tools may have no content (OpenAI sends null)
    const text = mapped === "assistant" && toolCalls != null && content == null ? "" : contentText(content, `${param}.content`);
    if (text.length > TEXT_LIMITS.message)
        throw OpenAiError.badRequest(`${param}.content is longer than ${TEXT_LIMITS.message} characters.`, `${param}.content`);
    // OpenAI's rule for a name is a function name's (^[a-zA-Z0-9_-]{1,64}$)
    const name = sentName != null ? {name: functionName(sentName, `${param}.name`)} : {};
    if (mapped === "tool")
        return {role: "tool", text, toolCallId: toolCallId(callId, `${param}.tool_call_id`), ...name};
    if (mapped === "assistant")
        return toolCalls != null ? {role: "assistant", text, toolCalls: readToolCalls(toolCalls, `${param}.tool_calls`), ...thought, ...name}
            : {role: "assistant", text, ...thought, ...name};
    return {role: mapped, text, ...name};
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

/** `object[field]` within `limit`'s range, `undefined` when absent or `null`; a 400 naming the field otherwise. */
export function limitedNumber(object: Record<string, unknown>, field: string, limit: LimitName): number | undefined {
    const value = object[field];
    if (value == null)
        return undefined;
    const checked = checkLimit(limit, value);
    if (!checked.ok)
        throw OpenAiError.badRequest(`\`${field}\`: ${checked.message}`, field);
    return checked.value;
}
