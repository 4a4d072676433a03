/**
 * Streamed and whole replies that make tool calls, in each API's shape, read back by the official clients
 * (`openai`'s chat-completions and Responses stream helpers, `@anthropic-ai/sdk`'s message stream). A random-weight
 * model never finishes a call by itself (llama.cpp's tool-call grammars allow text before the call), so the reply here
 * is a fixed sequence of the pieces ToolCallStream.ts hands on, written by the same reply code serveOpenAi.ts uses:
 * the Anthropic and Responses formats, and the chat chunks (openAiResponses.ts) in serveOpenAi.ts's order.
 */
import http from "node:http";
import type {AddressInfo} from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {anthropicMessageFormat} from "../../protocols/anthropic/anthropicReplies.js";
import {type Finished, type ReplyFormat} from "../../protocols/ReplyFormat.js";
import {chatFinishReason, chunkBody, completionBody} from "../../protocols/openai/replyBodies.js";
import {parseResponsesRequest} from "../../protocols/responses/parseResponsesRequest.js";
import {responsesFormat} from "../../protocols/responses/responsesReplies.js";
import {SseWriter} from "../../common/SseWriter.js";
import {newToolCallId} from "./toolCallPrompt.js";
import type {ReplyDelta} from "./ToolCallStream.js";

const TEXT = "Let me check.";
/** The pieces of a reply: text, then two calls, the first one's arguments in pieces. */
function pieces(newId: () => string): ReplyDelta[] {
    const first = newId();
    const second = newId();
    return [
        {type: "content", text: "Let me "}, {type: "content", text: "check."},
        {type: "tool_call", index: 0, id: first, name: "get_time", opens: true, arguments: ""},
        {type: "tool_call", index: 0, id: first, name: "get_time", opens: false, arguments: "{\"zone\":"},
        {type: "tool_call", index: 0, id: first, name: "get_time", opens: false, arguments: "\"cet\"}"},
        {type: "tool_call", index: 1, id: second, name: "get_weather", opens: true, arguments: "{\"city\":\"Paris\"}"}
    ];
}

function finishedOf(deltas: ReplyDelta[], kind: "chat"): Finished {
    const calls = new Map<number, {id: string; name: string; arguments: string}>();
    for (const delta of deltas)
        if (delta.type === "tool_call") {
            const call = calls.get(delta.index) ?? {id: delta.id, name: delta.name, arguments: ""};
            call.arguments += delta.arguments;
            calls.set(delta.index, call);
        }
    return {
        id: "reply-1", created: 1, model: "kv-tiny", kind, text: TEXT, finishReason: "stop", promptTokens: 10,
        timing: {promptTokens: 10, generatedTokens: 30, ttftMs: 1, tpotMs: 1, totalMs: 30}, stopSequence: null, queueMs: 0, promptTokensEvaluated: 10,
        sequence: 0, conversation: null, kv: {path: "new", decision: null, restoreMs: 0, evicted: null}, logprobs: null, promptLength: 0,
        toolCalls: [...calls.values()], reasoning: "", reasoningTokens: 0
    };
}

/** Writes the reply in `format`'s shape, or (no format) as chat-completion chunks in serveOpenAi.ts's order. */
function reply(response: http.ServerResponse, stream: boolean, format: ReplyFormat | null): void {
    const deltas = pieces(format?.newToolCallId ?? newToolCallId);
    const finished = finishedOf(deltas, "chat");
    if (!stream) {
        const body = JSON.stringify(format != null ? format.body(finished) : completionBody(finished));
        response.writeHead(200, {"Content-Type": "application/json"}).end(body);
        return;
    }
    const sse = new SseWriter(response);
    const chat = {id: finished.id, created: 1, model: "kv-tiny", kind: "chat" as const};
    if (format != null)
        format.open(sse, {id: finished.id, created: 1, model: "kv-tiny", promptTokens: 10});
    else
        sse.send(chunkBody(chat, {role: true}));
    for (const delta of deltas)
        if (format == null)
            sse.send(chunkBody(chat, delta.type === "content" ? {text: delta.text} : delta.type === "reasoning" ? {reasoning: delta.text} : {toolCall: delta}));
        else if (delta.type === "content")
            format.text(sse, delta.text);
        else if (delta.type === "reasoning")
            format.reasoning(sse, delta.text);
        else
            format.toolCall(sse, delta);
    if (format != null)
        format.finish(sse, finished);
    else {
        sse.send(chunkBody(chat, {finishReason: chatFinishReason(finished)}));
        sse.done();
    }
}

