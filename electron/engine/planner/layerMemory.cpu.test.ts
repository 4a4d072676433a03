// The planner's per-layer memory (KV cache, sliding window, MLA latent, recurrent state, MTP layers, tied output)
// against llama.cpp's own no-alloc simulation of the same load, on small models of each family written by our writer.
// Needs the CPU engine.
import {mkdtempSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import type {KvCacheType} from "../../contract/settings.js";
import {inspectGguf} from "../gguf/inspectGguf.js";
import {validateGgufFileSync} from "../gguf/validateGguf.js";
import {PlacedModel} from "../runtime/PlacedModel.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeSyntheticArchModel, type SyntheticArchModelName} from "../writer/syntheticArchModels.js";
import {kvBytesTotal} from "./costModel.js";
import type {KvSettings} from "./layerMemory.js";
import {createVramSimulator} from "./simulateVram.js";
import {plannerModelFrom} from "./types.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] per-layer memory against llama.cpp's simulation: ${probe.reason}`);

const dir = mkdtempSync(path.join(os.tmpdir(), "tensorwise-layer-memory-"));

/** Two loads per model: F16 without flash attention, and a q8_0 cache (flash attention on) at an unpadded context. */
const SETTINGS: readonly KvSettings[] = [
    {contextSize: 2048, batchSize: 512, kvCacheType: "f16", flashAttention: false},
    {contextSize: 1000, batchSize: 64, kvCacheType: "q8_0" satisfies KvCacheType, flashAttention: true}
];

/** Hand-computed bytes of each model at SETTINGS[0] (F16, 2048 cells, micro-batch 512): the formulas, pinned. */
const EXPECTED_KV_F16_2048: Readonly<Record<SyntheticArchModelName, number>> = {
    // MLA: 3 trunk layers (the MTP layer has none) × 2048 cells × one latent row of kv_lora_rank 64 + rope 32, no V
    "deepseek2-mla": 3 * 2048 * (64 + 32) * 2,
    // 3 layers × F32 (conv (4 − 1) × d_inner 256 + SSM d_state 16 × d_inner 256), whatever the context
    mamba: 3 * ((4 - 1) * 256 + 16 * 256) * 4,
    // 2 SWA attention layers × (window 64 + micro-batch 512 + 1, padded to 768 cells) × K and V of 2 × 64, and
    // 3 short-conv layers × F32 embd 256 × (l_cache 3 − 1)
    "lfm2-hybrid": 2 * 768 * 2 * 128 * 2 + 3 * 256 * 2 * 4,
    // even layers SWA (768 cells, as above with window 128), odd layers the whole context, K and V of 2 × 64
    "gemma2-swa": (2 * 768 + 2 * 2048) * 2 * 128 * 2
};

describe.skipIf(probe.reason != null)("per-layer memory: planned vs llama.cpp's no-alloc simulation (CPU)", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });

    for (const name of Object.keys(EXPECTED_KV_F16_2048) as SyntheticArchModelName[]) {
        it(`${name}: KV cache and recurrent state byte for byte, the weights llama.cpp loads`, async () => {
            const engine = probe.engine!;
            const made = await makeSyntheticArchModel(path.join(dir, `${name}.gguf`), name);
            const inspected = inspectGguf(validateGgufFileSync(made.path));
            const model = plannerModelFrom(inspected);
            const simulator = await createVramSimulator(engine, made.path, model, null);
            expect(kvBytesTotal(model, SETTINGS[0]!)).toBe(EXPECTED_KV_F16_2048[name]);
            for (const settings of SETTINGS) {
                const simulated = await simulator.simulate({gpuLayers: 0, overrides: [], settings: {...settings, useGpu: false}});
                expect(kvBytesTotal(model, settings), `${name} ${JSON.stringify(settings)}`).toBe(simulated.hostKv);
            }

            // weights: what the file holds, minus the MTP layers llama.cpp skips; a tied output's copy adds to the host
            // only where the CPU's extra buffer type (AMX, CPU_REPACK) takes the matmul weight (the breakdown shows which)
            const simulated = await simulator.simulate({gpuLayers: 0, overrides: [], settings: {...SETTINGS[0]!, useGpu: false}});
            const simulatedWeights = simulated.bufferTypes.reduce((sum, b) => sum + b.model, 0);
            const tied = model.tensors.find((t) => t.tiedTo != null);
            const extraBuffer = simulated.bufferTypes.some((b) => b.name !== "CPU" && b.model > 0);
            const expected = model.weightBytes + (tied != null && extraBuffer ? tied.bytes : 0);
            const padding = 256 * model.tensors.length; // each tensor's allocation is padded to the buffer's alignment
            expect(simulatedWeights - expected).toBeGreaterThanOrEqual(0);
            expect(simulatedWeights - expected).toBeLessThan(padding);
            if (made.nextnLayers > 0) {
                const mtpBytes = inspected.tensors.filter((t) => (t.layer ?? -1) >= made.layers - made.nextnLayers).reduce((s, t) => s + t.bytes, 0);
                expect(inspected.tensorBytes - model.weightBytes).toBe(mtpBytes);
                expect(model.tensors.some((t) => t.layer === made.layers - 1)).toBe(false);
            }
            expect(tied != null).toBe(name === "lfm2-hybrid" || name === "gemma2-swa");
        }, 120_000);
    }

    it("a real CPU load of the SWA model holds the planned KV cache (node-llama-cpp: window + micro-batch + 1 cells)", async () => {
        const engine = probe.engine!;
        const made = await makeSyntheticArchModel(path.join(dir, "gemma2-load.gguf"), "gemma2-swa");
        const model = plannerModelFrom(inspectGguf(validateGgufFileSync(made.path)));
        const settings = SETTINGS[0]!;
        const placed = await PlacedModel.load(engine, {
            modelPath: made.path, gpuLayers: 0, overrides: [], useMmap: false, contextSize: settings.contextSize, batchSize: settings.batchSize,
            threads: 1, flashAttention: settings.flashAttention, kvCacheType: settings.kvCacheType
        });
        try {
            expect(placed.memory().host.kvCacheBytes).toBe(kvBytesTotal(model, settings));
        } finally {
            await placed.dispose();
        }
    }, 120_000);
});
