/**
 * Replies and errors in Anthropic's Messages API shapes: the `message` object, the streamed event sequence
 * (`message_start`, `content_block_start`, `ping`, `content_block_delta` with `text_delta`, `content_block_stop`,
 * `message_delta` with the stop reason and usage, `message_stop`), and `{type: "error", error: {type, message}}`.
 */
import type {OpenAiError} from "./OpenAiError.js";
import type {Finished} from "./openAiResponses.js";
import type {ReplyFormat} from "./ReplyFormat.js";

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

function stopReason(finished: Finished): "end_turn" | "max_tokens" | "stop_sequence" {
    return finished.finishReason === "length" ? "max_tokens" : finished.stopSequence != null ? "stop_sequence" : "end_turn";
}

/** A `/v1/messages` reply, streamed or whole. */
export function anthropicMessageFormat(): ReplyFormat {
    return {
        idPrefix: "msg",
        open: (sse, start) => {
            sse.event("message_start", {type: "message_start", message: {
                id: start.id, type: "message", role: "assistant", model: start.model, content: [], stop_reason: null, stop_sequence: null,
                usage: {input_tokens: start.promptTokens, output_tokens: 0}
            }});
            sse.event("content_block_start", {type: "content_block_start", index: 0, content_block: {type: "text", text: ""}});
            sse.event("ping", {type: "ping"});
        },
        text: (sse, text) => sse.event("content_block_delta", {type: "content_block_delta", index: 0, delta: {type: "text_delta", text}}),
        finish: (sse, finished) => {
            sse.event("content_block_stop", {type: "content_block_stop", index: 0});
            sse.event("message_delta", {type: "message_delta", delta: {stop_reason: stopReason(finished), stop_sequence: finished.stopSequence},
                usage: {output_tokens: finished.timing.generatedTokens}});
            sse.end({name: "message_stop", data: {type: "message_stop"}});
        },
        body: (finished) => ({
            id: finished.id, type: "message", role: "assistant", model: finished.model, content: [{type: "text", text: finished.text}],
            stop_reason: stopReason(finished), stop_sequence: finished.stopSequence,
            usage: {input_tokens: finished.promptTokens, output_tokens: finished.timing.generatedTokens}
        }),
        fail: (sse, error) => sse.end({name: "error", data: anthropicErrorBody(error)})
    };
}
