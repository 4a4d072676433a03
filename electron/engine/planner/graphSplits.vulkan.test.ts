// Needs a GPU device: Mesa's software Vulkan (llvmpipe) here and in CI. Skipped, with the reason, where there is none.
// The cost model's CPU↔GPU switches of one decode step against llama.cpp's own count of the decode graph's splits
// (ggml_backend_sched_get_n_splits, logged by llama_context's graph reserve) for the same load, simulated with no_alloc:
// layer splits, every layer offloaded with weights moved to host memory (where llama.cpp still runs each layer's norms
// on the GPU), and layer splits whose CPU layers keep weights on the GPU, with the KV cache offloaded and not.
import {mkdtempSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {inspectGguf} from "../gguf/inspectGguf.js";
import {validateGgufFileSync} from "../gguf/validateGguf.js";
import {GraphSplitLog} from "../testing/graphSplitLog.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {makeSyntheticArchModel, type SyntheticArchModelName} from "../writer/syntheticArchModels.js";
import {costContext, decodeSplits} from "./costModel.js";
import {layerSplit, perTensor, placementOverrides, tiedOutputOverrides} from "./resolvePlacement.js";
import {createVramSimulator} from "./simulateVram.js";
import {fakeProfile} from "./testing/fakeProfile.js";
import {handSettings} from "./testing/handModel.js";
import {plannerModelFrom, type PlannerModel, type ResolvedPlacement} from "./types.js";

const splitLog = new GraphSplitLog();
const probe = await probeEngine("vulkan", splitLog.engineOptions);
if (probe.reason != null)
    console.warn(`[skip] decode graph splits on the Vulkan device: ${probe.reason}`);

const dir = mkdtempSync(path.join(os.tmpdir(), "tensorwise-graph-splits-vk-"));

/** The placements each model is checked with. */
function placements(model: PlannerModel): [string, ResolvedPlacement][] {
    const ops = model.tensors.filter((t) => t.op != null);
    const names = (pick: (t: PlannerModel["tensors"][number]) => boolean): Set<string> => new Set(ops.filter(pick).map((t) => t.name));
    const last = model.layerCount - 1;
    return [
        ["-ngl 0", layerSplit(model, 0)],
        ["-ngl 2", layerSplit(model, 2)],
        ["-ngl max", layerSplit(model, model.layerCount + 1)],
        ["-ngl max, every matmul weight in host memory", perTensor(model, names(() => true))],
        ["-ngl max, the FFN weights in host memory", perTensor(model, names((t) => t.layer != null && t.role.startsWith("ffn_")))],
        ["CPU layers, one weight of layer 1 on the GPU", perTensor(model, names((t) => !(t.layer === 1 && t === ops.filter((o) => o.layer === 1).at(-1))), 0)],
        ["the last layer on the GPU, its first weight in host memory, the rest in host memory",
            perTensor(model, names((t) => t.layer !== last || t === ops.find((o) => o.layer === last)), 1)]
    ];
}

describe.skipIf(probe.reason != null)("the cost model's decode switches match llama.cpp's decode graph splits (Vulkan)", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });

    const arch = (name: SyntheticArchModelName) => async () => (await makeSyntheticArchModel(path.join(dir, `${name}.gguf`), name)).path;
    /**
     * The models, and the placements where the cost model is known not to count llama.cpp's splits, with why: those rows
     * are printed, every other row must match exactly.
     */
    const models: {label: string; make: () => Promise<string>; gaps?: Record<string, string>}[] = [
        {label: "llama (our writer's small preset)", make: () => makeTestModel("splits-small", {preset: "small", layers: 4, type: "f16"})},
        {label: "gemma2-swa", make: arch("gemma2-swa")},
        {label: "deepseek2-mla", make: arch("deepseek2-mla"), gaps: Object.fromEntries([
            "-ngl max, every matmul weight in host memory", "-ngl max (-nkvo)", "-ngl max, the FFN weights in host memory (-nkvo)"
        ].map((name) => [name, "MLA's query and latent-KV branches, with the latent cache store between them, are not one attention node " +
            "(src/models/deepseek2.cpp: the graph visits them in another order than the cost model's)"]))},
        {label: "lfm2-hybrid", make: arch("lfm2-hybrid"), gaps: Object.fromEntries([
            "-ngl max, every matmul weight in host memory", "-ngl max, every matmul weight in host memory (-nkvo)"
        ].map((name) => [name, "the graph visits the attention layers' Q and K norms in another order than the cost model's (one switch per layer)"]))},
        {label: "mamba", make: arch("mamba"), gaps: Object.fromEntries([
            "-ngl 2", "-ngl max", "-ngl max, the FFN weights in host memory", "the last layer on the GPU, its first weight in host memory, the rest in host memory",
            "-ngl 2 (-nkvo)", "-ngl max (-nkvo)", "-ngl max, the FFN weights in host memory (-nkvo)"
        ].map((name) => [name, "Vulkan runs SSM_SCAN only for a state size of 128 or 256 (ggml_backend_vk_device_supports_op); this model's 16 " +
            "falls back to the CPU in every GPU layer, which the profile does not record"]))}
    ];

    for (const {label, make, gaps = {}} of models) {
        it(`${label}: every placement, with the KV cache on its layers' devices and in host memory`, async () => {
            const engine = probe.engine!;
            const modelPath = await make();
            const model = plannerModelFrom(inspectGguf(validateGgufFileSync(modelPath)));
            const gpuDevice = engine.bindings.tensorwiseGetDevices().find((d) => d.type === "gpu" || d.type === "igpu")!.name;
            const simulator = await createVramSimulator(engine, modelPath, model, gpuDevice);
            const rows: string[] = [];
            const mismatches: string[] = [];
            for (const kvOffload of [true, false]) {
                const settings = handSettings({useMmap: false, batchSize: 256, contextSize: 1024, threads: 1, kvOffload});
                const cx = costContext({model, profile: fakeProfile(model, {gpuDevice}), gpuDevice}, settings, {promptTokens: 64, genTokens: 16});
                for (const [name, p] of placements(model)) {
                    const overrides = [...tiedOutputOverrides(model, p), ...placementOverrides(model, p, gpuDevice)];
                    const measured = await splitLog.of(() => simulator.simulate({gpuLayers: p.gpuLayers, overrides, settings}));
                    const predicted = decodeSplits(cx, p);
                    const key = `${name}${kvOffload ? "" : " (-nkvo)"}`;
                    const gap = gaps[key];
                    const row = `${key}: llama.cpp ${measured.decode}, cost model ${predicted}${gap == null ? "" : ` (known gap: ${gap})`}`;
                    rows.push(row);
                    if (gap == null && measured.decode !== predicted) mismatches.push(row);
                }
            }
            console.log(`${label}\n  ${rows.join("\n  ")}`);
            expect(mismatches).toEqual([]);
        }, 300_000);
    }
});
