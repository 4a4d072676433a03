/**
 * The app's own reply with tools, on random-weight models whose GGUF carries a real model's chat template: a call forced
 * by `required` parses into a call of one of the tools with arguments that validate, the tool's result sent back in the
 * next round reaches the prompt through the template and the model answers in text, the definitions' tokens are
 * measured and counted by the context-full policy, a template without tool syntax is refused by name, and a stop
 * returns no call.
 */
import {Ajv} from "ajv";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {ChatTurn} from "../contract/chat.js";
import type {EngineTool} from "../contract/engineProtocol.js";
import {PlacedModel} from "../engine/runtime/PlacedModel.js";
import {probeEngine} from "../engine/testing/probeEngine.js";
import {makeTestModel} from "../engine/testing/testModels.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import {appToolReply} from "./appToolReply.js";
import {TestPromptWorkers} from "./testing/testPromptWorkers.js";
import {BOUNDED_JSON_SCHEMA} from "./testing/boundedJsonSchema.js";
import {chatTemplate, loadTemplatedTestModel, missingTemplates, TEMPLATE_FILES} from "./testing/templatedTestModel.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
const skip = probe.reason ?? missingTemplates([TEMPLATE_FILES.qwen25]);
if (skip != null)
    console.warn(`[skip] the app's tool replies: ${skip}`);

/** The prompt worker each loaded model's replies template on, as the engine keeps one per loaded model. */
const workers = new TestPromptWorkers();
afterAll(async () => await workers.close());

const WEATHER: EngineTool = {name: "get_weather", description: "The weather of a city", parameters: BOUNDED_JSON_SCHEMA};
const LIST: EngineTool = {name: "list_allowed_directories", description: "The folders this server may read", parameters: {type: "object", properties: {}}};

