/**
 * LlamaIndex TS (`@llamaindex/openai`'s OpenAI and OpenAIEmbedding, `@llamaindex/core`'s `tool`), used as its
 * documentation shows, against the server on a generated model carrying Qwen2.5's chat template: chat, streaming and
 * complete; structured output through `responseFormat` (a `response_format` on `chat`, a `format_output` tool on
 * `exec`); tool calls through `chat({tools})` and `exec`, whose tool results go back as tool messages; embeddings.
 *
 * What it sends by default (checked on its request bodies): `model`, `messages`, `temperature` (0.1 unless set),
 * `top_p: 1`, `stream`, and `max_tokens` when set; `tools` and `response_format` (`json_schema` with `strict: true` for
 * a zod schema) when asked. It sends no `stream_options`, so a stream carries usage only when the caller adds it.
 * OpenAIEmbedding sends `model`, `input` (always a list) and `encoding_format: "base64"`.
 */
import type {PartialToolCall, ToolCall, ToolCallLLMMessageOptions} from "@llamaindex/core/llms";
import {tool} from "@llamaindex/core/tools";
import {OpenAI, OpenAIEmbedding} from "@llamaindex/openai";
import {Ajv} from "ajv";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {z} from "zod";
import type {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../engine/testing/probeEngine.js";
import type {OpenAiServer} from "../serveOpenAi.js";
import {BOUNDED_JSON_SCHEMA} from "../testing/boundedJsonSchema.js";
import {serveTestModel} from "../testing/servedTestModel.js";
import {chatTemplate, loadTemplatedTestModel, missingTemplates, TEMPLATE_FILES} from "../testing/templatedTestModel.js";

const QWEN = TEMPLATE_FILES.qwen25;
const probe = await probeEngine("cpu", {maxThreads: 1});
const skip = probe.reason ?? missingTemplates([QWEN]);
if (skip != null)
    console.warn(`[skip] LlamaIndex client tests: ${skip}`);

const KEY = "tw-llamaindex-test-0123456789";

/** BOUNDED_JSON_SCHEMA as a zod schema, the way LlamaIndex's documentation writes one. */
const SEA = z.strictObject({
    mood: z.enum(["calm", "stormy"]), ok: z.boolean(), count: z.int().min(0).max(9), name: z.string().max(3), tags: z.array(z.enum(["a", "b"])).max(2)
});

type Usage = {prompt_tokens: number; completion_tokens: number};
const usageOf = (raw: object | null) => (raw as {usage?: Usage} | null)?.usage;
/** The tool calls of a message's options (LlamaIndex's ToolCallLLMMessageOptions: a call, a result, or neither). */
const toolCallsOf = (options: ToolCallLLMMessageOptions | undefined): (ToolCall | PartialToolCall)[] => options != null && "toolCall" in options ? options.toolCall : [];

describe.skipIf(skip != null)("LlamaIndex TS against the server (CPU, generated model with Qwen2.5's template)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    const validate = new Ajv({strict: true}).compile(BOUNDED_JSON_SCHEMA);
    const llm = (fields: ConstructorParameters<typeof OpenAI>[0] = {}) =>
        new OpenAI({model: "kv-tiny", apiKey: KEY, baseURL: server.url, temperature: 0, maxRetries: 0, ...fields});
    const question = {role: "user" as const, content: "What is the weather in Paris?"};

    beforeAll(async () => {
        placed = await loadTemplatedTestModel(probe.engine!, "llamaindex-qwen", chatTemplate(QWEN));
        server = await serveTestModel(placed, {apiKeys: [KEY]});
    }, 120_000);
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("chat answers with usage; a stream hands the same text on in pieces, with usage when asked; complete answers alike", async () => {
        const model = llm({maxTokens: 12});
        const messages = [{role: "user" as const, content: "Hello"}];
        const whole = await model.chat({messages});
        expect(whole.message.role).toBe("assistant");
        expect(typeof whole.message.content).toBe("string");
        expect(whole.message.content).not.toBe("");
        expect(usageOf(whole.raw)).toMatchObject({completion_tokens: 12});
        const pieces: string[] = [];
        let usage: Usage | undefined;
        for await (const chunk of await model.chat({messages, stream: true, additionalChatOptions: {stream_options: {include_usage: true}}})) {
            pieces.push(chunk.delta);
            usage = usageOf(chunk.raw) ?? usage;
        }
        expect(pieces.filter((piece) => piece !== "").length).toBeGreaterThan(3);
        expect(pieces.join("")).toBe(whole.message.content);
        const {prompt_tokens: promptTokens, completion_tokens: completionTokens} = usageOf(whole.raw)!;
        expect(usage).toMatchObject({prompt_tokens: promptTokens, completion_tokens: completionTokens});
        expect((await model.complete({prompt: "Hello"})).text).toBe(whole.message.content);
    });

    it("responseFormat: chat's response_format and exec's format_output tool give objects that validate; json_object gives an object", async () => {
        const model = llm({maxTokens: 1024});
        const byFormat = await model.chat({messages: [{role: "user", content: "Describe the sea."}], responseFormat: SEA});
        const parsed: unknown = JSON.parse(byFormat.message.content as string);
        expect(validate(parsed), JSON.stringify(validate.errors)).toBe(true);
        // exec offers a format_output tool and lets the model choose ("auto"): random weights never choose to call, and a
        // list of calls is never ended by them, so one call is required (a real model calls it once on its own)
        const byTool = await model.exec({messages: [{role: "user", content: "Describe the sea."}], responseFormat: SEA,
            additionalChatOptions: {tool_choice: "required", parallel_tool_calls: false}});
        expect(validate(byTool.object), JSON.stringify(validate.errors)).toBe(true);
        const object = await llm({maxTokens: 64}).chat({messages: [{role: "user", content: "The sea as JSON."}], responseFormat: {type: "json_object"}});
        expect(JSON.parse(object.message.content as string)).toBeTypeOf("object");
    });

    it("chat with tools and a forced one gives a call whose input validates, streamed alike; exec runs it and its result goes back", async () => {
        let ran = 0;
        const weather = tool({name: "get_weather", description: "The weather of a city", parameters: SEA, execute: () => {
            ran++;
            return "Sunny, 21 degrees";
        }});
        const time = tool({name: "get_time", description: "The time in a zone", parameters: z.object({zone: z.enum(["utc", "cet"])}), execute: ({zone}) => `12:00 ${zone}`});
        const model = llm({maxTokens: 1024});
        // one call to get_weather (parallel calls off: see the responseFormat case)
        const forced = {tool_choice: {type: "function", function: {name: "get_weather"}}, parallel_tool_calls: false} as const;
        const reply = await model.chat({messages: [question], tools: [weather, time], additionalChatOptions: forced});
        const calls = toolCallsOf(reply.message.options);
        expect(calls).toHaveLength(1);
        expect(calls[0]).toMatchObject({name: "get_weather", id: expect.stringMatching(/^call_/)});
        // an unstreamed reply's call keeps its arguments as the server sent them: JSON text
        const text = calls[0]!.input;
        if (typeof text !== "string") throw new Error(`the call's input is ${typeof text}, not the arguments' JSON text`);
        const input: unknown = JSON.parse(text);
        expect(validate(input), JSON.stringify(validate.errors)).toBe(true);
        let streamedCall: unknown;
        for await (const chunk of await model.chat({messages: [question], tools: [weather, time], additionalChatOptions: forced, stream: true}))
            streamedCall = toolCallsOf(chunk.options)[0] ?? streamedCall;
        // LlamaIndex parses a streamed call's input when the stream finishes
        expect(streamedCall).toMatchObject({name: "get_weather", input});

        const run = await model.exec({messages: [question], tools: [weather, time], additionalChatOptions: forced});
        expect(ran).toBe(1);
        expect(run.toolCalls).toHaveLength(1);
        expect(validate(run.toolCalls[0]!.input), JSON.stringify(validate.errors)).toBe(true);
        // the call and its result, as exec returns them, go back as an assistant's tool_calls and a tool message
        const answer = await llm({maxTokens: 8}).chat({messages: [question, ...run.newMessages], tools: [weather, time]});
        expect(answer.message.role).toBe("assistant");
        expect(usageOf(answer.raw)!.prompt_tokens).toBeGreaterThan(usageOf(reply.raw)!.prompt_tokens);
    });

    it("OpenAIEmbedding: vectors of the model's size, equal for equal text, different for different text", async () => {
        const embedding = new OpenAIEmbedding({model: "kv-tiny", apiKey: KEY, baseURL: server.url, maxRetries: 0});
        const size = placed.model.embeddingVectorSize;
        expect(size).toBeGreaterThan(0);
        const one = await embedding.getTextEmbedding("The cat sat on the mat");
        const many = await embedding.getTextEmbeddings(["The cat sat on the mat", "A quantum of solace", "The cat sat on the mat"]);
        expect(one).toHaveLength(size);
        expect(many.map((vector) => vector.length)).toEqual([size, size, size]);
        expect(many[0]).toEqual(one);
        expect(many[2]).toEqual(many[0]);
        expect(many[1]).not.toEqual(many[0]);
    });
});
