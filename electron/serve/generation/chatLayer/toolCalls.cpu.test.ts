/**
 * Tool calling on POST /v1/chat/completions, against random-weight models whose GGUF carries a real model's chat
 * template (llama.cpp's models/templates/): the template is applied with the tools by llama.cpp's chat layer
 * (tensorwiseChatApply), a reply in the template's tool-call format parses into calls (tensorwiseChatParse), and the
 * official `openai` client can send tools, a named tool_choice and a tool result back.
 */
import {Ajv} from "ajv";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {PlacedModel} from "../../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../../engine/testing/probeEngine.js";
import type {OpenAiServer} from "../../serveOpenAi.js";
import {BOUNDED_JSON_SCHEMA} from "../../testing/boundedJsonSchema.js";
import {serveTestModel} from "../../testing/servedTestModel.js";
import {TestPromptWorkers} from "../../testing/testPromptWorkers.js";
import {chatTemplate, loadTemplatedTestModel, missingTemplates, TEMPLATE_FILES} from "../../testing/templatedTestModel.js";
import {DEFAULT_REASONING} from "../../common/GenerationRequest.js";
import {nativeReasoning, templateReasoning} from "./chatReasoning.js";
import {ToolCallStream, type ReplyDelta} from "./ToolCallStream.js";

const QWEN = TEMPLATE_FILES.qwen25;
const HERMES = TEMPLATE_FILES.hermes3;
const LLAMA = TEMPLATE_FILES.llama32;

const probe = await probeEngine("cpu", {maxThreads: 1});
const skip = probe.reason ?? missingTemplates([QWEN, HERMES, LLAMA]);
if (skip != null)
    console.warn(`[skip] tool-calling tests: ${skip}`);

const WEATHER = {type: "function", function: {name: "get_weather", description: "The weather of a city", parameters: BOUNDED_JSON_SCHEMA}} as const;
const TIME = {type: "function", function: {name: "get_time", parameters: {type: "object", properties: {zone: {enum: ["utc", "cet"]}}, required: ["zone"],
    additionalProperties: false}}} as const;
const ARGUMENTS = {mood: "calm", ok: true, count: 3, name: "abc", tags: ["a"]};

const loadWithTemplate = (name: string, file: string) => loadTemplatedTestModel(probe.engine!, name, chatTemplate(file));

