/**
 * `logprobs` / `top_logprobs` on the server, through the unmodified `openai` client on a generated random-weight
 * model: every reported number is a log-probability of the distribution the token was drawn from, the top lists are
 * that distribution's head, the pieces rebuild the reply byte for byte, streamed and non-streamed agree, and asking
 * for logprobs does not change the reply.
 */
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EngineLlama} from "../../../engine/native/getEngineLlama.js";
import {PlacedModel} from "../../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../../engine/testing/probeEngine.js";
import {makeTestModel} from "../../../engine/testing/testModels.js";
import type {KvCostModel} from "../../kv/KvCostModel.js";
import {fifoPolicy} from "../../scheduling/schedulingPolicies.js";
import {serveOpenAi, type OpenAiServer} from "../../serveOpenAi.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] logprobs tests: ${probe.reason}`);

const COSTS: KvCostModel = {
    stateBytes: {headerBytes: 0, bytesPerToken: 1000}, save: {fixedMs: 0, msPer: 1e-6}, load: {fixedMs: 0, msPer: 1e-6},
    prefill: {fixedMs: 1, msPer: 1}, source: "given"
};
const USER: OpenAI.ChatCompletionMessageParam[] = [{role: "user", content: "Describe the sea"}];
/** Float32 probabilities, their logs in float64. */
const EPSILON = 1e-5;

type Content = OpenAI.ChatCompletionTokenLogprob[];

