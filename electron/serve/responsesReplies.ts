/**
 * Replies in the OpenAI Responses API's shapes: the `response` object (an assistant message with one `output_text`
 * part, and with tools a `function_call` item per call) and its streamed events, each with a `sequence_number`:
 * `response.created`, `response.in_progress`, `response.output_item.added`, `response.content_part.added`,
 * `response.output_text.delta`…, `response.output_text.done`, `response.content_part.done`,
 * `response.output_item.done`; for a call `response.output_item.added`, `response.function_call_arguments.delta`…,
 * `response.function_call_arguments.done`, `response.output_item.done`; then `response.completed` (or
 * `response.incomplete` when `max_output_tokens` cut it short, as OpenAI ends such a response).
 */
import {randomBytes} from "node:crypto";
import {cachedPromptTokens, type Finished} from "./openAiResponses.js";
import type {ResponsesRequest} from "./parseResponsesRequest.js";
import type {ReplyFormat, ReplyStart} from "./ReplyFormat.js";
import type {SseWriter} from "./SseWriter.js";
import {newToolCallId} from "./toolCallPrompt.js";
import type {ToolCall} from "./toolRequest.js";

const itemId = (prefix: "msg" | "fc") => `${prefix}_${randomBytes(12).toString("hex")}`;

/**
 * A `/v1/responses` reply to `request`, streamed or whole. Without tools the message item opens with the response;
 * with tools each item opens when its first piece comes (text, or a call), as OpenAI streams them.
 */
export function responsesFormat(request: ResponsesRequest): ReplyFormat {
    const messageId = itemId("msg");
    /** The function_call item id of each call id, so streamed and final items agree. */
    const callItems = new Map<string, string>();
    let sequence = 0;
    let start: ReplyStart | null = null;
    let text = "";
    /** Output items opened so far while streaming, and the one still open. */
    let opened = 0;
    let current: {kind: "message"; index: number} | {kind: "call"; index: number; call: ToolCall} | null = null;
    const part = (done: boolean) => ({type: "output_text", text: done ? text : "", annotations: []});
    const message = (done: boolean) => ({type: "message", id: messageId, status: done ? "completed" : "in_progress", role: "assistant", content: done ? [part(true)] : []});
    const callItem = (call: ToolCall, done: boolean) => {
        const id = callItems.get(call.id) ?? itemId("fc");
        callItems.set(call.id, id);
        return {type: "function_call", id, call_id: call.id, name: call.name, arguments: done ? call.arguments : "", status: done ? "completed" : "in_progress"};
    };
    const output = (finished: Finished) => {
        const calls = finished.toolCalls ?? [];
        return [...(text !== "" || calls.length === 0 ? [message(true)] : []), ...calls.map((call) => callItem(call, true))];
    };
    const response = (status: "in_progress" | "completed" | "incomplete", finished: Finished | null) => ({
        id: start?.id ?? finished?.id, object: "response", created_at: start?.created ?? finished?.created, status, model: start?.model ?? finished?.model,
        output: finished == null ? [] : output(finished),
        incomplete_details: status === "incomplete" ? {reason: "max_output_tokens"} : null,
        error: null, instructions: request.instructions, max_output_tokens: request.maxOutputTokens, temperature: request.temperatureSent, top_p: request.topPSent,
        parallel_tool_calls: request.toolsSent.parallelToolCalls, tool_choice: request.toolsSent.toolChoice, tools: request.toolsSent.tools, store: false,
        previous_response_id: null, text: {format: request.textFormat ?? {type: "text"}}, truncation: "disabled", user: request.user, metadata: {},
        usage: finished == null ? null : {
            input_tokens: finished.promptTokens, input_tokens_details: {cached_tokens: cachedPromptTokens(finished)},
            output_tokens: finished.timing.generatedTokens, output_tokens_details: {reasoning_tokens: 0},
            total_tokens: finished.promptTokens + finished.timing.generatedTokens
        }
    });
    const statusOf = (finished: Finished) => finished.finishReason === "length" ? "incomplete" as const : "completed" as const;
    const send = (sse: SseWriter, type: string, fields: Record<string, unknown>) => sse.event(type, {type, sequence_number: sequence++, ...fields});
    const openMessage = (sse: SseWriter) => {
        current = {kind: "message", index: opened++};
        send(sse, "response.output_item.added", {output_index: current.index, item: message(false)});
        send(sse, "response.content_part.added", {item_id: messageId, output_index: current.index, content_index: 0, part: part(false)});
    };
    /** Ends the item still open (its done events). */
    const closeItem = (sse: SseWriter) => {
        const item = current;
        current = null;
        if (item?.kind === "message") {
            const where = {item_id: messageId, output_index: item.index, content_index: 0};
            send(sse, "response.output_text.done", {...where, text, logprobs: []});
            send(sse, "response.content_part.done", {...where, part: part(true)});
            send(sse, "response.output_item.done", {output_index: item.index, item: message(true)});
        } else if (item?.kind === "call") {
            const done = callItem(item.call, true);
            send(sse, "response.function_call_arguments.done", {item_id: done.id, output_index: item.index, arguments: item.call.arguments});
            send(sse, "response.output_item.done", {output_index: item.index, item: done});
        }
    };
    const tools = request.tools != null;
    return {
        idPrefix: "resp",
        open: (sse, begun) => {
            start = begun;
            send(sse, "response.created", {response: response("in_progress", null)});
            send(sse, "response.in_progress", {response: response("in_progress", null)});
            if (!tools)
                openMessage(sse);
        },
        text: (sse, delta) => {
            // text after a call (rare) continues the one message item of the final output
            if (current?.kind !== "message") {
                closeItem(sse);
                openMessage(sse);
            }
            text += delta;
            send(sse, "response.output_text.delta", {item_id: messageId, output_index: current!.index, content_index: 0, delta, logprobs: []});
        },
        newToolCallId,
        toolCall: (sse, delta) => {
            if (delta.opens) {
                closeItem(sse);
                const call = {id: delta.id, name: delta.name, arguments: ""};
                current = {kind: "call", index: opened++, call};
                send(sse, "response.output_item.added", {output_index: current.index, item: callItem(call, false)});
            }
            if (current?.kind !== "call" || delta.arguments === "")
                return;
            current.call.arguments += delta.arguments;
            send(sse, "response.function_call_arguments.delta", {item_id: callItems.get(delta.id), output_index: current.index, delta: delta.arguments});
        },
        finish: (sse, finished) => {
            text = finished.text;
            if (opened === 0)
                openMessage(sse);
            closeItem(sse);
            const status = statusOf(finished);
            sse.end({name: `response.${status}`, data: {type: `response.${status}`, sequence_number: sequence++, response: response(status, finished)}});
        },
        body: (finished) => {
            text = finished.text;
            return response(statusOf(finished), finished);
        },
        fail: (sse, error) => sse.end({name: "error", data: {type: "error", sequence_number: sequence++, code: error.code, message: error.message, param: error.param}})
    };
}