describe.skipIf(skip != null)("the app's reply with tools (CPU, generated model with Qwen2.5's template)", () => {
    let placed: PlacedModel;
    beforeAll(async () => {
        placed = await loadTemplatedTestModel(probe.engine!, "app-tools-qwen", chatTemplate(TEMPLATE_FILES.qwen25));
    }, 120_000);
    afterAll(async () => {
        await placed?.dispose();
    });

    it("a required call parses into a call of a given tool whose arguments validate; its result read back, the model answers in text", async () => {
        const streamed: string[] = [];
        const first = await appToolReply(placed, null, {worker: workers.for(placed), 
            message: "What is the weather in Paris?", maxTokens: 512, temperature: 0, tools: {tools: [WEATHER, LIST], choice: "required"}, replyRounds: [],
            onText: (text) => streamed.push(text)
        });
        expect(first.aborted).toBe(false);
        expect(first.toolCalls?.length).toBeGreaterThan(0);
        const call = first.toolCalls![0]!;
        expect(["get_weather", "list_allowed_directories"]).toContain(call.name);
        expect(call.id).toMatch(/^call_/);
        const schema = call.name === "get_weather" ? WEATHER.parameters : LIST.parameters;
        const validate = new Ajv({strict: false}).compile(schema);
        expect(validate(JSON.parse(call.arguments)), JSON.stringify(validate.errors)).toBe(true);
        // no markup of the call reaches the streamed text
        expect(streamed.join("")).toBe(first.text);
        expect(first.text).not.toContain("<tool_call>");
        // the definitions take prompt tokens, and are part of the prompt
        expect(first.toolTokens).toBeGreaterThan(20);
        expect(first.prompt.tokens).toBeGreaterThan(first.toolTokens!);

        const round: ChatTurn = {role: "assistant", text: first.text, toolCalls: [{...call, result: "Sunny, 21 degrees"}]};
        const second = await appToolReply(placed, null, {worker: workers.for(placed), 
            message: "What is the weather in Paris?", maxTokens: 8, temperature: 0, tools: {tools: [WEATHER, LIST], choice: "auto"}, replyRounds: [round]
        });
        expect(second.timing.generatedTokens).toBeGreaterThan(0);
        // the call and its result are in this prompt: longer than the first one's by at least the result
        expect(second.prompt.tokens).toBeGreaterThan(first.prompt.tokens);
    }, 180_000);

    it("a conversation with tool turns but no tools now is still templated by the chat layer, with no definitions counted", async () => {
        const history: ChatTurn[] = [
            {role: "user", text: "Weather?"},
            {role: "assistant", text: "", toolCalls: [{id: "call_1", name: "get_weather", arguments: "{}", result: "Rain"}]},
            {role: "assistant", text: "It rains."}
        ];
        const reply = await appToolReply(placed, null, {worker: workers.for(placed), history, message: "And tomorrow?", maxTokens: 4, temperature: 0, tools: null, replyRounds: []});
        expect(reply.toolCalls).toBeUndefined();
        expect(reply.toolTokens).toBeUndefined();
        expect(reply.timing.generatedTokens).toBeGreaterThan(0);
    }, 60_000);

    it("the context-full policy counts the definitions: exchanges are left out for them, and under stop the reply is refused", async () => {
        const contextSize = placed.context.contextSize;
        const tokensOf = async (history: ChatTurn[], tools: EngineTool[] | null) => (await appToolReply(placed, null, {worker: workers.for(placed), history, message: "Hi", maxTokens: 1,
            temperature: 0, tools: tools == null ? null : {tools, choice: "none"}, replyRounds: [], contextOverflow: "stop"}));
        const one = await tokensOf([], [WEATHER]);
        // four exchanges that take about half the context; definitions that take about 60% of it
        const exchange = (index: number): ChatTurn[] => [{role: "user", text: `question ${index} ${"word ".repeat(40)}`}, {role: "assistant", text: "reply ".repeat(40)}];
        const history = [0, 1, 2, 3].flatMap(exchange);
        const bare = await tokensOf(history, null);
        expect(bare.prompt.tokens).toBeLessThan(contextSize * 0.7);
        const count = Math.ceil((contextSize * 0.6) / one.toolTokens!);
        const many = Array.from({length: count}, (_, index) => ({...WEATHER, name: `tool_${index}`}));
        const left = await appToolReply(placed, null, {worker: workers.for(placed), history, message: "Hi", maxTokens: 2, temperature: 0, tools: {tools: many, choice: "none"},
            replyRounds: [], contextOverflow: "rollingWindow"});
        expect(left.toolTokens).toBeGreaterThan(contextSize * 0.5);
        expect(left.leftOutMessages, `${left.toolTokens} tool tokens, ${bare.prompt.tokens} without them, a context of ${contextSize}`).toBeGreaterThan(0);
        expect(left.leftOutMessages).toBeLessThan(history.length);
        expect(left.prompt.tokens).toBeLessThanOrEqual(contextSize);
        await expect(tokensOf(history, many)).rejects.toMatchObject({code: "conversation-too-long"});
    }, 120_000);

    it("a reply stopped while it writes comes back stopped, with no call to run", async () => {
        const controller = new AbortController();
        const reply = await appToolReply(placed, null, {worker: workers.for(placed), 
            message: "Weather?", maxTokens: 512, temperature: 0, tools: {tools: [WEATHER], choice: "required"}, replyRounds: [], signal: controller.signal,
            onText: () => controller.abort()
        });
        // a call may be written without any text before it: then the stop comes at the end
        if (reply.aborted) {
            expect(reply.stopReason).toBe("stopped");
            expect(reply.toolCalls).toBeUndefined();
        }
        const before = new AbortController();
        before.abort();
        const early = await appToolReply(placed, null, {worker: workers.for(placed), message: "Weather?", maxTokens: 64, tools: {tools: [WEATHER], choice: "required"}, replyRounds: [],
            signal: before.signal});
        expect(early).toMatchObject({aborted: true, stopReason: "stopped"});
        expect(early.toolCalls).toBeUndefined();
    }, 120_000);
});

describe.skipIf(probe.reason != null)("a model whose template has no tool syntax (CPU, the writer's default template)", () => {
    let placed: PlacedModel;
    beforeAll(async () => {
        const modelPath = await makeTestModel("app-tools-plain", {preset: "tiny", type: "q8_0"});
        placed = await PlacedModel.load(probe.engine!, {modelPath, contextSize: 1024, threads: 1, sequences: 1});
    }, 120_000);
    afterAll(async () => {
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("is refused by name instead of answering free text to tools it never saw", async () => {
        const error = await appToolReply(placed, null, {worker: workers.for(placed), message: "Weather?", maxTokens: 8, tools: {tools: [WEATHER], choice: "required"}, replyRounds: []})
            .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(TensorwiseError);
        expect(error).toMatchObject({code: "tools-unsupported"});
        expect((error as Error).message).toMatch(/no tool-call syntax/);
    }, 60_000);
});