describe.skipIf(skip != null)("llama.cpp's chat layer with real templates (CPU, generated models)", () => {
    const validate = new Ajv({strict: true}).compile(BOUNDED_JSON_SCHEMA);
    const models: PlacedModel[] = [];
    const workers = new TestPromptWorkers();
    afterAll(async () => {
        await workers.close();
        for (const placed of models)
            await placed.dispose();
    });

    it.each([[QWEN, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ARGS}\n</tool_call>"],
        [HERMES, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ARGS}\n</tool_call>"],
        [LLAMA, "{\"name\": \"get_weather\", \"parameters\": ARGS}"]])("%s: the prompt shows the tools, and a reply in its format parses into a call", async (file, reply) => {
        const placed = await loadWithTemplate(`tools-${file.slice(0, 12)}`, file);
        models.push(placed);
        const prompt = await workers.prompt(placed, [{role: "user", text: "Weather?"}], {tools: [{name: "get_weather", description: "The weather of a city",
            parameters: BOUNDED_JSON_SCHEMA}], choice: "required", parallel: false},
        nativeReasoning(DEFAULT_REASONING, templateReasoning(placed.model, placed.engine.bindings)));
        const text = placed.model.detokenize(prompt.tokens, true);
        expect(text).toContain("get_weather");
        expect(text).toContain("The weather of a city");
        expect(prompt.grammar).toBeDefined();
        // a required call is opened in the prompt with the template's marker: the model writes what follows it
        const full = reply.replace("ARGS", JSON.stringify(ARGUMENTS));
        expect(full.startsWith(prompt.opening), `"${prompt.opening}" opens ${file}'s calls`).toBe(true);
        expect(text.endsWith(prompt.opening)).toBe(true);
        const parsed = prompt.parse(full.slice(prompt.opening.length), false);
        expect(parsed.toolCalls).toHaveLength(1);
        expect(parsed.toolCalls[0]!.name).toBe("get_weather");
        // these formats carry no id: the server gives one (ToolCallStream.ts)
        expect(parsed.toolCalls[0]!.id).toBe("");
        const args: unknown = JSON.parse(parsed.toolCalls[0]!.arguments);
        expect(validate(args), JSON.stringify(validate.errors)).toBe(true);
        expect(args).toEqual(ARGUMENTS);
    }, 60_000);

    it.each([QWEN, HERMES])("%s: a reply parsed piece by piece hands on its text, then each call's id and name, then its arguments in pieces", async (file) => {
        const placed = await loadWithTemplate(`tools-stream-${file.slice(0, 12)}`, file);
        models.push(placed);
        const prompt = await workers.prompt(placed, [{role: "user", text: "Weather?"}], {tools: [{name: "get_weather", description: null, parameters: BOUNDED_JSON_SCHEMA},
            {name: "get_time", description: null, parameters: TIME.function.parameters}], choice: "auto", parallel: true},
        nativeReasoning(DEFAULT_REASONING, templateReasoning(placed.model, placed.engine.bindings)));
        const reply = `Let me look that up.\n<tool_call>\n{"name": "get_weather", "arguments": ${JSON.stringify(ARGUMENTS)}}\n</tool_call>\n` +
            "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"cet\"}}\n</tool_call>";
        let made = 0;
        const stream = new ToolCallStream(prompt.parse, () => `call_test${made++}`);
        const deltas: ReplyDelta[] = [];
        // three characters at a time, as tokens come
        for (let at = 0; at < reply.length; at += 3)
            deltas.push(...stream.push(reply.slice(at, at + 3)));
        const {deltas: rest, reply: final} = stream.finish(reply, false);
        deltas.push(...rest);
        const whole = prompt.parse(reply, false);
        expect(final.toolCalls.map((call) => call.name)).toEqual(["get_weather", "get_time"]);
        expect(final.toolCalls.map((call) => call.arguments)).toEqual(whole.toolCalls.map((call) => call.arguments));
        expect(JSON.parse(final.toolCalls[0]!.arguments)).toEqual(ARGUMENTS);
        expect(final.toolCalls.map((call) => call.id)).toEqual(["call_test0", "call_test1"]);
        expect(final.content).toBe(whole.content);
        expect(final.content).toContain("Let me look that up.");
        // the pieces add up to the final reply, and no piece of the tool-call markup reaches the content
        const content = deltas.filter((delta) => delta.type === "content");
        expect(content.map((delta) => delta.text).join("")).toBe(final.content);
        expect(content.some((delta) => delta.text.includes("<"))).toBe(false);
        const firstCall = deltas.findIndex((delta) => delta.type === "tool_call");
        expect(deltas.slice(firstCall).some((delta) => delta.type === "content")).toBe(false);
        for (const [index, call] of final.toolCalls.entries()) {
            const pieces = deltas.filter((delta) => delta.type === "tool_call" && delta.index === index) as Extract<ReplyDelta, {type: "tool_call"}>[];
            expect(pieces[0]).toMatchObject({opens: true, id: call.id, name: call.name});
            expect(pieces.slice(1).every((piece) => !piece.opens)).toBe(true);
            expect(pieces.map((piece) => piece.arguments).join("")).toBe(call.arguments);
        }
        // the first call's arguments stream as they are written, not at its end
        expect(deltas.filter((delta) => delta.type === "tool_call" && delta.index === 0).length).toBeGreaterThan(3);
    }, 60_000);
});

