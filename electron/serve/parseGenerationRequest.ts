/**
 * OpenAI-compatible request bodies (`/v1/chat/completions`, `/v1/completions`) read field by field through the one
 * table of request fields (requestFields.ts): each field is honoured, or refused with a 400 naming it; a field the
 * table does not list is refused too. Numbers are checked against the one bounds table (`electron/contract/limits.ts`).
 */
import {checkLimit, TEXT_LIMITS, type LimitName} from "../contract/limits.js";
import {OpenAiError} from "./OpenAiError.js";
import {emptyDraft, logprobsOf, requestField, type Endpoint, type LogprobsRequest, type OutputConstraint} from "./requestFields.js";

/** One chat message, its content flattened to text. */
export type ChatMessage = {role: "system" | "user" | "assistant"; text: string};

/** What both endpoints share: sampling, stopping, output constraints and streaming. */
export type SamplingRequest = {
    /** The `model` field as sent (echoed back); the server always answers with its one loaded model. */
    model: string | null;
    /** `max_tokens` (or `max_completion_tokens`, `n_predict`); `undefined` when not sent: the rest of the context. */
    maxTokens: number | undefined;
    temperature: number;
    topP: number | undefined;
    topK: number | undefined;
    minP: number | undefined;
    seed: number | undefined;
    stop: string[];
    stream: boolean;
    /** `stream_options.include_usage`: a last chunk with `usage` (and an empty `choices`). */
    includeUsage: boolean;
    frequencyPenalty: number | undefined;
    presencePenalty: number | undefined;
    repeatPenalty: number | undefined;
    /** `repeat_last_n`: generated tokens the penalties look back over. */
    repeatLastN: number | undefined;
    /** `logit_bias`: token id → bias (−100‥100). */
    logitBias: ReadonlyMap<number, number>;
    /** `response_format` (json_object / json_schema), `json_schema` or `grammar`; `null`: free text. */
    constraint: OutputConstraint | null;
    /** `logprobs` / `top_logprobs`; `null`: none asked for. */
    logprobs: LogprobsRequest | null;
};

/**
 * The sampling fields of an API that has no such fields (Anthropic's messages, OpenAI's Responses as served here): not
 * sent, so node-llama-cpp's defaults apply, as for an OpenAI request that leaves them out.
 */
export const UNSENT_SAMPLING: Readonly<Pick<SamplingRequest, "minP" | "frequencyPenalty" | "presencePenalty" | "repeatPenalty" | "repeatLastN" |
    "logitBias" | "constraint" | "logprobs">> = {
    minP: undefined, frequencyPenalty: undefined, presencePenalty: undefined, repeatPenalty: undefined, repeatLastN: undefined,
    logitBias: new Map(), constraint: null, logprobs: null
};

export type ChatCompletionRequest = SamplingRequest & {kind: "chat"; messages: ChatMessage[]};
export type CompletionRequest = SamplingRequest & {kind: "completion"; prompt: string};
export type GenerationRequest = ChatCompletionRequest | CompletionRequest;

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
    if (parsed.at(-1)!.role === "system")
        throw OpenAiError.badRequest("The last message must be the user's (to answer) or the assistant's (to continue), not a system message.", "messages");
    // an assistant message to continue answers the user message right before it
    if (parsed.at(-1)!.role === "assistant" && parsed.at(-2)?.role !== "user")
        throw OpenAiError.badRequest("A last assistant message (to continue) must follow a user message.", "messages");
    return {kind: "chat", messages: parsed, ...parseFields(object, "chat")};
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
    const draft = emptyDraft();
    for (const [field, value] of Object.entries(object)) {
        const row = requestField(field, endpoint);
        if (row == null)
            throw OpenAiError.badRequest(`Unknown field \`${field.slice(0, 64)}\` for ${endpoint === "chat" ? "/v1/chat/completions" : "/v1/completions"}: ` +
                "this server refuses what it would otherwise ignore.", field.slice(0, 64));
        if (value != null)
            row.read(value, draft, field);
    }
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
