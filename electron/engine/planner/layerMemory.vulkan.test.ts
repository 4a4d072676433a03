// Needs a GPU device: Mesa's software Vulkan (llvmpipe) here and in CI. Skipped, with the reason, where there is none.
// Which device each layer's KV cache / recurrent state and a tied output's copy land on, planned vs llama.cpp's no-alloc
// simulation of the same load: layer splits of the sliding-window, hybrid and MLA+MTP models, and a per-tensor plan
// that keeps the tied output in host memory.
import {mkdtempSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import type {ResolvedSettings} from "../../contract/settings.js";
import {inspectGguf} from "../gguf/inspectGguf.js";
import {validateGgufFileSync} from "../gguf/validateGguf.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeSyntheticArchModel, type SyntheticArchModelName} from "../writer/syntheticArchModels.js";
import {costContext, predict, vramNeed} from "./costModel.js";
import {layerSplit, perTensor, placementOverrides, tiedOutputOverrides} from "./resolvePlacement.js";
import {createVramSimulator} from "./simulateVram.js";
import {fakeProfile} from "./testing/fakeProfile.js";
import {handSettings} from "./testing/handModel.js";
import {plannerModelFrom} from "./types.js";

const probe = await probeEngine("vulkan");
if (probe.reason != null)
    console.warn(`[skip] per-layer memory on the Vulkan device: ${probe.reason}`);

const dir = mkdtempSync(path.join(os.tmpdir(), "tensorwise-layer-memory-vk-"));

describe.skipIf(probe.reason != null)("per-layer memory on the GPU: planned vs llama.cpp's no-alloc simulation (Vulkan)", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });

    const settings: ResolvedSettings = handSettings({useMmap: false, batchSize: 256, contextSize: 2048, threads: 1, opOffload: false});

    async function setUp(name: SyntheticArchModelName) {
        const engine = probe.engine!;
        const made = await makeSyntheticArchModel(path.join(dir, `${name}.gguf`), name);
        const model = plannerModelFrom(inspectGguf(validateGgufFileSync(made.path)));
        const gpuDevice = engine.bindings.tensorwiseGetDevices().find((d) => d.type === "gpu" || d.type === "igpu")!.name;
        const simulator = await createVramSimulator(engine, made.path, model, gpuDevice);
        const cx = costContext({model, profile: fakeProfile(model, {gpuDevice}), gpuDevice}, settings, {promptTokens: 64, genTokens: 16});
        return {made, model, simulator, cx};
    }

    for (const name of ["gemma2-swa", "lfm2-hybrid", "deepseek2-mla"] as const) {
        it(`${name}: every -ngl puts the same weights, KV cache and state on the GPU and in host memory`, async () => {
            const {made, model, simulator, cx} = await setUp(name);
            for (let gpuLayers = 1; gpuLayers <= made.layers + 1; gpuLayers++) {
                const placement = layerSplit(model, gpuLayers);
                const planned = vramNeed(cx, placement);
                const predicted = predict(cx, placement);
                const simulated = await simulator.simulate({gpuLayers: placement.gpuLayers, overrides: [], settings});
                const label = `${name} -ngl ${gpuLayers}`;
                expect(planned.kv, label).toBe(simulated.kv);
                expect(predicted.hostKvBytes, label).toBe(simulated.hostKv);
                // weights up to each tensor's alignment padding
                expect(simulated.weights - planned.weights, label).toBeGreaterThanOrEqual(0);
                expect(simulated.weights - planned.weights, label).toBeLessThan(256 * model.tensors.length);
            }
        }, 300_000);
    }

    it("a tied output: its copy counts on the GPU with the output layer, and an override of token_embd keeps it in host memory", async () => {
        const {model, simulator, cx} = await setUp("gemma2-swa");
        const tied = model.tensors.find((t) => t.tiedTo != null)!;
        const all = perTensor(model, new Set());
        expect(tiedOutputOverrides(model, all)).toEqual([]);
        const onGpu = await simulator.simulate({gpuLayers: "max", overrides: [], settings});
        expect(vramNeed(cx, all).weights).toBeGreaterThan(tied.bytes);
        expect(onGpu.weights - vramNeed(cx, all).weights).toBeLessThan(256 * model.tensors.length);

        // the output matmul in host memory takes output_norm with it (perTensor: its multiply then runs beside the matmul)
        const hostOutput = perTensor(model, new Set([tied.name]));
        const outputNorm = model.tensors.find((t) => t.role === "output_norm")!;
        expect(tiedOutputOverrides(model, hostOutput)).toEqual([{pattern: "^token_embd\\.weight$", bufferType: "CPU"}]);
        const overrides = [...tiedOutputOverrides(model, hostOutput), ...placementOverrides(model, hostOutput, "Vulkan0")];
        expect(overrides).toEqual([{pattern: "^token_embd\\.weight$", bufferType: "CPU"}, {pattern: "^output_norm\\.weight$", bufferType: "CPU"}]);
        const kept = await simulator.simulate({gpuLayers: "max", overrides, settings});
        expect(vramNeed(cx, all).weights - vramNeed(cx, hostOutput).weights).toBe(tied.bytes + outputNorm.bytes);
        expect(onGpu.weights - kept.weights).toBe(tied.bytes + outputNorm.bytes);
    }, 300_000);
});