describe.skipIf(skip != null)("tools on POST /v1/chat/completions with the openai client (CPU, generated model with Qwen2.5's template)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;

    beforeAll(async () => {
        placed = await loadWithTemplate("tools-served-qwen", QWEN);
        server = await serveTestModel(placed);
        client = new OpenAI({baseURL: server.url, apiKey: "none", maxRetries: 0});
    }, 120_000);
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("answers tools with tool_choice \"required\" and a named tool, and a tool result sent back, all through the template", async () => {
        const messages = [{role: "user", content: "What is the weather in Paris?"}] as const;
        const request = {model: "kv-tiny", messages: [...messages], tools: [WEATHER, TIME], temperature: 0, max_tokens: 16};
        const required = await client.chat.completions.create({...request, tool_choice: "required"});
        // the template lists the tools in the system turn: far more prompt tokens than the question alone
        const plain = await client.chat.completions.create({model: "kv-tiny", messages: [...messages], temperature: 0, max_tokens: 16});
        expect(required.usage!.prompt_tokens).toBeGreaterThan(plain.usage!.prompt_tokens + 100);
        // "auto" (the default with tools): a lazy grammar, free text until the template's tool-call marker
        const auto = await client.chat.completions.create(request);
        // the same prompt, but for the call marker that opens a required reply (toolCallPrompt.ts, callOpening)
        expect(required.usage!.prompt_tokens - auto.usage!.prompt_tokens).toBeGreaterThan(0);
        expect(required.usage!.prompt_tokens - auto.usage!.prompt_tokens).toBeLessThan(16);
        expect(auto.choices[0]!.finish_reason).toMatch(/^(length|stop|tool_calls)$/);
        const named = await client.chat.completions.create({...request, tool_choice: {type: "function", function: {name: "get_time"}}});
        expect(named.choices[0]!.finish_reason).toMatch(/^(length|tool_calls)$/);
        // a tool result: the assistant's call and the tool's answer go into the prompt through the template
        const withResult = await client.chat.completions.create({
            ...request, tool_choice: "none",
            messages: [...messages,
                {role: "assistant", content: null, tool_calls: [{id: "call_1", type: "function", function: {name: "get_weather", arguments: JSON.stringify(ARGUMENTS)}}]},
                {role: "tool", tool_call_id: "call_1", content: "Sunny, 21 degrees"}]
        });
        expect(withResult.choices[0]!.message.role).toBe("assistant");
        expect(withResult.usage!.prompt_tokens).toBeGreaterThan(required.usage!.prompt_tokens + 10);
    }, 120_000);

    it("makes a required or named call even with random weights: greedy output under the grammar parses into a call that validates", async () => {
        const ajv = new Ajv({strict: true});
        const schemas = new Map<string, ReturnType<typeof ajv.compile>>([WEATHER, TIME].map((tool) => [tool.function.name, ajv.compile(tool.function.parameters)]));
        // the grammar lets JSON whitespace run to ~20 characters between tokens, which random weights take: room for it
        const request = {model: "kv-tiny", messages: [{role: "user" as const, content: "What is the weather in Paris?"}], tools: [WEATHER, TIME],
            temperature: 0, max_tokens: 1024, parallel_tool_calls: false};
        for (const tool_choice of ["required", {type: "function", function: {name: "get_time"}}] as const) {
            const reply = await client.chat.completions.create({...request, tool_choice});
            const choice = reply.choices[0]!;
            expect(choice.finish_reason, JSON.stringify(choice.message)).toBe("tool_calls");
            expect(choice.message.tool_calls).toHaveLength(1);
            const call = choice.message.tool_calls![0]!;
            if (call.type !== "function") throw new Error(`a ${call.type} call, not a function call`);
            expect(call.id).toMatch(/^call_/);
            if (typeof tool_choice === "object") expect(call.function.name).toBe("get_time");
            const validate = schemas.get(call.function.name);
            expect(validate, `a call to ${call.function.name}, one of the tools`).toBeDefined();
            const args: unknown = JSON.parse(call.function.arguments);
            expect(validate!(args), JSON.stringify(validate!.errors)).toBe(true);
        }
    }, 120_000);

    // llama.cpp's tool-call grammars allow text before the calls, which a random-weight model never ends: these requests
    // check the served path; the shapes of streamed calls are checked in toolCallReplies.test.ts with the same clients
    it("streams a request with tools in valid chunks that add up to the unstreamed reply, ending in a finish reason", async () => {
        const request = {model: "kv-tiny", messages: [{role: "user" as const, content: "What time is it?"}], tools: [WEATHER, TIME], temperature: 0, max_tokens: 24,
            tool_choice: "required" as const, parallel_tool_calls: false};
        const whole = await client.chat.completions.create(request);
        const stream = client.chat.completions.stream({...request, stream: true});
        const finishes: (string | null)[] = [];
        for await (const chunk of stream)
            finishes.push(chunk.choices[0]?.finish_reason ?? null);
        const final = await stream.finalChatCompletion();
        expect(finishes.filter((finish) => finish != null)).toEqual([whole.choices[0]!.finish_reason]);
        expect(final.choices[0]!.message.content ?? "").toBe(whole.choices[0]!.message.content ?? "");
        expect(final.choices[0]!.message.tool_calls ?? []).toEqual(whole.choices[0]!.message.tool_calls ?? []);
        expect(final.choices[0]!.finish_reason).toMatch(/^(length|stop|tool_calls)$/);
    }, 120_000);

    it("Anthropic /v1/messages with tools through @anthropic-ai/sdk: the prompt holds them, streamed and whole agree, a tool_result goes back", async () => {
        const anthropic = new Anthropic({baseURL: server.url.replace(/\/v1$/, ""), apiKey: "none", maxRetries: 0});
        const tools = [{name: "get_weather", description: "The weather of a city", input_schema: {type: "object" as const, properties: {city: {type: "string"}}}},
            {name: "get_time", input_schema: {...TIME.function.parameters, type: "object" as const, required: ["zone"]}}];
        const messages = [{role: "user" as const, content: "What time is it?"}];
        // temperature is honoured; the SDK's types no longer list it
        const request = {model: "kv-tiny", max_tokens: 16, ...{temperature: 0}, tools, messages,
            tool_choice: {type: "tool" as const, name: "get_time", disable_parallel_tool_use: true}};
        const whole = await anthropic.messages.create(request);
        expect(whole.stop_reason).toMatch(/^(max_tokens|tool_use)$/);
        const stream = anthropic.messages.stream(request);
        const final = await stream.finalMessage();
        expect(final.content).toEqual(whole.content);
        expect(final.stop_reason).toBe(whole.stop_reason);
        const plain = await anthropic.messages.countTokens({model: "kv-tiny", messages});
        expect(whole.usage.input_tokens).toBeGreaterThan(plain.input_tokens + 50);
        // a call and its result go back through the template: more prompt, counted as /v1/messages evaluates it
        const use = {type: "tool_use" as const, id: "toolu_01", name: "get_time", input: {zone: "cet"}};
        const back = [...messages, {role: "assistant" as const, content: [{type: "text" as const, text: "Checking."}, use]},
            {role: "user" as const, content: [{type: "tool_result" as const, tool_use_id: use.id, content: "12:00 CET"}]}];
        const answer = await anthropic.messages.create({...request, max_tokens: 4, tool_choice: {type: "none"}, messages: back});
        // the whole prompt: what was evaluated and what was reused from the cache (Anthropic counts them apart)
        const prompt = (usage: Anthropic.Usage) => usage.input_tokens + (usage.cache_read_input_tokens ?? 0);
        expect(prompt(answer.usage)).toBeGreaterThan(prompt(whole.usage) + 10);
        const counted = await anthropic.messages.countTokens({model: "kv-tiny", tools, tool_choice: {type: "none"}, messages: back});
        expect(counted.input_tokens).toBe(prompt(answer.usage));
        // is_error reaches the model too
        const failed = await anthropic.messages.countTokens({model: "kv-tiny", tools, tool_choice: {type: "none"}, messages: [...back.slice(0, 2),
            {role: "user", content: [{type: "tool_result", tool_use_id: use.id, content: "12:00 CET", is_error: true}]}]});
        expect(failed.input_tokens).toBeGreaterThan(counted.input_tokens);
    }, 120_000);

    it("Responses with function tools through the openai client: the prompt holds them, streamed and whole agree, a function_call_output goes back", async () => {
        const tools = [{type: "function" as const, name: "get_time", parameters: TIME.function.parameters as Record<string, unknown>, strict: true}];
        const request = {model: "kv-tiny", input: "What time is it?", tools, tool_choice: "required" as const, max_output_tokens: 16, temperature: 0};
        const whole = await client.responses.create(request);
        const plain = await client.responses.create({model: "kv-tiny", input: "What time is it?", max_output_tokens: 16, temperature: 0});
        expect(whole.usage!.input_tokens).toBeGreaterThan(plain.usage!.input_tokens + 50);
        expect(whole).toMatchObject({tool_choice: "required", parallel_tool_calls: true, tools: [{type: "function", name: "get_time"}]});
        const stream = client.responses.stream(request);
        const final = await stream.finalResponse();
        expect(final.output_text).toBe(whole.output_text);
        expect(final.output.map((item) => item.type)).toEqual(whole.output.map((item) => item.type));
        expect(final.status).toBe(whole.status);
        const back = await client.responses.create({...request, tool_choice: "none", input: [{role: "user", content: "What time is it?"},
            {type: "function_call", call_id: "call_1", name: "get_time", arguments: "{\"zone\":\"cet\"}"},
            {type: "function_call_output", call_id: "call_1", output: "12:00 CET"}]});
        expect(back.usage!.input_tokens).toBeGreaterThan(whole.usage!.input_tokens + 10);
        expect(back.tool_choice).toBe("none");
    }, 120_000);

    it("refuses a named tool_choice that is not one of the tools, naming the field", async () => {
        const error = await client.chat.completions.create({model: "kv-tiny", messages: [{role: "user", content: "Hi"}], tools: [WEATHER],
            tool_choice: {type: "function", function: {name: "get_time"}}}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("tool_choice.function.name");
        expect((error as Error).message).toContain("get_time");
    });
});
