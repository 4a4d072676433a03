/**
 * Replies in the OpenAI Responses API's shapes: the `response` object (a reasoning model's thinking first, as a
 * `reasoning` item whose `content` is one `reasoning_text` part and whose `summary` is empty — this server writes no
 * summaries —, an assistant message with one `output_text` part, and with tools a `function_call` item per call) and its
 * streamed events, each with a `sequence_number`:
 * `response.created`, `response.in_progress`, `response.output_item.added`, `response.content_part.added`,
 * `response.output_text.delta`…, `response.output_text.done`, `response.content_part.done` (for thinking
 * `response.reasoning_text.delta`… and `response.reasoning_text.done` inside the same part events),
 * `response.output_item.done`; for a call `response.output_item.added`, `response.function_call_arguments.delta`…,
 * `response.function_call_arguments.done`, `response.output_item.done`; then `response.completed` (or
 * `response.incomplete` when `max_output_tokens` cut it short, as OpenAI ends such a response).
 */
import {randomBytes} from "node:crypto";
import {cachedPromptTokens, type Finished, type ReplyFormat, type ReplyStart} from "../ReplyFormat.js";
import type {ResponsesRequest} from "./parseResponsesRequest.js";
import type {SseWriter} from "../../common/SseWriter.js";
import {newToolCallId} from "../../generation/chatLayer/toolCallPrompt.js";
import type {ToolCall} from "../../common/GenerationRequest.js";

const itemId = (prefix: "msg" | "fc" | "rs") => `${prefix}_${randomBytes(12).toString("hex")}`;

/**
 * A `/v1/responses` reply to `request`, streamed or whole. A reply that can only be text has its message item open
 * with the response; one parsed by llama.cpp's chat layer (`parsed`: the request has tools, or the model's template
 * thinks) opens each item when its first piece comes (thinking, text, or a call), as OpenAI streams them.
 */
export function responsesFormat(request: ResponsesRequest, parsed = request.tools != null): ReplyFormat {
    const messageId = itemId("msg");
    const reasoningId = itemId("rs");
    let thinking = "";
    let messageOpened = false;
    /** The function_call item id of each call id, so streamed and final items agree. */
    const callItems = new Map<string, string>();
    let sequence = 0;
    let start: ReplyStart | null = null;
    let text = "";
    /** Output items opened so far while streaming, and the one still open. */
    let opened = 0;
    let current: {kind: "message" | "reasoning"; index: number} | {kind: "call"; index: number; call: ToolCall} | null = null;
    const part = (done: boolean) => ({type: "output_text", text: done ? text : "", annotations: []});
    const reasoningPart = (done: boolean) => ({type: "reasoning_text", text: done ? thinking : ""});
    const reasoningItem = (done: boolean) => ({type: "reasoning", id: reasoningId, summary: [], content: done ? [reasoningPart(true)] : [],
        status: done ? "completed" : "in_progress"});
    const message = (done: boolean) => ({type: "message", id: messageId, status: done ? "completed" : "in_progress", role: "assistant", content: done ? [part(true)] : []});
    const callItem = (call: ToolCall, done: boolean) => {
        const id = callItems.get(call.id) ?? itemId("fc");
        callItems.set(call.id, id);
        return {type: "function_call", id, call_id: call.id, name: call.name, arguments: done ? call.arguments : "", status: done ? "completed" : "in_progress"};
    };
    const output = (finished: Finished) => {
        const calls = finished.toolCalls ?? [];
        return [...(thinking !== "" ? [reasoningItem(true)] : []), ...(text !== "" || calls.length === 0 ? [message(true)] : []),
            ...calls.map((call) => callItem(call, true))];
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
            output_tokens: finished.timing.generatedTokens, output_tokens_details: {reasoning_tokens: finished.reasoningTokens},
            total_tokens: finished.promptTokens + finished.timing.generatedTokens
        }
    });
    const statusOf = (finished: Finished) => finished.finishReason === "length" ? "incomplete" as const : "completed" as const;
    const send = (sse: SseWriter, type: string, fields: Record<string, unknown>) => sse.event(type, {type, sequence_number: sequence++, ...fields});
    const openMessage = (sse: SseWriter) => {
        messageOpened = true;
        current = {kind: "message", index: opened++};
        send(sse, "response.output_item.added", {output_index: current.index, item: message(false)});
        send(sse, "response.content_part.added", {item_id: messageId, output_index: current.index, content_index: 0, part: part(false)});
    };
    const openReasoning = (sse: SseWriter) => {
        current = {kind: "reasoning", index: opened++};
        send(sse, "response.output_item.added", {output_index: current.index, item: reasoningItem(false)});
        send(sse, "response.content_part.added", {item_id: reasoningId, output_index: current.index, content_index: 0, part: reasoningPart(false)});
    };
    /** Ends the item still open (its done events). */
    const closeItem = (sse: SseWriter) => {
        const item = current;
        current = null;
        if (item?.kind === "reasoning") {
            const where = {item_id: reasoningId, output_index: item.index, content_index: 0};
            send(sse, "response.reasoning_text.done", {...where, text: thinking});
            send(sse, "response.content_part.done", {...where, part: reasoningPart(true)});
            send(sse, "response.output_item.done", {output_index: item.index, item: reasoningItem(true)});
        } else if (item?.kind === "message") {
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
    return {
        idPrefix: "resp",
        open: (sse, begun) => {
            start = begun;
            send(sse, "response.created", {response: response("in_progress", null)});
            send(sse, "response.in_progress", {response: response("in_progress", null)});
            if (!parsed)
                openMessage(sse);
        },
        reasoning: (sse, delta) => {
            if (current?.kind !== "reasoning") {
                closeItem(sse);
                openReasoning(sse);
            }
            thinking += delta;
            send(sse, "response.reasoning_text.delta", {item_id: reasoningId, output_index: current!.index, content_index: 0, delta});
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
            thinking = finished.reasoning;
            // the whole body's message item: there when it has text or no calls
            if (!messageOpened && (text !== "" || (finished.toolCalls ?? []).length === 0)) {
                closeItem(sse);
                openMessage(sse);
            }
            closeItem(sse);
            const status = statusOf(finished);
            sse.end({name: `response.${status}`, data: {type: `response.${status}`, sequence_number: sequence++, response: response(status, finished)}});
        },
        body: (finished) => {
            text = finished.text;
            thinking = finished.reasoning;
            return response(statusOf(finished), finished);
        },
        fail: (sse, error) => sse.end({name: "error", data: {type: "error", sequence_number: sequence++, code: error.code, message: error.message, param: error.param}})
    };
}
