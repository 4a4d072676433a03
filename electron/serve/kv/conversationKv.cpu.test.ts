/**
 * Conversations that outnumber the sequences, on a generated model with one sequence and one thread, driven by the
 * `openai` client: a conversation pushed out of its sequence by another comes back by swap or by recompute, and either
 * way continues with the same greedy reply as when it never left; the decision follows the cost model.
 */
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EngineLlama} from "../../engine/native/getEngineLlama.js";
import {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../engine/testing/probeEngine.js";
import {makeTestModel} from "../../engine/testing/testModels.js";
import type {KvCostModel} from "./KvCostModel.js";
import type {KvTimings} from "../protocols/openai/replyBodies.js";
import {fifoPolicy} from "../scheduling/schedulingPolicies.js";
import {serveOpenAi, type OpenAiServer} from "../serveOpenAi.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] conversation KV tests: ${probe.reason}`);

/** Costs that make one path far cheaper than the other. */
const swapCheap: KvCostModel = {
    stateBytes: {headerBytes: 0, bytesPerToken: 1000}, save: {fixedMs: 0, msPer: 1e-9}, load: {fixedMs: 0, msPer: 1e-9},
    prefill: {fixedMs: 100, msPer: 10}, source: "given (swap cheap)"
};
const recomputeCheap: KvCostModel = {
    ...swapCheap, save: {fixedMs: 100, msPer: 1}, load: {fixedMs: 100, msPer: 1}, prefill: {fixedMs: 0, msPer: 1e-6}, source: "given (recompute cheap)"
};

const FIRST = "Tell me a story about the river";
const OTHER = "Count the bridges of the old town";
const FOLLOW_UP = "What happened next?";
const MAX_TOKENS = 12;

type Reply = {text: string; kv: KvTimings; promptTokens: number; evaluated: number};

describe.skipIf(probe.reason != null)("conversations beyond the sequences (CPU, generated model, 1 sequence, 1 thread)", () => {
    let engine: EngineLlama;
    let placed: PlacedModel;

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("kv-tiny", {preset: "tiny", type: "q8_0"});
        placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024, threads: 1, sequences: 1});
    });
    afterAll(async () => {
        await placed?.dispose();
        await engine?.llama.dispose();
    });

    async function withServer<T>(kv: NonNullable<Parameters<typeof serveOpenAi>[0]["kv"]>, use: (chat: (messages: OpenAI.ChatCompletionMessageParam[]) => Promise<Reply>, server: OpenAiServer) => Promise<T>): Promise<T> {
        const server = await serveOpenAi({placed, modelId: "kv-tiny", queueLength: 4, requestTimeoutMs: 60_000, policy: fifoPolicy, kv});
        const client = new OpenAI({baseURL: server.url, apiKey: "unused", maxRetries: 0});
        const chat = async (messages: OpenAI.ChatCompletionMessageParam[]): Promise<Reply> => {
            const reply = await client.chat.completions.create({model: "kv-tiny", messages, max_tokens: MAX_TOKENS, temperature: 0});
            const {timings} = reply as unknown as {timings: {kv: KvTimings; prompt_tokens_evaluated: number}};
            return {text: reply.choices[0]!.message.content ?? "", kv: timings.kv, promptTokens: reply.usage!.prompt_tokens, evaluated: timings.prompt_tokens_evaluated};
        };
        try {
            return await use(chat, server);
        } finally {
            await server.close();
        }
    }

    /** The first turn, optionally another conversation in between, then the follow-up. */
    async function conversation(kv: Parameters<typeof withServer>[0], interrupted: boolean): Promise<{first: Reply; other: Reply | null; second: Reply}> {
        return withServer(kv, async (chat) => {
            const first = await chat([{role: "user", content: FIRST}]);
            const other = interrupted ? await chat([{role: "user", content: OTHER}]) : null;
            const second = await chat([{role: "user", content: FIRST}, {role: "assistant", content: first.text}, {role: "user", content: FOLLOW_UP}]);
            return {first, other, second};
        });
    }

    it("swap and recompute each continue a conversation with the same greedy reply as when it never left its sequence", async () => {
        const uninterrupted = await conversation({costModel: swapCheap}, false);
        expect(uninterrupted.first.kv.path).toBe("new");
        expect(uninterrupted.second.kv.path).toBe("resident");
        expect(uninterrupted.second.text.length).toBeGreaterThan(0);
        // the first turn's KV cache is reused as far as the re-tokenised reply matches what was generated
        expect(uninterrupted.second.evaluated).toBeLessThan(uninterrupted.second.promptTokens);

        const swapped = await conversation({costModel: swapCheap}, true);
        expect(swapped.second.kv).toMatchObject({path: "swap", conversation: swapped.first.kv.conversation, fallback: null});
        expect(swapped.second.kv.measured!.swap_out_ms).toBeGreaterThan(0);
        expect(swapped.second.kv.measured!.swap_in_ms).toBeGreaterThan(0);
        expect(swapped.second.kv.measured!.recompute_ms).toBeNull();
        expect(swapped.second.text).toBe(uninterrupted.second.text);
        expect(swapped.second.evaluated).toBe(uninterrupted.second.evaluated);

        const recomputed = await conversation({costModel: recomputeCheap}, true);
        expect(recomputed.second.kv.path).toBe("recompute");
        expect(recomputed.second.kv.measured!.swap_out_ms).toBeNull();
        expect(recomputed.second.kv.measured!.recompute_ms).toBeGreaterThan(0);
        expect(recomputed.second.kv.measured!.swap_ms).toBeNull();
        expect(recomputed.second.text).toBe(uninterrupted.second.text);
        expect(recomputed.second.evaluated).toBe(uninterrupted.second.evaluated);
    });

    it("calibrates the cost model on this context, predicts the state file's size exactly, and measures both paths in benchmark mode", async () => {
        await withServer({measureBoth: true, calibrationTokens: 64}, async (chat, server) => {
            const model = server.kv.costModel;
            expect(model.source).toMatch(/^measured/);
            expect(model.stateBytes.bytesPerToken).toBeGreaterThan(0);
            expect(model.prefill.msPer).toBeGreaterThan(0);

            const first = await chat([{role: "user", content: FIRST}]);
            await chat([{role: "user", content: OTHER}]);
            const second = await chat([{role: "user", content: FIRST}, {role: "assistant", content: first.text}, {role: "user", content: FOLLOW_UP}]);
            const {kv} = second;
            expect(kv.path === "swap" || kv.path === "recompute").toBe(true);
            expect(kv.measured!.swap_ms).toBeGreaterThan(0);
            expect(kv.measured!.recompute_ms).toBeGreaterThan(0);
            expect(kv.path).toBe(kv.predicted!.swap_ms <= kv.predicted!.recompute_ms ? "swap" : "recompute");
            const [decision] = server.kv.decisions;
            expect(decision!.tokens).toBe(kv.tokens);
            expect(decision!.predicted.stateBytes).toBe(decision!.measured.stateBytes);
        });
    });

    it("names conversations by the X-Conversation-Id header when given, and refuses a malformed one in a sentence", async () => {
        await withServer({costModel: swapCheap}, async (_chat, server) => {
            const send = (id: string) => fetch(`${server.url}/chat/completions`, {
                method: "POST", headers: {"Content-Type": "application/json", "X-Conversation-Id": id},
                body: JSON.stringify({messages: [{role: "user", content: FIRST}], max_tokens: 2, temperature: 0})
            });
            const a = await (await send("thread-a")).json() as {timings: {kv: KvTimings}};
            const b = await (await send("thread-b")).json() as {timings: {kv: KvTimings}};
            expect(a.timings.kv.conversation).not.toBe(b.timings.kv.conversation);
            const again = await (await send("thread-a")).json() as {timings: {kv: KvTimings}};
            expect(again.timings.kv).toMatchObject({conversation: a.timings.kv.conversation, path: "swap"});
            const bad = await send("has space");
            expect(bad.status).toBe(400);
            expect(((await bad.json()) as {error: {message: string}}).error.message).toMatch(/X-Conversation-Id header must be sent once, as 1 to 200 visible ASCII/);
        });
    });
});
