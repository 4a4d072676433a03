/**
 * Replies in the OpenAI Responses API's shapes: the `response` object (one assistant message with one `output_text`
 * part) and its streamed events, each with a `sequence_number`: `response.created`, `response.in_progress`,
 * `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`…,
 * `response.output_text.done`, `response.content_part.done`, `response.output_item.done`, then `response.completed`
 * (or `response.incomplete` when `max_output_tokens` cut it short, as OpenAI ends such a response).
 */
import {randomBytes} from "node:crypto";
import {OpenAiError} from "./OpenAiError.js";
import type {Finished} from "./openAiResponses.js";
import {newToolCallId} from "./toolCallPrompt.js";
import type {ResponsesRequest} from "./parseResponsesRequest.js";
import type {ReplyFormat, ReplyStart} from "./ReplyFormat.js";

/** A `/v1/responses` reply to `request`, streamed or whole. */
export function responsesFormat(request: ResponsesRequest): ReplyFormat {
    const itemId = `msg_${randomBytes(12).toString("hex")}`;
    let sequence = 0;
    let start: ReplyStart | null = null;
    let text = "";
    const part = (done: boolean) => ({type: "output_text", text: done ? text : "", annotations: []});
    const item = (done: boolean) => ({type: "message", id: itemId, status: done ? "completed" : "in_progress", role: "assistant", content: done ? [part(true)] : []});
    const response = (status: "in_progress" | "completed" | "incomplete", finished: Finished | null) => ({
        id: start?.id ?? finished?.id, object: "response", created_at: start?.created ?? finished?.created, status, model: start?.model ?? finished?.model,
        output: finished == null ? [] : [item(true)],
        incomplete_details: status === "incomplete" ? {reason: "max_output_tokens"} : null,
        error: null, instructions: request.instructions, max_output_tokens: request.maxOutputTokens, temperature: request.temperatureSent, top_p: request.topPSent,
        parallel_tool_calls: false, tool_choice: "none", tools: [], store: false, previous_response_id: null, text: {format: request.textFormat ?? {type: "text"}},
        truncation: "disabled", user: request.user, metadata: {},
        usage: finished == null ? null : {
            input_tokens: finished.promptTokens, input_tokens_details: {cached_tokens: Math.max(0, finished.promptTokens - finished.promptTokensEvaluated)},
            output_tokens: finished.timing.generatedTokens, output_tokens_details: {reasoning_tokens: 0},
            total_tokens: finished.promptTokens + finished.timing.generatedTokens
        }
    });
    const statusOf = (finished: Finished) => finished.finishReason === "length" ? "incomplete" as const : "completed" as const;
    const where = {item_id: itemId, output_index: 0, content_index: 0};
    return {
        idPrefix: "resp",
        open: (sse, opened) => {
            start = opened;
            sse.event("response.created", {type: "response.created", sequence_number: sequence++, response: response("in_progress", null)});
            sse.event("response.in_progress", {type: "response.in_progress", sequence_number: sequence++, response: response("in_progress", null)});
            sse.event("response.output_item.added", {type: "response.output_item.added", sequence_number: sequence++, output_index: 0, item: item(false)});
            sse.event("response.content_part.added", {type: "response.content_part.added", sequence_number: sequence++, ...where, part: part(false)});
        },
        text: (sse, delta) => {
            text += delta;
            sse.event("response.output_text.delta", {type: "response.output_text.delta", sequence_number: sequence++, ...where, delta, logprobs: []});
        },
        finish: (sse, finished) => {
            text = finished.text;
            sse.event("response.output_text.done", {type: "response.output_text.done", sequence_number: sequence++, ...where, text, logprobs: []});
            sse.event("response.content_part.done", {type: "response.content_part.done", sequence_number: sequence++, ...where, part: part(true)});
            sse.event("response.output_item.done", {type: "response.output_item.done", sequence_number: sequence++, output_index: 0, item: item(true)});
            const status = statusOf(finished);
            sse.end({name: `response.${status}`, data: {type: `response.${status}`, sequence_number: sequence++, response: response(status, finished)}});
        },
        body: (finished) => {
            text = finished.text;
            return response(statusOf(finished), finished);
        },
        newToolCallId,
        // parseResponsesRequest.ts refuses tools, so no call is ever made here
        toolCall: () => {
            throw new OpenAiError(500, "This server does not stream tool calls on /v1/responses.", "server_error", "internal");
        },
        fail: (sse, error) => sse.end({name: "error", data: {type: "error", sequence_number: sequence++, code: error.code, message: error.message, param: error.param}})
    };
}
