// Needs a GPU device: Mesa's software Vulkan (llvmpipe) here and in CI. Skipped, with the reason, where there is none.
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Token} from "node-llama-cpp";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {inspectGguf} from "../gguf/inspectGguf.js";
import {validateGgufFile} from "../gguf/validateGguf.js";
import type {InspectedModel} from "../gguf/inspectGguf.js";
import {compilePlacement} from "../placement/compilePlacement.js";
import {createVramSimulator} from "../planner/simulateVram.js";
import {plannerModelFrom} from "../planner/types.js";
import {summarisePlacement} from "../placement/summarisePlacement.js";
import type {Placement} from "../placement/Placement.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {confirmedTensors, OverrideLog} from "../testing/overrideLog.js";
import {PlacedModel} from "./PlacedModel.js";
import {generateGreedy} from "./generateGreedy.js";
import {maxProbabilityDifference, teacherForcedProbabilities} from "./teacherForcedProbabilities.js";

const overrideLog = new OverrideLog();
const probe = await probeEngine("vulkan", overrideLog.engineOptions);
if (probe.reason != null)
    console.warn(`[skip] Vulkan placement tests: ${probe.reason}`);

const PROMPT = "The quick brown fox jumps over the lazy dog";
/** ggml pads each tensor to its buffer type's alignment; measured buffers may exceed the plan by that much. */
const MAX_PADDING_PER_TENSOR = 256;

