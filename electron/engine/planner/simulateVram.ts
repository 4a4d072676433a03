/**
 * Memory truth without allocating: llama.cpp's no-alloc simulation of a whole configuration (the model loaded with
 * `no_alloc` and a context reserved on it, native/src/TensorwiseSimulate.cpp), with every knob a plan sets: devices,
 * `-ngl`, overrides, context, micro-batch, flash attention, KV cache type, KV offload and op offload. llama.cpp reports
 * weights, KV cache and compute buffers per buffer type (llama_get_memory_breakdown), so nothing here is estimated.
 * Used to measure the scratch (GPU compute buffer) per candidate setting once, and to check the chosen plan exactly
 * (its VRAM, and the host's compute buffers); the MILP itself prices memory from those numbers.
 */
import {inSystemRam} from "../../contract/memory.js";
import type {ResolvedSettings} from "../../contract/settings.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {NativeBufferTypeMemory} from "../native/tensorwiseBindings.js";
import type {TensorBufferOverride} from "../placement/Placement.js";
import {scratchKey, type ScratchSettings} from "./costModel.js";
import type {PlannerModel, VramNeed} from "./types.js";

/** What the simulator loads: `-ngl`, per-tensor overrides and the settings (context, micro-batch and every knob). */
export type SimulatedPlan = {
    readonly gpuLayers: number | "max";
    readonly overrides: readonly TensorBufferOverride[];
    readonly settings: Pick<ResolvedSettings, "contextSize" | "batchSize"> & Partial<ResolvedSettings>;
    /** Parallel sequences (each with its own context of KV cache). Defaults to 1. */
    readonly sequences?: number;
};

/** What llama.cpp would allocate for a plan: the GPU's weights, KV cache and compute buffer, and the host's compute buffers. */
export type SimulatedMemory = VramNeed & {
    /** Host compute buffers (scratch): the compute buffers of every buffer type in system RAM. */
    readonly hostScratch: number;
    /** Host KV cache: the context memory of every buffer type in system RAM. */
    readonly hostKv: number;
    /** llama.cpp's accounting per buffer type, as simulated. */
    readonly bufferTypes: readonly NativeBufferTypeMemory[];
};

/** llama.cpp's own memory accounting of plans for one model file. */
export type VramSimulator = {
    /** GPU weights, KV cache and compute buffer of a plan, and the host's compute buffers, as llama.cpp would allocate them. */
    simulate(plan: SimulatedPlan): Promise<SimulatedMemory>;
    /**
     * GPU compute buffer per {@link scratchKey} of each settings at its context size: the larger of all-on-GPU and (with
     * op offload on) all-on-host (`-ngl 0`, whose prefill ops are offloaded with their weights copied in), which bounds
     * the placements in between.
     */
    scratchByKey(settings: readonly ScratchSettings[]): Promise<Map<string, number>>;
};

/** ggml type ids of the KV cache types (source: enum ggml_type in ggml/include/ggml.h). */
const GGML_TYPE_ID: Readonly<Record<ResolvedSettings["kvCacheType"], number>> = {f16: 1, q4_0: 2, q8_0: 8};

/** Sums llama.cpp's per-buffer-type accounting into the GPU's (`gpuDevice`, or every non-CPU device) and the host's share. */
export function splitBreakdown(bufferTypes: readonly NativeBufferTypeMemory[], gpuDevice: string | null): SimulatedMemory {
    let weights = 0, kv = 0, scratch = 0, hostScratch = 0, hostKv = 0;
    for (const b of bufferTypes) {
        if (inSystemRam(b)) {
            hostScratch += b.compute;
            hostKv += b.context;
        } else if (gpuDevice == null || b.device === gpuDevice) {
            weights += b.model;
            kv += b.context;
            scratch += b.compute;
        }
    }
    return {weights, kv, scratch, total: weights + kv + scratch, hostScratch, hostKv, bufferTypes};
}

/**
 * llama.cpp aborts on the configuration without a GPU (the simulation ran it in a child process, native/src/
 * TensorwiseSimulate.cpp, whose error message starts this way): a plan must keep the GPU, or cannot be made.
 */
export class CpuOnlyLoadAborts extends Error {
    static readonly PREFIX = "llama.cpp aborts on this configuration without a GPU";
    override readonly name = "CpuOnlyLoadAborts";
}

/**
 * A simulator for `modelPath` (validate the file first: llama.cpp's loader is not safe on crafted files). `gpuDevice`
 * names the GPU whose memory the plan budgets (`null`: every non-CPU device together).
 */
export async function createVramSimulator(engine: EngineLlama, modelPath: string, model: PlannerModel, gpuDevice: string | null = null): Promise<VramSimulator> {
    const simulate = async (plan: SimulatedPlan): Promise<SimulatedMemory> => {
        const {settings} = plan;
        const kvCacheType = settings.kvCacheType ?? "f16";
        const useGpu = settings.useGpu ?? true;
        const bufferTypes = await engine.bindings.tensorwiseSimulateMemory({
            modelPath,
            gpuLayers: !useGpu ? 0 : plan.gpuLayers === "max" ? model.layerCount + 1 : plan.gpuLayers,
            ...(plan.overrides.length > 0 ? {overrides: plan.overrides.map((o): [string, string] => [o.pattern, o.bufferType])} : {}),
            ...(useGpu ? {} : {devices: []}),
            contextSize: settings.contextSize,
            // node-llama-cpp adds a token to the batch of a sliding-window model (MemoryLayout.swaBatchPad)
            batchSize: settings.batchSize + (model.memory?.swaBatchPad === true ? 1 : 0),
            sequences: plan.sequences ?? 1,
            flashAttention: settings.flashAttention ?? kvCacheType !== "f16",
            typeK: GGML_TYPE_ID[kvCacheType],
            typeV: GGML_TYPE_ID[kvCacheType],
            kvOffload: settings.kvOffload ?? true,
            opOffload: settings.opOffload ?? true
        }).catch((error: unknown) => {
            const message = error instanceof Error ? error.message : String(error);
            throw message.startsWith(CpuOnlyLoadAborts.PREFIX) ? new CpuOnlyLoadAborts(message) : error;
        });
        return splitBreakdown(bufferTypes, gpuDevice);
    };

    return {
        simulate,
        async scratchByKey(settingsList) {
            const result = new Map<string, number>();
            for (const settings of settingsList) {
                const key = scratchKey(settings);
                if (result.has(key)) continue;
                const all = await simulate({gpuLayers: "max", overrides: [], settings});
                const none = settings.opOffload ? (await simulate({gpuLayers: 0, overrides: [], settings})).scratch : 0;
                result.set(key, Math.max(all.scratch, none));
            }
            return result;
        }
    };
}
