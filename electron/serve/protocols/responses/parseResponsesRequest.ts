/**
 * OpenAI Responses API bodies (`POST /v1/responses`), stateless: `input` as a string or message items whose content is
 * a string or `input_text` / `output_text` parts, `instructions`, `max_output_tokens`, `temperature`, `top_p`,
 * `stream`, function tools and their input items (responsesTools.ts), `reasoning.effort` and the `reasoning` items of a
 * reasoning model's earlier turns (their `content` reaches the chat template as the turn's thinking, chatReasoning.ts).
 * This server keeps no responses, so
 * `previous_response_id` and `store: true` are refused by name, as is every other item, part or field it cannot honour yet.
 */
import {checkLimit, TEXT_LIMITS} from "../../../contract/limits.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import {readEffort, responsesTextConstraint} from "../openai/requestFields.js";
import {DEFAULT_REASONING, type ChatCompletionRequest, type ChatMessage, type ReasoningRequest} from "../../common/GenerationRequest.js";
import {DEFAULT_TEMPERATURE, limitedNumber, UNSENT_SAMPLING} from "../openai/parseGenerationRequest.js";
import {readFunctionCallItem, readFunctionCallOutputItem, responsesToolUse} from "./responsesTools.js";
import {isPlainObject} from "../openai/toolRequest.js";

type Body = Record<string, unknown>;

/** What a stateless response echoes back besides its output. */
export type ResponsesRequest = ChatCompletionRequest & {
    instructions: string | null;
    maxOutputTokens: number | null;
    topPSent: number | null;
    temperatureSent: number | null;
    user: string | null;
    /** `text.format` as sent (checked), echoed in the response object; `null` when not sent (free text). */
    textFormat: Record<string, unknown> | null;
    /** `tools`, `tool_choice` and `parallel_tool_calls` as sent (checked), echoed in the response object. */
    toolsSent: {tools: unknown[]; toolChoice: unknown; parallelToolCalls: boolean};
};

const FIELDS = new Set(["model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "stream", "store", "previous_response_id", "tools", "tool_choice",
    "parallel_tool_calls", "user", "text", "reasoning"]);

/**
 * `reasoning`: `effort` as chat's `reasoning_effort` (chatReasoning.ts); a `summary` cannot be written (this server
 * gives the thinking itself, as the reasoning item's `content`), so only null is taken there.
 */
function readReasoning(value: unknown): ReasoningRequest {
    if (value == null)
        return DEFAULT_REASONING;
    if (!isPlainObject(value))
        throw OpenAiError.badRequest("`reasoning` must be an object ({\"effort\": …}).", "reasoning");
    const {effort, summary, generate_summary: generateSummary, ...rest} = value;
    const extra = Object.keys(rest)[0];
    if (extra != null)
        throw OpenAiError.badRequest(`\`reasoning.${extra.slice(0, 40)}\` is not supported by this server (it takes effort and summary).`, `reasoning.${extra.slice(0, 40)}`);
    for (const [field, sent] of [["reasoning.summary", summary], ["reasoning.generate_summary", generateSummary]] as const)
        if (sent != null)
            throw OpenAiError.badRequest(`\`${field}\` is not supported by this server: it writes no summaries; the model's thinking comes whole as the reasoning item's content (send null).`,
                field);
    return {...DEFAULT_REASONING, ...(effort != null && readEffort(effort, "reasoning.effort"))};
}

