/**
 * Replies and errors in Anthropic's Messages API shapes: the `message` object, the streamed event sequence
 * (`message_start`, `content_block_start`, `ping`, `content_block_delta` with `thinking_delta`, `text_delta` or `input_json_delta`, `content_block_stop`,
 * `message_delta` with the stop reason and usage, `message_stop`), and `{type: "error", error: {type, message}}`.
 */
import {randomBytes} from "node:crypto";
import {OpenAiError} from "../../common/OpenAiError.js";
import {cachedPromptTokens, type Finished, type ReplyFormat} from "../ReplyFormat.js";
import type {SseWriter} from "../../common/SseWriter.js";
import type {ToolCall} from "../../common/GenerationRequest.js";

/** Anthropic's error type for each HTTP status this server answers with. */
function errorType(status: number): string {
    switch (status) {
        case 400: case 405: case 413: case 421: return status === 413 ? "request_too_large" : "invalid_request_error";
        case 401: return "authentication_error";
        case 403: return "permission_error";
        case 404: return "not_found_error";
        case 429: return "rate_limit_error";
        case 503: return "overloaded_error";
        case 504: return "timeout_error";
        default: return "api_error";
    }
}

/** An error's body in Anthropic's shape. */
export function anthropicErrorBody(error: OpenAiError): unknown {
    return {type: "error", error: {type: errorType(error.status), message: error.message}};
}

function stopReason(finished: Finished): "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" {
    return finished.finishReason === "length" ? "max_tokens" : finished.stopSequence != null ? "stop_sequence"
        : (finished.toolCalls?.length ?? 0) > 0 ? "tool_use" : "end_turn";
}

/** A tool call's input as the object Anthropic's `tool_use` block carries (llama.cpp writes a whole call's arguments as a JSON object). */
function toolInput(call: ToolCall): unknown {
    try {
        return JSON.parse(call.arguments);
    } catch {
        throw new OpenAiError(500, `The model's call of ${call.name} has arguments that are not JSON.`, "server_error", "unparsable_reply");
    }
}

/**
 * A `/v1/messages` reply, streamed or whole. A reply that can only be text has its one text block open with the message;
 * one parsed by llama.cpp's chat layer (`parsed`: the request has tools, or the model's template thinks) opens each block
 * when its first piece comes: a `thinking` block (streamed as `thinking_delta`; this server signs none, so its
 * `signature` is ""), text, or a `tool_use` whose input streams as `input_json_delta` pieces, as Anthropic streams them.
 */
export function anthropicMessageFormat(parsed = false): ReplyFormat {
    let index = -1;
    let block: "thinking" | "text" | "tool_use" | null = null;
    const close = (sse: SseWriter) => {
        if (block != null)
            sse.event("content_block_stop", {type: "content_block_stop", index});
        block = null;
    };
    /** Whether a text or tool_use block has opened. */
    let answered = false;
    const start = (sse: SseWriter, content: unknown, type: "thinking" | "text" | "tool_use") => {
        close(sse);
        answered ||= type !== "thinking";
        index++;
        block = type;
        sse.event("content_block_start", {type: "content_block_start", index, content_block: content});
    };
    return {
        idPrefix: "msg",
        open: (sse, opened) => {
            sse.event("message_start", {type: "message_start", message: {
                id: opened.id, type: "message", role: "assistant", model: opened.model, content: [], stop_reason: null, stop_sequence: null,
                usage: {input_tokens: opened.promptTokens, output_tokens: 0}
            }});
            if (!parsed)
                start(sse, {type: "text", text: ""}, "text");
            sse.event("ping", {type: "ping"});
        },
        reasoning: (sse, thinking) => {
            if (block !== "thinking")
                start(sse, {type: "thinking", thinking: "", signature: ""}, "thinking");
            sse.event("content_block_delta", {type: "content_block_delta", index, delta: {type: "thinking_delta", thinking}});
        },
        text: (sse, text) => {
            if (block !== "text")
                start(sse, {type: "text", text: ""}, "text");
            sse.event("content_block_delta", {type: "content_block_delta", index, delta: {type: "text_delta", text}});
        },
        newToolCallId: () => `toolu_${randomBytes(12).toString("hex")}`,
        toolCall: (sse, delta) => {
            if (delta.opens)
                start(sse, {type: "tool_use", id: delta.id, name: delta.name, input: {}}, "tool_use");
            if (delta.arguments !== "")
                sse.event("content_block_delta", {type: "content_block_delta", index, delta: {type: "input_json_delta", partial_json: delta.arguments}});
        },
        finish: (sse, finished) => {
            // a reply with no answer in it still has its (empty) text block, as its whole body does
            if (!answered)
                start(sse, {type: "text", text: ""}, "text");
            close(sse);
            // cumulative, as Anthropic's API sends it: the split of the input is known only once the cache was looked up
            sse.event("message_delta", {type: "message_delta", delta: {stop_reason: stopReason(finished), stop_sequence: finished.stopSequence},
                usage: anthropicUsage(finished)});
            sse.end({name: "message_stop", data: {type: "message_stop"}});
        },
        body: (finished) => {
            const calls = finished.toolCalls ?? [];
            return {
                id: finished.id, type: "message", role: "assistant", model: finished.model,
                content: [...(finished.reasoning !== "" ? [{type: "thinking", thinking: finished.reasoning, signature: ""}] : []),
                    ...(finished.text !== "" || calls.length === 0 ? [{type: "text", text: finished.text}] : []),
                    ...calls.map((call) => ({type: "tool_use", id: call.id, name: call.name, input: toolInput(call)}))],
                stop_reason: stopReason(finished), stop_sequence: finished.stopSequence,
                usage: anthropicUsage(finished)
            };
        },
        fail: (sse, error) => sse.end({name: "error", data: anthropicErrorBody(error)})
    };
}

/**
 * Anthropic's usage: `input_tokens` are the prompt tokens evaluated, `cache_read_input_tokens` those whose KV cache
 * this conversation's sequence still held (Anthropic counts the two apart; their sum is the prompt). As llama-server
 * answers (server-task.cpp); no `cache_creation_input_tokens`: there are no cache breakpoints to write.
 */
export function anthropicUsage(finished: Finished): {input_tokens: number; cache_read_input_tokens: number; output_tokens: number} {
    const cached = cachedPromptTokens(finished);
    return {input_tokens: finished.promptTokens - cached, cache_read_input_tokens: cached, output_tokens: finished.timing.generatedTokens};
}
