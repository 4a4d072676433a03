/**
 * Tool calling on POST /v1/chat/completions, against random-weight models whose GGUF carries a real model's chat
 * template (llama.cpp's models/templates/): the template is applied with the tools by llama.cpp's chat layer
 * (tensorwiseChatApply), a reply in the template's tool-call format parses into calls (tensorwiseChatParse), and the
 * official `openai` client can send tools, a named tool_choice and a tool result back.
 */
import {existsSync, readFileSync} from "node:fs";
import path from "node:path";
import {Ajv} from "ajv";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {PlacedModel} from "../engine/runtime/PlacedModel.js";
import {probeEngine} from "../engine/testing/probeEngine.js";
import {makeTestModel} from "../engine/testing/testModels.js";
import type {OpenAiServer} from "./serveOpenAi.js";
import {BOUNDED_JSON_SCHEMA} from "./testing/boundedJsonSchema.js";
import {serveTestModel} from "./testing/servedTestModel.js";
import {toolCallPrompt} from "./toolCallPrompt.js";

/** Real chat templates, as `npm ci` unpacks them with llama.cpp's source (native/install.mjs). */
const TEMPLATES = path.resolve("build/native/llama.cpp/models/templates");
const template = (name: string) => readFileSync(path.join(TEMPLATES, name), "utf8");
const QWEN = "Qwen-Qwen2.5-7B-Instruct.jinja";
const HERMES = "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja";
const LLAMA = "meta-llama-Llama-3.2-3B-Instruct.jinja";

const probe = await probeEngine("cpu", {maxThreads: 1});
const missing = [QWEN, HERMES, LLAMA].find((name) => !existsSync(path.join(TEMPLATES, name)));
const skip = probe.reason ?? (missing != null ? `${path.join(TEMPLATES, missing)} is missing (npm ci unpacks llama.cpp's source: native/install.mjs)` : null);
if (skip != null)
    console.warn(`[skip] tool-calling tests: ${skip}`);

const WEATHER = {type: "function", function: {name: "get_weather", description: "The weather of a city", parameters: BOUNDED_JSON_SCHEMA}} as const;
const TIME = {type: "function", function: {name: "get_time", parameters: {type: "object", properties: {zone: {enum: ["utc", "cet"]}}, required: ["zone"],
    additionalProperties: false}}} as const;
const ARGUMENTS = {mood: "calm", ok: true, count: 3, name: "abc", tags: ["a"]};

async function loadWithTemplate(name: string, file: string): Promise<PlacedModel> {
    // no "▁" after special tokens: the tool-call grammar starts with the generation prompt exactly as the template writes it
    const modelPath = await makeTestModel(name, {preset: "tiny", type: "q8_0", chatTemplate: template(file), addSpacePrefix: false});
    return await PlacedModel.load(probe.engine!, {modelPath, contextSize: 2048, threads: 1, sequences: 1});
}

describe.skipIf(skip != null)("llama.cpp's chat layer with real templates (CPU, generated models)", () => {
    const validate = new Ajv({strict: true}).compile(BOUNDED_JSON_SCHEMA);
    const models: PlacedModel[] = [];
    afterAll(async () => {
        for (const placed of models)
            await placed.dispose();
    });

    it.each([[QWEN, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ARGS}\n</tool_call>"],
        [HERMES, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ARGS}\n</tool_call>"],
        [LLAMA, "{\"name\": \"get_weather\", \"parameters\": ARGS}"]])("%s: the prompt shows the tools, and a reply in its format parses into a call", async (file, reply) => {
        const placed = await loadWithTemplate(`tools-${file.slice(0, 12)}`, file);
        models.push(placed);
        const prompt = toolCallPrompt([{role: "user", text: "Weather?"}], {tools: [{name: "get_weather", description: "The weather of a city",
            parameters: BOUNDED_JSON_SCHEMA}], choice: "required", parallel: false}, placed.model, placed.engine.bindings);
        const text = placed.model.detokenize(prompt.tokens, true);
        expect(text).toContain("get_weather");
        expect(text).toContain("The weather of a city");
        expect(prompt.grammar).toBeDefined();
        const parsed = prompt.parse(reply.replace("ARGS", JSON.stringify(ARGUMENTS)), false);
        expect(parsed.toolCalls).toHaveLength(1);
        expect(parsed.toolCalls[0]!.name).toBe("get_weather");
        expect(parsed.toolCalls[0]!.id).toMatch(/^call_/);
        const args: unknown = JSON.parse(parsed.toolCalls[0]!.arguments);
        expect(validate(args), JSON.stringify(validate.errors)).toBe(true);
        expect(args).toEqual(ARGUMENTS);
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
        expect(auto.usage!.prompt_tokens).toBe(required.usage!.prompt_tokens);
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

    it("refuses a named tool_choice that is not one of the tools, naming the field", async () => {
        const error = await client.chat.completions.create({model: "kv-tiny", messages: [{role: "user", content: "Hi"}], tools: [WEATHER],
            tool_choice: {type: "function", function: {name: "get_time"}}}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("tool_choice.function.name");
        expect((error as Error).message).toContain("get_time");
    });
});
