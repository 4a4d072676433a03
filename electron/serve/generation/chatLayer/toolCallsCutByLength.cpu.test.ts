/**
 * A reply with parallel tool calls cut by the length, asked for whole and streamed (the same request, greedy, the same
 * seed), on a random-weight model whose GGUF carries Qwen2.5's chat template: the whole reply carries the calls the
 * stream handed on (both parse the cut reply as llama.cpp parses an unfinished one), less a last call the stream had
 * begun but that was cut inside its arguments; never the raw tool-call markup as text. On /v1/chat/completions,
 * /v1/messages and /v1/responses, which share that path (serveOpenAi.ts).
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {PlacedModel} from "../../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../../engine/testing/probeEngine.js";
import type {OpenAiServer} from "../../serveOpenAi.js";
import {isWholeJson} from "./ToolCallStream.js";
import {serveTestModel} from "../../testing/servedTestModel.js";
import {chatTemplate, loadTemplatedTestModel, missingTemplates, TEMPLATE_FILES} from "../../testing/templatedTestModel.js";

const QWEN = TEMPLATE_FILES.qwen25;
const probe = await probeEngine("cpu", {maxThreads: 1});
const skip = probe.reason ?? missingTemplates([QWEN]);
if (skip != null)
    console.warn(`[skip] tool calls cut by the length: ${skip}`);

const TIME_PARAMETERS = {type: "object" as const, properties: {zone: {enum: ["utc", "cet"]}}, required: ["zone"], additionalProperties: false};
const QUESTION = "What time is it?";
/**
 * Lengths to cut the reply at. Greedy, this model writes one call after another, each with runs of JSON whitespace:
 * these fall before the first call opens, inside a call's arguments, and between calls.
 */
const CUTS = [48, 64, 80, 112, 144, 168, 200];

type Call = {name: string; arguments: string};

/**
 * What a whole reply must carry, given the calls the stream assembled: all of them, less a last one cut inside its
 * arguments (not a JSON value yet) — no client could run it.
 */
function completeOf(streamed: readonly Call[]): Call[] {
    const last = streamed.at(-1);
    return last == null || isWholeJson(last.arguments) ? [...streamed] : streamed.slice(0, -1);
}