export function parseResponsesRequest(body: unknown): ResponsesRequest {
    if (typeof body !== "object" || body == null || Array.isArray(body))
        throw OpenAiError.badRequest("The request body must be a JSON object.");
    const object = body as Body;
    const unknown = Object.keys(object).find((key) => !FIELDS.has(key));
    if (unknown != null) {
        const name = unknown.slice(0, 40);
        throw OpenAiError.badRequest(`\`${name}\` is not supported by this server's /v1/responses: send the request without it.`, name);
    }
    if (object.previous_response_id != null)
        throw OpenAiError.badRequest("`previous_response_id` cannot be used: this server is stateless and keeps no responses; send the whole conversation in `input`.",
            "previous_response_id");
    if (object.store != null && object.store !== false)
        throw OpenAiError.badRequest("`store` must be false or left out: this server is stateless and keeps no responses.", "store");
    if (object.stream != null && typeof object.stream !== "boolean")
        throw OpenAiError.badRequest("`stream` must be true or false.", "stream");
    const {model, instructions, user} = object;
    if (model != null && (typeof model !== "string" || model.length > TEXT_LIMITS.path))
        throw OpenAiError.badRequest("`model` must be a string.", "model");
    if (instructions != null && (typeof instructions !== "string" || instructions.length > TEXT_LIMITS.message))
        throw OpenAiError.badRequest(`\`instructions\` must be a string of at most ${TEXT_LIMITS.message} characters.`, "instructions");
    if (user != null && (typeof user !== "string" || user.length > TEXT_LIMITS.id))
        throw OpenAiError.badRequest(`\`user\` must be a string of at most ${TEXT_LIMITS.id} characters.`, "user");
    const reasoning = readReasoning(object.reasoning);
    const messages = inputMessages(object.input);
    const tools = responsesToolUse(object, messages.some((message) => message.role === "tool" || (message.role === "assistant" && message.toolCalls != null)));
    if (tools != null && object.text != null)
        throw OpenAiError.badRequest("`text` (a format) cannot be combined with tools: the tool-call grammar already constrains the reply.", "text");
    if (typeof instructions === "string" && instructions !== "")
        messages.unshift({role: "system", text: instructions});
    const maxOutputTokens = limitedNumber(object, "max_output_tokens", "maxTokens");
    const temperature = limitedNumber(object, "temperature", "temperature");
    const topP = limitedNumber(object, "top_p", "topP");
    return {
        kind: "chat", messages, tools, reasoning, model: typeof model === "string" ? model : null, maxTokens: maxOutputTokens,
        temperature: temperature ?? DEFAULT_TEMPERATURE, topP, topK: undefined, seed: undefined, stop: [], stream: object.stream === true, includeUsage: false, ...UNSENT_SAMPLING,
        constraint: responsesTextConstraint(object.text),
        textFormat: (object.text as {format?: Record<string, unknown>} | null | undefined)?.format ?? null,
        toolsSent: {tools: (object.tools as unknown[] | null | undefined) ?? [], toolChoice: object.tool_choice ?? tools?.choice ?? "none",
            parallelToolCalls: tools?.parallel ?? true},
        instructions: typeof instructions === "string" ? instructions : null, maxOutputTokens: maxOutputTokens ?? null,
        topPSent: topP ?? null, temperatureSent: temperature ?? null, user: typeof user === "string" ? user : null
    };
}

function inputMessages(input: unknown): ChatMessage[] {
    if (typeof input === "string") {
        if (input === "" || input.length > TEXT_LIMITS.message)
            throw OpenAiError.badRequest(`\`input\` must be 1 to ${TEXT_LIMITS.message} characters.`, "input");
        return [{role: "user", text: input}];
    }
    if (!Array.isArray(input) || input.length === 0)
        throw OpenAiError.badRequest("`input` must be a non-empty string or a non-empty list of message items.", "input");
    const count = checkLimit("chatMessages", input.length);
    if (!count.ok)
        throw OpenAiError.badRequest(`\`input\`: ${count.message}`, "input");
    const messages: ChatMessage[] = [];
    const callIds = new Set<string>();
    /** A reasoning item's thinking, waiting for the assistant turn (message or function_call) it belongs to, and where it was. */
    let thinking: {text: string; param: string} | null = null;
    input.forEach((item: unknown, index) => {
        const param = `input[${index}]`;
        if (!isPlainObject(item))
            throw OpenAiError.badRequest(`${param} must be a message item {role, content}.`, param);
        if (thinking != null && !(item.type === "function_call" || ((item.type == null || item.type === "message") && item.role === "assistant")))
            throw OpenAiError.badRequest(`${thinking.param} is a reasoning item not followed by the assistant's message or function_call it belongs to.`, thinking.param);
        if (item.type === "reasoning") {
            thinking = {text: readReasoningItem(item, param), param};
            return;
        }
        const thought = thinking != null && thinking.text !== "" ? {reasoning: thinking.text} : {};
        thinking = null;
        if (item.type === "function_call") {
            const call = readFunctionCallItem(item, param);
            if (callIds.has(call.id))
                throw OpenAiError.badRequest(`\`${param}.call_id\` repeats the call id ${JSON.stringify(call.id)}.`, `${param}.call_id`);
            callIds.add(call.id);
            // calls right after an assistant message (or after other calls) belong to the same assistant turn
            const last = messages.at(-1);
            if (last?.role === "assistant" && thought.reasoning == null)
                messages[messages.length - 1] = {...last, toolCalls: [...last.toolCalls ?? [], call]};
            else
                messages.push({role: "assistant", text: "", toolCalls: [call], ...thought});
            return;
        }
        if (item.type === "function_call_output") {
            const output = readFunctionCallOutputItem(item, param);
            if (!callIds.has(output.callId))
                throw OpenAiError.badRequest(`\`${param}.call_id\` answers no function_call item before it (${JSON.stringify(output.callId)}).`, `${param}.call_id`);
            messages.push({role: "tool", text: output.text, toolCallId: output.callId});
            return;
        }
        const {type, role, content, id, status, ...rest} = item;
        if (type != null && type !== "message")
            throw OpenAiError.badRequest(`${param} is a ${JSON.stringify(String(type).slice(0, 30))} item: this server takes message, function_call and function_call_output items.`, param);
        const extra = Object.keys(rest)[0];
        if (extra != null)
            throw OpenAiError.badRequest(`${param}.${extra.slice(0, 40)} is not supported by this server: a message item has role and content.`, param);
        if ((id != null && typeof id !== "string") || (status != null && typeof status !== "string"))
            throw OpenAiError.badRequest(`${param}.id and .status must be strings.`, param);
        const mapped = role === "system" || role === "developer" ? "system" : role === "user" || role === "assistant" ? role : null;
        if (mapped == null)
            throw OpenAiError.badRequest(`${param}.role must be "user", "assistant", "system" or "developer" (got ${JSON.stringify(String(role).slice(0, 20))}).`, `${param}.role`);
        messages.push(mapped === "assistant" ? {role: mapped, text: contentText(content, `${param}.content`), ...thought}
            : {role: mapped, text: contentText(content, `${param}.content`)});
    });
    if (thinking != null)
        throw OpenAiError.badRequest(`${(thinking as {param: string}).param} is a reasoning item not followed by the assistant's message or function_call it belongs to.`,
            (thinking as {param: string}).param);
    const last = messages.at(-1)!.role;
    if (last !== "user" && last !== "tool")
        throw OpenAiError.badRequest("The last input item must be the user's message or a function_call_output (this server answers the latest of them).", "input");
    return messages;
}