describe("replies with tool calls, read back by the official clients", () => {
    let server: http.Server;
    let base = "";
    const requests: {path: string; body: Record<string, unknown>}[] = [];

    beforeAll(async () => {
        server = http.createServer((request, response) => {
            let text = "";
            request.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
            request.on("end", () => {
                const body = JSON.parse(text) as Record<string, unknown>;
                const path = (request.url ?? "").split("?")[0]!;
                requests.push({path, body});
                const format = path === "/v1/messages" ? anthropicMessageFormat(true) : path === "/v1/responses" ? responsesFormat(parseResponsesRequest(body)) : null;
                reply(response, body.stream === true, format);
            });
        });
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("chat completions: the stream helper puts the tool_calls deltas together into the whole reply's calls", async () => {
        const client = new OpenAI({baseURL: `${base}/v1`, apiKey: "none", maxRetries: 0});
        const request = {model: "kv-tiny", messages: [{role: "user" as const, content: "Time?"}]};
        const whole = await client.chat.completions.create(request);
        const stream = client.chat.completions.stream({...request, stream: true});
        const ids: (string | undefined)[] = [];
        for await (const chunk of stream)
            ids.push(...(chunk.choices[0]?.delta.tool_calls ?? []).map((call) => call.id));
        const final = await stream.finalChatCompletion();
        for (const completion of [whole, final]) {
            expect(completion.choices[0]!.finish_reason).toBe("tool_calls");
            expect(completion.choices[0]!.message.content).toBe(TEXT);
            const calls = completion.choices[0]!.message.tool_calls!.map((call) => call.type === "function" ? call.function : null);
            expect(calls).toEqual([{name: "get_time", arguments: "{\"zone\":\"cet\"}"}, {name: "get_weather", arguments: "{\"city\":\"Paris\"}"}]);
        }
        // the id comes once per call, on its first piece
        expect(ids.filter((id) => id != null)).toEqual(final.choices[0]!.message.tool_calls!.map((call) => call.id));
        expect(ids.filter((id) => id != null).every((id) => id!.startsWith("call_"))).toBe(true);
        expect(ids).toHaveLength(4);
    });

    it("Anthropic messages: a text block and two tool_use blocks, streamed as Anthropic streams them and whole", async () => {
        const client = new Anthropic({baseURL: base, apiKey: "none", maxRetries: 0});
        const request = {model: "kv-tiny", max_tokens: 50, messages: [{role: "user" as const, content: "Time?"}]};
        const whole = await client.messages.create(request);
        const stream = client.messages.stream(request);
        const events: string[] = [];
        for await (const event of stream)
            events.push(event.type === "content_block_start" ? `start ${event.content_block.type} ${event.index}`
                : event.type === "content_block_delta" ? `${event.delta.type} ${event.index}` : event.type === "content_block_stop" ? `stop ${event.index}` : event.type);
        const final = await stream.finalMessage();
        for (const message of [whole, final]) {
            expect(message.stop_reason).toBe("tool_use");
            expect(message.content.map((block) => block.type === "tool_use" ? {type: block.type, name: block.name, input: block.input} : block))
                .toEqual([{type: "text", text: TEXT}, {type: "tool_use", name: "get_time", input: {zone: "cet"}}, {type: "tool_use", name: "get_weather", input: {city: "Paris"}}]);
            expect(message.content.filter((block) => block.type === "tool_use").every((block) => block.id.startsWith("toolu_"))).toBe(true);
        }
        expect(events).toEqual(["message_start", "start text 0", "text_delta 0", "text_delta 0", "stop 0", "start tool_use 1", "input_json_delta 1",
            "input_json_delta 1", "stop 1", "start tool_use 2", "input_json_delta 2", "stop 2", "message_delta", "message_stop"]);
    });

    it("Responses: a message and two function_call items, streamed with function_call_arguments events and whole", async () => {
        const client = new OpenAI({baseURL: `${base}/v1`, apiKey: "none", maxRetries: 0});
        const tools = [{type: "function" as const, name: "get_time", parameters: {type: "object", properties: {zone: {type: "string"}}}, strict: false},
            {type: "function" as const, name: "get_weather", parameters: {type: "object", properties: {city: {type: "string"}}}, strict: false}];
        const request = {model: "kv-tiny", input: "Time?", tools};
        const whole = await client.responses.create(request);
        const stream = client.responses.stream(request);
        const events: string[] = [];
        const argumentDeltas: string[] = [];
        for await (const event of stream) {
            events.push(event.type);
            if (event.type === "response.function_call_arguments.delta")
                argumentDeltas.push(event.delta);
        }
        const final = await stream.finalResponse();
        for (const response of [whole, final]) {
            expect(response.status).toBe("completed");
            expect(response.output_text).toBe(TEXT);
            const calls = response.output.filter((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall[];
            expect(calls.map((item) => ({name: item.name, arguments: item.arguments, status: item.status})))
                .toEqual([{name: "get_time", arguments: "{\"zone\":\"cet\"}", status: "completed"}, {name: "get_weather", arguments: "{\"city\":\"Paris\"}", status: "completed"}]);
            expect(calls.every((item) => item.id!.startsWith("fc_") && item.call_id.startsWith("call_"))).toBe(true);
            expect(response.tools.map((tool) => tool.type === "function" && tool.name)).toEqual(["get_time", "get_weather"]);
        }
        expect(argumentDeltas).toEqual(["{\"zone\":", "\"cet\"}", "{\"city\":\"Paris\"}"]);
        expect(events.filter((type, index) => type !== events[index - 1])).toEqual(["response.created", "response.in_progress",
            "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done",
            "response.output_item.done", "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done",
            "response.output_item.done", "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done",
            "response.output_item.done", "response.completed"]);
        expect(requests.some((request) => request.path === "/v1/responses")).toBe(true);
    });
});