describe.skipIf(skip != null)("tool calls cut by max_tokens, whole and streamed (CPU, generated model with Qwen2.5's template)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;
    /** The cut lengths at which the chat stream's last call was whole, and at which it was cut inside its arguments after a whole one. */
    const shapes = {betweenCalls: [] as number[], insideCall: [] as number[]};

    beforeAll(async () => {
        placed = await loadTemplatedTestModel(probe.engine!, "tools-cut-qwen", chatTemplate(QWEN));
        server = await serveTestModel(placed);
        client = new OpenAI({baseURL: server.url, apiKey: "none", maxRetries: 0});
    }, 120_000);
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("chat completions: the whole reply's tool_calls are the calls the stream assembled that were complete, finish_reason still \"length\"", async () => {
        for (const max_tokens of CUTS) {
            const request = {model: "kv-tiny", messages: [{role: "user" as const, content: QUESTION}], max_tokens, temperature: 0, seed: 7,
                tools: [{type: "function" as const, function: {name: "get_time", parameters: TIME_PARAMETERS}}],
                tool_choice: "required" as const, parallel_tool_calls: true};
            const whole = (await client.chat.completions.create(request)).choices[0]!;
            const streamed = (await client.chat.completions.stream({...request, stream: true}).finalChatCompletion()).choices[0]!;
            const at = `cut at ${max_tokens} tokens`;
            expect(whole.finish_reason, at).toBe("length");
            expect(streamed.finish_reason, at).toBe("length");
            const asCalls = (calls: typeof whole.message.tool_calls): Call[] =>
                (calls ?? []).map((call) => call.type === "function" ? {name: call.function.name, arguments: call.function.arguments} : {name: call.type, arguments: ""});
            const streamedCalls = asCalls(streamed.message.tool_calls);
            const wholeCalls = asCalls(whole.message.tool_calls);
            expect(wholeCalls, `${at}: streamed ${JSON.stringify(streamedCalls)}`).toEqual(completeOf(streamedCalls));
            for (const call of whole.message.tool_calls ?? [])
                expect(call.id, at).toMatch(/^call_/);
            // the markup of a call is never given as the reply's text
            expect(whole.message.content ?? "", at).toBe(streamed.message.content ?? "");
            expect(whole.message.content ?? "", at).not.toMatch(/<tool_call>|"name"|"arguments"/);
            if (wholeCalls.length > 0)
                (streamedCalls.length === wholeCalls.length ? shapes.betweenCalls : shapes.insideCall).push(max_tokens);
        }
        // both ways a cut can fall after a whole call were met: otherwise CUTS no longer fit this model's reply
        expect(shapes.betweenCalls.length, JSON.stringify(shapes)).toBeGreaterThan(0);
        expect(shapes.insideCall.length, JSON.stringify(shapes)).toBeGreaterThan(0);
    }, 180_000);

    it("/v1/messages and /v1/responses, whose replies take the same path: whole, the complete calls as tool_use and function_call items", async () => {
        expect(shapes.insideCall.length, "the chat completions test ran first and found its cuts").toBeGreaterThan(0);
        const anthropic = new Anthropic({baseURL: server.url.replace(/\/v1$/, ""), apiKey: "none", maxRetries: 0});
        /** Streamed calls cut inside their arguments, per API: a whole tool_use cannot carry one (its input is an object). */
        const unfinished = {messages: 0, responses: 0};
        for (const max_tokens of [shapes.betweenCalls[0]!, shapes.insideCall[0]!]) {
            const at = `cut at ${max_tokens} tokens`;
            // temperature is honoured; the SDK's types no longer list it
            const message = {model: "kv-tiny", max_tokens, ...{temperature: 0}, messages: [{role: "user" as const, content: QUESTION}],
                tools: [{name: "get_time", input_schema: TIME_PARAMETERS}], tool_choice: {type: "any" as const}};
            const whole = await anthropic.messages.create(message);
            // the stream's calls as sent (input_json_delta pieces), before the SDK mends a cut one into an object
            const sent = new Map<number, Call>();
            for await (const event of anthropic.messages.stream(message)) {
                if (event.type === "content_block_start" && event.content_block.type === "tool_use")
                    sent.set(event.index, {name: event.content_block.name, arguments: ""});
                if (event.type === "content_block_delta" && event.delta.type === "input_json_delta")
                    sent.get(event.index)!.arguments += event.delta.partial_json;
            }
            const complete = completeOf([...sent.values()]);
            unfinished.messages += sent.size - complete.length;
            expect(whole.stop_reason, at).toBe("max_tokens");
            expect(complete.length, at).toBeGreaterThan(0);
            expect(whole.content.filter((block) => block.type === "text"), at).toEqual([]);
            expect(whole.content.map((block) => block.type === "tool_use" ? {name: block.name, input: block.input} : block), at)
                .toEqual(complete.map((call) => ({name: call.name, input: JSON.parse(call.arguments) as unknown})));

            const response = {model: "kv-tiny", input: QUESTION, max_output_tokens: max_tokens, temperature: 0,
                tools: [{type: "function" as const, name: "get_time", parameters: TIME_PARAMETERS, strict: true}],
                tool_choice: "required" as const};
            const wholeResponse = await client.responses.create(response);
            const streamedResponse = await client.responses.stream(response).finalResponse();
            const callsOf = (output: typeof wholeResponse.output): Call[] =>
                output.flatMap((item) => item.type === "function_call" ? [{name: item.name, arguments: item.arguments}] : []);
            expect(wholeResponse.status, at).toBe("incomplete");
            expect(streamedResponse.status, at).toBe("incomplete");
            expect(callsOf(wholeResponse.output).length, at).toBeGreaterThan(0);
            expect(callsOf(wholeResponse.output), at).toEqual(completeOf(callsOf(streamedResponse.output)));
            expect(wholeResponse.output_text, at).toBe("");
            unfinished.responses += callsOf(streamedResponse.output).length - callsOf(wholeResponse.output).length;
        }
        // the same prompt as the chat's: one of the two cuts fell inside a call there too
        expect(unfinished).toEqual({messages: 1, responses: 1});
    }, 180_000);
});
