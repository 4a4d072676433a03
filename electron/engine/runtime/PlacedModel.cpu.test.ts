import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {GgufInsights, readGgufFileInfo} from "node-llama-cpp";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {CONTEXT_OVER_TRAINED_FACTOR} from "../../contract/limits.js";
import {PlacedModel} from "./PlacedModel.js";
import {generateGreedy} from "./generateGreedy.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] CPU runtime tests: ${probe.reason}`);

describe.skipIf(probe.reason != null)("CPU-only load and generation (patched CPU build)", () => {
    let engine: EngineLlama;
    let modelPath: string;

    beforeAll(async () => {
        engine = probe.engine!;
        modelPath = await makeTestModel("cpu-tiny", {preset: "tiny", type: "q8_0"});
    });
    afterAll(async () => {
        await engine?.llama.dispose();
    });

    it("loads, generates deterministically, and accounts every weight to the CPU", async () => {
        const placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024});
        try {
            expect(engine.llama.gpu).toBe(false);
            expect(engine.llama.buildType).toBe("localBuild");
            const first = await generateGreedy(placed, "Hello world", {maxTokens: 12, stopAtEog: false});
            const second = await generateGreedy(placed, "Hello world", {maxTokens: 12, stopAtEog: false});
            expect(first.tokens).toHaveLength(12);
            expect(second.tokens).toEqual(first.tokens);
            expect(first.timing.promptTokens).toBeGreaterThan(0);
            expect(first.timing.ttftMs).toBeGreaterThan(0);
            expect(first.timing.tpotMs).toBeGreaterThan(0);

            const memory = placed.memory();
            expect(memory.device.weightsBytes).toBe(0);
            expect(memory.host.weightsBytes).toBeGreaterThan(0);
            // KV cache from the shapes: 2 layers × K and V × 1024 cells × (128/4 × 2 KV heads) × 2 bytes (F16)
            expect(memory.host.kvCacheBytes).toBe(2 * 2 * 1024 * 64 * 2);
            // scratch: what llama.cpp's no-alloc simulation reserves for this context, less its KV cache
            const info = await readGgufFileInfo(modelPath, {readTensorInfo: true, logWarnings: false, sourceType: "filesystem"});
            const simulated = await (await GgufInsights.from(info, engine.llama)).estimateContextResourceRequirementsV2({
                contextSize: 1024, modelGpuLayers: 0, batchSize: placed.context.batchSize, sequences: 1, flashAttention: false, useMmap: false
            });
            expect(memory.host.scratchBytes).toBe(simulated.cpuRam - memory.host.kvCacheBytes);
        } finally {
            await placed.dispose();
        }
    });

    it("refuses a context beyond the model's trained context × the allowed factor, then loads a sane one", async () => {
        const started = performance.now();
        // the tiny preset is trained for 4096 tokens
        await expect(PlacedModel.load(engine, {modelPath, contextSize: 4096 * CONTEXT_OVER_TRAINED_FACTOR + 1}))
            .rejects.toMatchObject({code: "context-too-large", message: expect.stringMatching(/trained for \(4096 tokens\): choose at most 16384/)});
        expect(performance.now() - started).toBeLessThan(10_000);
        const placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024});
        await placed.dispose();
    });

    it("stops a generation when its signal aborts", async () => {
        const placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024});
        try {
            const controller = new AbortController();
            const result = await generateGreedy(placed, "Hello world", {
                maxTokens: 200, stopAtEog: false, signal: controller.signal,
                onToken: (_token, _elapsed) => {
                    controller.abort();
                }
            });
            expect(result.aborted).toBe(true);
            expect(result.tokens.length).toBe(1);
        } finally {
            await placed.dispose();
        }
    });
});