/**
 * A `reasoning` item sent back, as this server writes them (responsesReplies.ts): `{type: "reasoning", id, summary: [],
 * content: [{type: "reasoning_text", text}], status}`; its thinking, the content's texts joined. Encrypted content and
 * summaries are no thinking this server wrote, so they are refused.
 */
function readReasoningItem(item: Body, param: string): string {
    const {type: _type, id, summary, content, encrypted_content: encrypted, status, ...rest} = item;
    const extra = Object.keys(rest)[0];
    if (extra != null)
        throw OpenAiError.badRequest(`${param}.${extra.slice(0, 40)} is not supported by this server (a reasoning item has id, summary, content and status).`, param);
    if ((id != null && typeof id !== "string") || (status != null && typeof status !== "string"))
        throw OpenAiError.badRequest(`${param}.id and .status must be strings.`, param);
    if (encrypted != null)
        throw OpenAiError.badRequest(`${param}.encrypted_content cannot be read by this server (it encrypts no reasoning): send the item's content instead.`,
            `${param}.encrypted_content`);
    if (summary != null && !(Array.isArray(summary) && summary.length === 0))
        throw OpenAiError.badRequest(`${param}.summary must be empty: this server writes no summaries, so the thinking goes back as the item's content.`,
            `${param}.summary`);
    if (content == null)
        return "";
    if (!Array.isArray(content))
        throw OpenAiError.badRequest(`${param}.content must be a list of {"type": "reasoning_text", "text": "…"} parts.`, `${param}.content`);
    const text = content.map((part: unknown, index) => {
        const at = `${param}.content[${index}]`;
        if (!isPlainObject(part) || part.type !== "reasoning_text" || typeof part.text !== "string" || Object.keys(part).length !== 2)
            throw OpenAiError.badRequest(`${at} must be {"type": "reasoning_text", "text": "…"}.`, at);
        return part.text;
    }).join("");
    if (text.length > TEXT_LIMITS.message)
        throw OpenAiError.badRequest(`${param}.content is longer than ${TEXT_LIMITS.message} characters.`, `${param}.content`);
    return text;
}

function contentText(content: unknown, param: string): string {
    let text: string;
    if (typeof content === "string")
        text = content;
    else if (Array.isArray(content) && content.length > 0)
        text = content.map((part: unknown, index) => {
            const at = `${param}[${index}]`;
            const {type, text: partText, annotations, ...rest} = (typeof part === "object" && part != null ? part : {}) as Body;
            if (type !== "input_text" && type !== "output_text")
                throw OpenAiError.badRequest(`${at} is a ${JSON.stringify(String(type).slice(0, 30))} part: this server takes input_text and output_text parts only, so far.`, at);
            if (typeof partText !== "string")
                throw OpenAiError.badRequest(`${at}.text must be a string.`, at);
            const extra = Object.keys(rest)[0];
            if (extra != null || (annotations != null && !(Array.isArray(annotations) && annotations.length === 0)))
                throw OpenAiError.badRequest(`${at}.${(extra ?? "annotations").slice(0, 40)} is not supported by this server (a text part has type and text).`, at);
            return partText;
        }).join("");
    else
        throw OpenAiError.badRequest(`${param} must be a string or a non-empty list of input_text / output_text parts.`, param);
    if (text.length > TEXT_LIMITS.message)
        throw OpenAiError.badRequest(`${param} is longer than ${TEXT_LIMITS.message} characters.`, param);
    return text;
}