describe.skipIf(probe.reason != null)("logprobs (CPU, generated model)", () => {
    let engine: EngineLlama;
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;
    let vocabulary: number;

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("logprobs-tiny", {preset: "tiny", type: "q8_0"});
        placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024, threads: 1, sequences: 1});
        vocabulary = placed.model.fileInfo.metadata.tokenizer.ggml.tokens.length;
        server = await serveOpenAi({placed, modelId: "tiny", queueLength: 4, requestTimeoutMs: 120_000, policy: fifoPolicy, kv: {costModel: COSTS}});
        client = new OpenAI({baseURL: server.url, apiKey: "unused", maxRetries: 0});
    }, 120_000);
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await engine?.llama.dispose();
    });

    const chat = (extra: Record<string, unknown>, maxTokens = 12) =>
        client.chat.completions.create({model: "tiny", messages: USER, max_tokens: maxTokens, ...extra} as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const streamedChat = async (extra: Record<string, unknown>, maxTokens = 12) => {
        const stream = await client.chat.completions.create({model: "tiny", messages: USER, max_tokens: maxTokens, stream: true, ...extra} as OpenAI.ChatCompletionCreateParamsStreaming);
        let text = "";
        const content: Content = [];
        for await (const chunk of stream) {
            text += chunk.choices[0]?.delta.content ?? "";
            content.push(...chunk.choices[0]?.logprobs?.content ?? []);
        }
        return {text, content};
    };

    /** What must hold of any reported token: a log-probability, a head sorted high to low, summing to at most 1. */
    const expectDistribution = (content: Content, top: number) => {
        for (const entry of content) {
            expect(entry.logprob).toBeLessThanOrEqual(0);
            expect(entry.top_logprobs).toHaveLength(top);
            const logprobs = entry.top_logprobs.map((candidate) => candidate.logprob);
            expect(logprobs).toEqual([...logprobs].sort((a, b) => b - a));
            expect(logprobs.reduce((sum, logprob) => sum + Math.exp(logprob), 0)).toBeLessThanOrEqual(1 + EPSILON);
            const same = entry.top_logprobs.find((candidate) => candidate.token === entry.token);
            if (same != null)
                expect(same.logprob).toBeCloseTo(entry.logprob, 5);
            for (const candidate of [entry, ...entry.top_logprobs])
                expect(Buffer.from(candidate.bytes!).toString("utf8")).toBe(candidate.token);
        }
    };
    /** The pieces are the reply: their bytes concatenated decode to its text, one entry per generated token. */
    const expectPieces = (content: Content, text: string, tokens: number) => {
        expect(content).toHaveLength(tokens);
        expect(Buffer.concat(content.map((entry) => Buffer.from(entry.bytes!))).toString("utf8")).toBe(text);
    };

    it("reports, per generated token, its logprob and the top_logprobs head of its distribution; the bytes rebuild the reply", async () => {
        const reply = await chat({temperature: 0, logprobs: true, top_logprobs: 20});
        const content = reply.choices[0]!.logprobs!.content!;
        expectDistribution(content, 20);
        expectPieces(content, reply.choices[0]!.message.content!, reply.usage!.completion_tokens);
        // a byte token holding part of a UTF-8 character: its raw byte, not the replacement character's three
        const partial = content.filter((entry) => entry.token === "\uFFFD");
        expect(partial.length).toBeGreaterThan(0);
        for (const entry of partial)
            expect(entry.bytes).toEqual([expect.toSatisfy((byte: number) => byte >= 0x80 && byte <= 0xff)]);
        // greedy: the chosen token is the head of its list
        for (const entry of content)
            expect(entry.top_logprobs[0]).toEqual({token: entry.token, logprob: entry.logprob, bytes: entry.bytes});
        expect(20).toBeLessThanOrEqual(vocabulary);
        const bare = await chat({temperature: 0, logprobs: true});
        expect(bare.choices[0]!.message.content).toBe(reply.choices[0]!.message.content);
        expectDistribution(bare.choices[0]!.logprobs!.content!, 0);
        expect(bare.choices[0]!.logprobs!.content!.map((entry) => entry.logprob)).toEqual(content.map((entry) => entry.logprob));
        // not asked: none reported
        expect((await chat({temperature: 0})).choices[0]!.logprobs).toBeNull();
    }, 120_000);

    it("with temperature 0 reports the softmax of the logits (after bias and penalties) at temperature 1, not the greedy pick's certainty", async () => {
        const greedy = (await chat({temperature: 0, logprobs: true, top_logprobs: 20}, 1)).choices[0]!.logprobs!.content![0]!;
        // the same first position sampled at temperature 1 with no truncation: the raw distribution
        const raw = (await chat({temperature: 1, top_k: vocabulary, top_p: 1, min_p: 0, seed: 1, logprobs: true, top_logprobs: 20}, 1))
            .choices[0]!.logprobs!.content![0]!;
        expect(greedy.logprob).toBeLessThan(-0.01);
        expect(greedy.top_logprobs.map((candidate) => candidate.token)).toEqual(raw.top_logprobs.map((candidate) => candidate.token));
        greedy.top_logprobs.forEach((candidate, index) => expect(candidate.logprob).toBeCloseTo(raw.top_logprobs[index]!.logprob, 4));
        // a −100 bias takes the greedy pick out of the distribution: the reported one is after the bias
        const first = placed.model.tokenize(greedy.token, false);
        expect(placed.model.detokenize(first)).toBe(greedy.token);
        expect(first).toHaveLength(1);
        const biased = (await chat({temperature: 0, logprobs: true, top_logprobs: 20, logit_bias: {[String(first[0])]: -100}}, 1))
            .choices[0]!.logprobs!.content![0]!;
        expect(biased.top_logprobs.map((candidate) => candidate.token)).not.toContain(greedy.token);
        expect(biased.top_logprobs[0]!.token).toBe(greedy.top_logprobs[1]!.token);
    }, 120_000);

    it("streams the same logprobs as the non-streamed reply of a seeded request, and asking for them changes no token", async () => {
        const seeded = {temperature: 0.8, seed: 7, logprobs: true, top_logprobs: 3};
        const whole = await chat(seeded, 16);
        const content = whole.choices[0]!.logprobs!.content!;
        expectDistribution(content, 3);
        expectPieces(content, whole.choices[0]!.message.content!, whole.usage!.completion_tokens);
        const streamed = await streamedChat(seeded, 16);
        expect(streamed.text).toBe(whole.choices[0]!.message.content);
        expect(streamed.content).toEqual(content);
        const without = await chat({temperature: 0.8, seed: 7}, 16);
        expect(without.choices[0]!.message.content).toBe(whole.choices[0]!.message.content);
        // sampled, not greedy: somewhere the chosen token is not the most likely one
        expect(content.some((entry) => entry.top_logprobs[0]!.logprob > entry.logprob + EPSILON)).toBe(true);
    }, 120_000);

    it("answers the legacy completions shape: tokens, token_logprobs, top_logprobs and text_offset from the prompt's start", async () => {
        const prompt = "The sea is";
        const reply = await client.completions.create({model: "tiny", prompt, max_tokens: 10, temperature: 0, logprobs: 3});
        const choice = reply.choices[0]!;
        const logprobs = choice.logprobs!;
        expect(logprobs.tokens).toHaveLength(reply.usage!.completion_tokens);
        expect(logprobs.tokens!.join("")).toBe(choice.text);
        let offset = prompt.length;
        logprobs.tokens!.forEach((token, index) => {
            expect(logprobs.text_offset![index]).toBe(offset);
            offset += token.length;
            // candidates whose pieces read the same (two byte tokens both render U+FFFD) share one key of the object
            const top = Object.entries(logprobs.top_logprobs![index]!);
            expect(top.length).toBeGreaterThanOrEqual(1);
            expect(top.length).toBeLessThanOrEqual(3);
            expect(top[0]).toEqual([token, logprobs.token_logprobs![index]]);
            expect(logprobs.token_logprobs![index]).toBeLessThanOrEqual(0);
        });
        const stream = await client.completions.create({model: "tiny", prompt, max_tokens: 10, temperature: 0, logprobs: 3, stream: true});
        const tokens: string[] = [];
        const offsets: number[] = [];
        for await (const chunk of stream) {
            tokens.push(...chunk.choices[0]?.logprobs?.tokens ?? []);
            offsets.push(...chunk.choices[0]?.logprobs?.text_offset ?? []);
        }
        expect(tokens).toEqual(logprobs.tokens);
        expect(offsets).toEqual(logprobs.text_offset);
    }, 120_000);

    it("refuses top_logprobs without logprobs, and out-of-range or mistyped values, naming the field", async () => {
        const refused = async (extra: Record<string, unknown>) => {
            try {
                await chat({temperature: 0, ...extra}, 2);
            } catch (error) {
                return error as InstanceType<typeof OpenAI.APIError>;
            }
            throw new Error("not refused");
        };
        expect(await refused({top_logprobs: 5})).toMatchObject({status: 400, param: "top_logprobs"});
        for (const value of [21, -1, 2.5, "5", true])
            expect(await refused({logprobs: true, top_logprobs: value}), JSON.stringify(value)).toMatchObject({status: 400, param: "top_logprobs"});
        expect(await refused({logprobs: 3})).toMatchObject({status: 400, param: "logprobs"});
        expect(await refused({n_probs: 3})).toMatchObject({status: 400, param: "n_probs"});
    }, 60_000);
});
