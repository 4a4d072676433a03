/**
 * Memory truth without allocating: node-llama-cpp's no-alloc simulation (a model loaded with `no_alloc`, a context
 * reserved on it), which our patch makes override-aware. Used to measure the scratch (GPU compute buffer) per
 * micro-batch once, and to check the chosen plan exactly (its VRAM, and the host's compute buffers, which the cost
 * model prices only for a CPU-only graph); the MILP itself prices memory from those numbers.
 */
import type {ResolvedSettings} from "../../contract/settings.js";
import {GgufInsights, readGgufFileInfo, type GgufFileInfo} from "node-llama-cpp";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {TensorBufferOverride} from "../placement/Placement.js";
import {kvBytesPerLayer} from "./costModel.js";
import type {PlannerModel, VramNeed} from "./types.js";

/** What the simulator loads: `-ngl`, per-tensor overrides, context and micro-batch. */
export type SimulatedPlan = {
    readonly gpuLayers: number | "max";
    readonly overrides: readonly TensorBufferOverride[];
    readonly settings: Pick<ResolvedSettings, "contextSize" | "batchSize">;
    /** Repeating layers whose KV cache is on the GPU (to split the context's VRAM into KV and scratch). */
    readonly kvGpuLayers: number;
};

/** What llama.cpp would allocate for a plan: the GPU's weights, KV cache and compute buffer, and the host's compute buffers. */
export type SimulatedMemory = VramNeed & {
    /** Host compute buffers (scratch): the context's host memory less the KV cache of the layers left on the CPU. */
    readonly hostScratch: number;
};

/** llama.cpp's own memory accounting of plans for one model file. */
export type VramSimulator = {
    /** GPU weights, KV cache and compute buffer of a plan, and the host's compute buffers, as llama.cpp would allocate them. */
    simulate(plan: SimulatedPlan): Promise<SimulatedMemory>;
    /**
     * GPU compute buffer per micro-batch size at `contextSize`: the larger of all-on-GPU and all-on-host (`-ngl 0`,
     * whose prefill ops are offloaded with their weights copied in), which bounds the placements in between.
     */
    scratchByBatch(contextSize: number, batchSizes: readonly number[]): Promise<Map<number, number>>;
};

/** Distinct override sets simulated per model before the oldest is dropped. */
const MAX_INSIGHTS = 8;

/**
 * A simulator for `modelPath` (validate the file first: `readGgufFileInfo` is not safe on crafted files). One
 * `GgufInsights` per override set, since node-llama-cpp binds the overrides to the insights instance.
 */
export async function createVramSimulator(engine: EngineLlama, modelPath: string, model: PlannerModel): Promise<VramSimulator> {
    const fileInfo: GgufFileInfo = await readGgufFileInfo(modelPath, {readTensorInfo: true, logWarnings: false, sourceType: "filesystem"});
    const insightsByKey = new Map<string, Promise<GgufInsights>>();
    const insightsFor = (overrides: readonly TensorBufferOverride[]): Promise<GgufInsights> => {
        const key = JSON.stringify(overrides.map((o) => [o.pattern, o.bufferType]));
        let found = insightsByKey.get(key);
        if (found == null) {
            if (overrides.length > 0)
                engine.bindings.tensorwiseValidateTensorBufferOverrides(overrides.map((o) => [o.pattern, o.bufferType]));
            found = GgufInsights.from(fileInfo, engine.llama, overrides.length > 0 ? {tensorBufferOverrides: overrides} : undefined);
            insightsByKey.set(key, found);
            if (insightsByKey.size > MAX_INSIGHTS) insightsByKey.delete(insightsByKey.keys().next().value!);
        }
        return found;
    };

    const simulate = async (plan: SimulatedPlan): Promise<SimulatedMemory> => {
        const insights = await insightsFor(plan.overrides);
        const gpuLayers = plan.gpuLayers === "max" ? insights.totalLayers : plan.gpuLayers;
        // mmap off: the simulation has no mmap mode (node-llama-cpp patches it up with a heuristic); device buffers
        // are the same either way, only the host weights change buffer type
        const weights = await insights.estimateModelResourceRequirementsV2({gpuLayers, useMmap: false});
        const context = await insights.estimateContextResourceRequirementsV2({
            contextSize: plan.settings.contextSize, modelGpuLayers: gpuLayers, batchSize: plan.settings.batchSize,
            sequences: 1, flashAttention: false, useMmap: false
        });
        // source: llama_kv_cache ctor — K and V of the GPU layers; the rest of the context's VRAM is compute buffers
        const kvPerLayer = kvBytesPerLayer(model, plan.settings.contextSize);
        const kv = Math.min(context.gpuVram, plan.kvGpuLayers * kvPerLayer);
        const scratch = Math.max(0, context.gpuVram - kv);
        const hostScratch = Math.max(0, context.cpuRam - (model.layerCount - plan.kvGpuLayers) * kvPerLayer);
        return {weights: weights.gpuVram, kv, scratch, total: weights.gpuVram + kv + scratch, hostScratch};
    };

    return {
        simulate,
        async scratchByBatch(contextSize, batchSizes) {
            const result = new Map<number, number>();
            for (const batch of new Set(batchSizes.map((b) => Math.min(b, contextSize)))) {
                const settings = {contextSize, batchSize: batch};
                const all = await simulate({gpuLayers: "max", overrides: [], settings, kvGpuLayers: model.layerCount});
                const none = await simulate({gpuLayers: 0, overrides: [], settings, kvGpuLayers: 0});
                result.set(batch, Math.max(all.scratch, none.scratch));
            }
            return result;
        }
    };
}