describe.skipIf(probe.reason != null)("per-tensor placement on a real second device (Vulkan)", () => {
    let engine: EngineLlama;
    let modelPath: string;
    let model: InspectedModel;

    beforeAll(async () => {
        modelPath = await makeTestModel("vk-small", {preset: "small", layers: 4, type: "f16"});
        model = inspectGguf(await validateGgufFile(modelPath));
        engine = probe.engine!;
    });
    afterAll(async () => {
        await engine?.llama.dispose();
    });

    function ffnOnHost(): Placement {
        const assignments: Record<string, string> = {};
        for (const tensor of model.tensors)
            if (tensor.layer != null && ["ffn_gate", "ffn_up", "ffn_down"].includes(tensor.role))
                assignments[tensor.name] = "CPU";
        return {defaultBufferType: "Vulkan0", assignments};
    }

    it("puts exactly the planned bytes on the host and on the device, and llama.cpp confirms every override", async () => {
        const placement = ffnOnHost();
        const {overrides} = compilePlacement(placement, model.tensors);
        expect(overrides).toHaveLength(1);
        const planned = summarisePlacement(placement, model.tensors);
        const plannedHost = planned.byBufferType.filter((entry) => entry.bufferType === "CPU").reduce((sum, entry) => sum + entry.bytes, 0);
        const plannedDevice = planned.byBufferType.filter((entry) => entry.bufferType === "Vulkan0").reduce((sum, entry) => sum + entry.bytes, 0);

        let memory: ReturnType<PlacedModel["memory"]> | null = null;
        const confirmed = await overrideLog.confirmedBy(async () => {
            const placed = await PlacedModel.load(engine, {modelPath, overrides, contextSize: 512, batchSize: 256});
            try {
                memory = placed.memory();
                const reply = await generateGreedy(placed, PROMPT, {maxTokens: 8, stopAtEog: false});
                expect(reply.tokens).toHaveLength(8);
                expect(reply.timing.ttftMs).toBeGreaterThan(0);
                expect(reply.timing.tpotMs).toBeGreaterThan(0);
            } finally {
                await placed.dispose();
            }
        });
        expect(confirmedTensors(confirmed)).toEqual(Object.keys(placement.assignments).sort());
        expect(confirmed.every((entry) => entry.bufferType === "Vulkan_Host")).toBe(true);

        const measured = memory!;
        // mmap off for a mixed plan: host weights sit in the device's pinned host buffer
        expect(measured.bufferTypes.map((entry) => entry.bufferType)).toContain("Vulkan_Host");
        const slack = MAX_PADDING_PER_TENSOR * model.tensors.length;
        expect(measured.host.weightsBytes).toBeGreaterThanOrEqual(plannedHost);
        expect(measured.host.weightsBytes - plannedHost).toBeLessThanOrEqual(slack);
        expect(measured.device.weightsBytes).toBeGreaterThanOrEqual(plannedDevice);
        expect(measured.device.weightsBytes - plannedDevice).toBeLessThanOrEqual(slack);
        // KV cache from the shapes: 4 layers × K and V × 512 cells × (1024/16 × 4 KV heads) × 2 bytes (F16), all on the device
        expect(measured.device.kvCacheBytes).toBe(4 * 2 * 512 * 256 * 2);
        expect(measured.host.kvCacheBytes).toBe(0);
        // scratch: the device compute buffer llama.cpp's no-alloc simulation reserves for the same plan and context
        const simulator = await createVramSimulator(engine, modelPath, plannerModelFrom(model));
        const simulated = await simulator.simulate({gpuLayers: "max", overrides, settings: {contextSize: 512, batchSize: 256}});
        expect(simulated.kv).toBe(measured.device.kvCacheBytes);
        expect(measured.device.scratchBytes).toBe(simulated.scratch);
        expect(measured.device.weightsBytes).toBe(simulated.weights);
        // and the host's compute buffers (in the device's pinned host buffer type) as the simulation says, up to that
        // buffer's alignment (32 bytes more on llvmpipe)
        expect(Math.abs(measured.host.scratchBytes - simulated.hostScratch)).toBeLessThanOrEqual(4096);
        expect(simulated.hostScratch).toBeGreaterThan(0);
    });

    it("gives identical greedy output for the same placement, and matching distributions across placements", async () => {
        const runs: {tokens: Token[]; probabilities: Map<Token, number>[]}[] = [];
        const variants = [
            {name: "all on Vulkan0", options: {gpuLayers: "max" as const}},
            {name: "FFN on host", options: {overrides: compilePlacement(ffnOnHost(), model.tensors).overrides}},
            {name: "FFN on host, again", options: {overrides: compilePlacement(ffnOnHost(), model.tensors).overrides}},
            {name: "all on CPU", options: {gpuLayers: 0}}
        ];
        let forced: Token[] | null = null;
        for (const variant of variants) {
            const placed = await PlacedModel.load(engine, {modelPath, contextSize: 512, ...variant.options});
            try {
                const {tokens} = await generateGreedy(placed, PROMPT, {maxTokens: 16, stopAtEog: false});
                forced ??= tokens;
                runs.push({tokens, probabilities: await teacherForcedProbabilities(placed, PROMPT, forced)});
            } finally {
                await placed.dispose();
            }
        }
        const [allDevice, mixed, mixedAgain, cpu] = runs as [typeof runs[0], typeof runs[0], typeof runs[0], typeof runs[0]];
        // Same placement, same backends: bit-identical.
        expect(mixedAgain.tokens).toEqual(mixed.tokens);
        expect(maxProbabilityDifference(mixed.probabilities, mixedAgain.probabilities)).toBe(0);
        // Across backends (llvmpipe vs CPU kernels, different summation order) the numerics differ slightly.
        // Tolerance: 1e-3 absolute on next-token probabilities (measured here: ~4e-5).
        const tolerance = 1e-3;
        const differences = {
            "all-device vs mixed": maxProbabilityDifference(allDevice.probabilities, mixed.probabilities),
            "all-device vs cpu": maxProbabilityDifference(allDevice.probabilities, cpu.probabilities),
            "mixed vs cpu": maxProbabilityDifference(mixed.probabilities, cpu.probabilities)
        };
        console.log("max next-token probability difference across placements:", differences);
        for (const difference of Object.values(differences))
            expect(difference).toBeLessThanOrEqual(tolerance);
    });

    it("rejects an unknown buffer type and a bad pattern before loading, and keeps working", async () => {
        await expect(PlacedModel.load(engine, {modelPath, overrides: [{pattern: "^output\\.weight$", bufferType: "Vulkan7"}]}))
            .rejects.toThrow(/unknown buffer type "Vulkan7".*Vulkan0/);
        await expect(PlacedModel.load(engine, {modelPath, overrides: [{pattern: "^blk\\.(0\\.ffn", bufferType: "CPU"}]}))
            .rejects.toThrow(/invalid pattern/);
        const placed = await PlacedModel.load(engine, {modelPath, contextSize: 256});
        expect((await generateGreedy(placed, PROMPT, {maxTokens: 2, stopAtEog: false})).tokens).toHaveLength(2);
        await placed.dispose();
    });
});
