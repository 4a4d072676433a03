/**
 * What the server's sampling fields do to a reply, on a generated random-weight model through the unmodified `openai`
 * client: structured output (json_schema, json_object; streamed and not) parses and validates against its schema,
 * the penalties and logit_bias change the greedy reply, a last assistant message is continued, and
 * `usage.prompt_tokens_details.cached_tokens` counts the reused prefix.
 */
import {Ajv} from "ajv";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EngineLlama} from "../../engine/native/getEngineLlama.js";
import {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../engine/testing/probeEngine.js";
import {makeTestModel} from "../../engine/testing/testModels.js";
import type {KvCostModel} from "../kv/KvCostModel.js";
import {fifoPolicy} from "../scheduling/schedulingPolicies.js";
import {serveOpenAi, type OpenAiServer} from "../serveOpenAi.js";
import {BOUNDED_JSON_SCHEMA} from "../testing/boundedJsonSchema.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] sampling tests: ${probe.reason}`);

/** Given costs: no calibration at start (the test is about sampling, not KV restore). */
const COSTS: KvCostModel = {
    stateBytes: {headerBytes: 0, bytesPerToken: 1000}, save: {fixedMs: 0, msPer: 1e-6}, load: {fixedMs: 0, msPer: 1e-6},
    prefill: {fixedMs: 1, msPer: 1}, source: "given"
};

const SCHEMA = BOUNDED_JSON_SCHEMA;

const USER: OpenAI.ChatCompletionMessageParam[] = [{role: "user", content: "Describe the sea as JSON"}];

describe.skipIf(probe.reason != null)("sampling fields (CPU, generated model)", () => {
    let engine: EngineLlama;
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;
    const validate = new Ajv({strict: true}).compile(SCHEMA);

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("sampling-tiny", {preset: "tiny", type: "q8_0"});
        placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024, threads: 1, sequences: 1});
        server = await serveOpenAi({placed, modelId: "tiny", queueLength: 4, requestTimeoutMs: 120_000, policy: fifoPolicy, kv: {costModel: COSTS}});
        client = new OpenAI({baseURL: server.url, apiKey: "unused", maxRetries: 0});
    }, 120_000);
    let closed = false;
    afterAll(async () => {
        if (!closed)
            await server?.close();
        await placed?.dispose();
        await engine?.llama.dispose();
    });

    const greedy = async (extra: Record<string, unknown>, messages = USER, maxTokens = 16) => {
        const reply = await client.chat.completions.create({model: "tiny", messages, max_tokens: maxTokens, temperature: 0, ...extra} as OpenAI.ChatCompletionCreateParamsNonStreaming);
        return reply;
    };

    it("answers json_schema with JSON that validates, through client.chat.completions.parse, streamed and not", async () => {
        const format = {type: "json_schema", json_schema: {name: "sea", schema: SCHEMA, strict: true}} as const;
        const free = await greedy({}, USER, 200);
        expect(() => JSON.parse(free.choices[0]!.message.content!)).toThrow();
        const parsed = await client.chat.completions.parse({model: "tiny", messages: USER, max_tokens: 200, temperature: 0, response_format: format});
        const choice = parsed.choices[0]!;
        expect(choice.finish_reason).toBe("stop");
        expect(validate(choice.message.parsed), JSON.stringify(validate.errors)).toBe(true);

        const stream = await client.chat.completions.create({model: "tiny", messages: USER, max_tokens: 200, temperature: 0, response_format: format, stream: true});
        let text = "";
        let finish: string | null = null;
        for await (const chunk of stream) {
            text += chunk.choices[0]?.delta.content ?? "";
            finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        expect(finish).toBe("stop");
        expect(validate(JSON.parse(text)), text).toBe(true);
        expect(JSON.parse(text)).toEqual(choice.message.parsed);
    }, 120_000);

    it("answers json_object with one JSON object; an unfinished one ends with finish_reason \"length\"", async () => {
        const reply = await greedy({response_format: {type: "json_object"}}, USER, 300);
        const content = reply.choices[0]!.message.content!;
        // the grammar allows only JSON from the first token: an object, finished ("stop") or cut at max_tokens ("length")
        expect(content.trimStart().startsWith("{"), content.slice(0, 40)).toBe(true);
        if (reply.choices[0]!.finish_reason === "stop")
            expect(typeof JSON.parse(content)).toBe("object");
        else
            expect(reply.choices[0]!.finish_reason).toBe("length");
        const cut = await greedy({response_format: {type: "json_schema", json_schema: {name: "sea", schema: SCHEMA}}}, USER, 3);
        expect(cut.choices[0]!.finish_reason).toBe("length");
        expect(cut.choices[0]!.message.content!.trimStart().startsWith("{")).toBe(true);
        expect(() => JSON.parse(cut.choices[0]!.message.content!)).toThrow();
    }, 120_000);

    it("refuses a schema llama.cpp cannot turn into a grammar, and a logit_bias token the model lacks, naming the field", async () => {
        const refused = async (extra: Record<string, unknown>) => {
            try {
                await greedy(extra);
            } catch (error) {
                return error as InstanceType<typeof OpenAI.APIError>;
            }
            throw new Error("not refused");
        };
        const schema = await refused({response_format: {type: "json_schema", json_schema: {name: "x", schema: {$ref: "#/definitions/missing"}}}});
        expect(schema.status).toBe(400);
        expect(schema.param).toBe("response_format");
        expect(schema.message).toMatch(/llama\.cpp cannot turn this JSON schema into a grammar: \S/);
        const grammar = await refused({grammar: "root ::= ("});
        expect(grammar).toMatchObject({status: 400, param: "grammar"});
        const bias = await refused({logit_bias: {"4294967295": 5}});
        expect(bias).toMatchObject({status: 400, param: "logit_bias"});
        expect(bias.message).toMatch(/names token 4294967295, but this model's vocabulary has tokens 0 to \d+/);
    }, 60_000);

    it("changes the greedy reply with frequency_penalty, presence_penalty and logit_bias", async () => {
        const plain = await greedy({logprobs: false}, USER, 24);
        const tokens = (await greedy({}, USER, 24)).usage!.completion_tokens;
        expect(tokens).toBe(24);
        const text = plain.choices[0]!.message.content!;
        expect((await greedy({frequency_penalty: 2}, USER, 24)).choices[0]!.message.content).not.toBe(text);
        expect((await greedy({presence_penalty: 2}, USER, 24)).choices[0]!.message.content).not.toBe(text);
        // the first greedy token, banned, is never the reply's first token; a +100 bias makes one token win every step
        const prompt = "Describe the sea";
        const first = await client.completions.create({model: "tiny", prompt, max_tokens: 1, temperature: 0});
        const firstToken = placed.model.tokenize(prompt + first.choices[0]!.text, false).slice(placed.model.tokenize(prompt, false).length);
        expect(firstToken.length).toBe(1);
        const banned = await client.completions.create({model: "tiny", prompt, max_tokens: 1, temperature: 0, logit_bias: {[String(firstToken[0])]: -100}});
        expect(banned.choices[0]!.text).not.toBe(first.choices[0]!.text);
        const forced = placed.model.tokenize(" sea", false)[0]!;
        const pushed = await client.completions.create({model: "tiny", prompt, max_tokens: 4, temperature: 0, logit_bias: {[String(forced)]: 100}});
        expect(pushed.choices[0]!.text).toBe(placed.model.detokenize([forced, forced, forced, forced]));
        const eog = placed.model.tokens.eos!;
        await expect(greedy({logit_bias: {[String(eog)]: 5}})).rejects.toMatchObject({status: 400, param: "logit_bias", message: expect.stringMatching(/end-of-generation/)});
    }, 120_000);

    it("reports cached_tokens: none on a first request, the shared prefix on a follow-up", async () => {
        const conversation = {"X-Conversation-Id": "cached"};
        const first = await client.chat.completions.create({model: "tiny", messages: [{role: "user", content: "A fresh question about rivers"}],
            max_tokens: 6, temperature: 0}, {headers: conversation});
        expect(first.usage!.prompt_tokens_details?.cached_tokens).toBe(0);
        const evaluated = (first as unknown as {timings: {prompt_tokens_evaluated: number}}).timings.prompt_tokens_evaluated;
        expect(evaluated).toBe(first.usage!.prompt_tokens);
        const followUp = await client.chat.completions.create({model: "tiny", messages: [{role: "user", content: "A fresh question about rivers"},
            {role: "assistant", content: first.choices[0]!.message.content!}, {role: "user", content: "And lakes?"}], max_tokens: 6, temperature: 0,
        stream: true, stream_options: {include_usage: true}}, {headers: conversation});
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const chunk of followUp)
            usage = chunk.usage ?? usage;
        expect(usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(first.usage!.prompt_tokens - 4);
        expect(usage!.prompt_tokens_details!.cached_tokens).toBeLessThan(usage!.prompt_tokens);
    }, 120_000);
    // last: it closes the server to run the engine's own greedy loop on the same sequence as the reference
    it("continues a last assistant message: the prompt ends inside that turn and the reply is only what follows", async () => {
        const plain = await greedy({}, USER, 12);
        const start = (await greedy({}, USER, 4)).choices[0]!.message.content!;
        const messages: OpenAI.ChatCompletionMessageParam[] = [...USER, {role: "assistant", content: start}];
        const continued = await greedy({}, messages, 6);
        const text = continued.choices[0]!.message.content!;
        // the prompt is the plain one plus the prefix's tokens: no end-of-turn, no new assistant header
        expect(continued.usage!.prompt_tokens - plain.usage!.prompt_tokens).toBe(placed.model.tokenize(start, false).length);
        const streamed = await client.chat.completions.create({model: "tiny", messages, max_tokens: 6, temperature: 0, stream: true});
        let streamedText = "";
        for await (const chunk of streamed)
            streamedText += chunk.choices[0]?.delta.content ?? "";
        expect(streamedText).toBe(text);
        // the reference: the chat template with the assistant turn left open after the prefix, generated greedily
        const {contextText} = server.chatWrapper.generateContextState({chatHistory: [{type: "user", text: "Describe the sea as JSON"}, {type: "model", response: [start]}]});
        const prompt = contextText.tokenize(placed.model.tokenizer);
        expect(prompt.length).toBe(continued.usage!.prompt_tokens);
        await server.close();
        closed = true;
        const reference = await placed.generate(prompt, {maxTokens: 6, stopAtEog: true, reusePrefix: false});
        expect(text).toBe(placed.model.detokenize(reference.tokens.filter((token) => !placed.model.isEogToken(token)), false, prompt));
        expect(text.startsWith(start)).toBe(placed.model.detokenize(reference.tokens, false, prompt).startsWith(start));
    }, 120_000);

    it("serve --seed: a sampled request that sends no seed gets the same reply every time; its own seed still wins", async () => {
        // its own sequence: the server above has closed (the test before this one)
        const own = await PlacedModel.load(engine, {modelPath: await makeTestModel("sampling-tiny", {preset: "tiny", type: "q8_0"}), contextSize: 1024, threads: 1, sequences: 1});
        const seeded = await serveOpenAi({placed: own, modelId: "tiny", queueLength: 4, requestTimeoutMs: 120_000, policy: fifoPolicy, kv: {costModel: COSTS}, defaultSeed: 42});
        try {
            const seededClient = new OpenAI({baseURL: seeded.url, apiKey: "unused", maxRetries: 0});
            // temperature 2 over a random-weight model's near-flat distribution: unseeded, 24 tokens never repeat by chance
            const ask = async (extra: Record<string, unknown> = {}) => (await seededClient.chat.completions.create({model: "tiny", messages: USER,
                max_tokens: 24, temperature: 2, ...extra} as OpenAI.ChatCompletionCreateParamsNonStreaming)).choices[0]!.message.content;
            const first = await ask();
            expect(await ask()).toBe(first);
            expect(await ask({seed: 42})).toBe(first);
            const sevens = await ask({seed: 7});
            expect(sevens).not.toBe(first);
            expect(await ask({seed: 7})).toBe(sevens);
        } finally {
            await seeded.close();
            await own.dispose();
        }
    }, 120_000);
});
