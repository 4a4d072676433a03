import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Token} from "node-llama-cpp";
import {exactPromptTokens} from "../bench/exactPrompt.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {generateGreedy} from "./generateGreedy.js";
import {PlacedModel} from "./PlacedModel.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] native generation loop tests: ${probe.reason}`);

/** node-llama-cpp's own per-token path (the one the native loop replaced), greedy, from an empty sequence. */
async function greedyThroughNodeLlamaCpp(placed: PlacedModel, prompt: readonly Token[], count: number): Promise<Token[]> {
    const sequence = placed.sequence;
    await sequence.clearHistory();
    const tokens: Token[] = [];
    for await (const token of sequence.evaluate([...prompt], {temperature: 0})) {
        tokens.push(token);
        if (tokens.length >= count) break;
    }
    await sequence.clearHistory();
    return tokens;
}

describe.skipIf(probe.reason != null)("native generation loop (patched CPU build, generated model)", () => {
    let engine: EngineLlama;
    let placed: PlacedModel;

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("native-gen-small", {preset: "tiny", type: "f16"});
        placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024, threads: 1});
    });
    afterAll(async () => {
        await placed?.dispose();
        await engine?.llama.dispose();
    });

    it("gives the same greedy tokens as node-llama-cpp's path, for short and multi-batch prompts, in either order", async () => {
        for (const length of [1, 7, 600]) {
            const prompt = exactPromptTokens(placed.model, length);
            const before = await greedyThroughNodeLlamaCpp(placed, prompt, 24);
            const native = await generateGreedy(placed, prompt, {maxTokens: 24, stopAtEog: false});
            const after = await greedyThroughNodeLlamaCpp(placed, prompt, 24);
            expect(native.tokens).toHaveLength(24);
            expect(native.tokens).toEqual(before);
            expect(after).toEqual(before);
            expect(native.timing.tpotMs).toBeGreaterThan(0);
        }
    });

    it("reuses the cached prompt prefix without changing the reply", async () => {
        const prompt = exactPromptTokens(placed.model, 40);
        const fresh = await placed.generate(prompt, {maxTokens: 8, stopAtEog: false, reusePrefix: false});
        const extended = [...prompt, ...fresh.tokens];
        const reused = await placed.generate(extended, {maxTokens: 8, stopAtEog: false});
        const recomputed = await placed.generate(extended, {maxTokens: 8, stopAtEog: false, reusePrefix: false});
        expect(reused.tokens).toEqual(recomputed.tokens);
    });

    it("stops within 250 ms of an abort and keeps the tokens generated so far", async () => {
        const controller = new AbortController();
        let abortedAt = 0;
        const prompt = exactPromptTokens(placed.model, 8);
        const result = placed.generate(prompt, {
            maxTokens: 900, stopAtEog: false, signal: controller.signal,
            onTokens: (tokens) => {
                if (abortedAt === 0 && tokens.length > 0) {
                    abortedAt = performance.now();
                    controller.abort();
                }
            }
        });
        const {tokens, end} = await result;
        const stopMs = performance.now() - abortedAt;
        expect(end.reason).toBe("abort");
        expect(tokens.length).toBeGreaterThan(0);
        expect(tokens.length).toBeLessThan(900);
        expect(stopMs).toBeLessThan(250);
        // the context is left consistent: the next request works and matches node-llama-cpp's path
        const again = await generateGreedy(placed, prompt, {maxTokens: 6, stopAtEog: false});
        expect(again.tokens).toEqual(await greedyThroughNodeLlamaCpp(placed, prompt, 6));
    });

    it("a stop while the prompt is processed returns at once without tokens, and the next reply is unchanged", async () => {
        const prompt = exactPromptTokens(placed.model, 600);
        const controller = new AbortController();
        let progressAtStop = -1;
        const stopped = await placed.generate(prompt, {
            maxTokens: 8, stopAtEog: false, signal: controller.signal, reusePrefix: false,
            // small chunks: several progress reports before the first token
            promptChunkTargetMs: 1,
            onPromptProgress: ({decoded}) => {
                if (progressAtStop < 0) {
                    progressAtStop = decoded;
                    controller.abort();
                }
            }
        });
        expect(progressAtStop).toBeGreaterThan(0);
        expect(progressAtStop).toBeLessThan(prompt.length);
        expect(stopped.end.reason).toBe("abort");
        expect(stopped.tokens).toEqual([]);
        // queued behind the loop still finishing its chunk; reuses what that chunk left in the KV cache
        const next = await placed.generate(prompt, {maxTokens: 8, stopAtEog: false});
        const recomputed = await placed.generate(prompt, {maxTokens: 8, stopAtEog: false, reusePrefix: false});
        expect(next.reused).toBeGreaterThanOrEqual(progressAtStop);
        expect(next.tokens).toEqual(recomputed.tokens);
    });
});
