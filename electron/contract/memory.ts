/**
 * Memory per buffer type — weights, KV cache and scratch (compute buffers) — as planned and as llama.cpp measured it
 * (`llama_model::memory_breakdown()`, `llama_context::memory_breakdown()`), and the one rule for which buffer types
 * are host memory, shared by the planner, the memory comparison and the Memory screen.
 */

/** Memory of one buffer type: weights, KV cache and scratch (compute buffers). */
export type BufferTypeMemory = {
    bufferType: string;
    /** The device the buffer type belongs to (`"CPU"` for plain host memory). */
    device: string;
    /** System RAM (pinned host buffers such as `CUDA_Host` count as host); see {@link isHostBufferType}. */
    isHost: boolean;
    weightsBytes: number;
    kvCacheBytes: number;
    scratchBytes: number;
};

/**
 * The scratch a plan gives a host buffer type when it does not price it. Where a GPU runs part of the graph, the
 * planners price only the GPU's compute buffer. llama.cpp always gives the host some compute buffer, so a priced host
 * scratch is never 0.
 */
export const UNPRICED_HOST_SCRATCH = 0;

/** A plan's scratch for one buffer type, or `null` where the plan does not price it (see {@link UNPRICED_HOST_SCRATCH}). */
export function plannedScratchBytes(entry: Pick<BufferTypeMemory, "isHost" | "scratchBytes">): number | null {
    return entry.isHost && entry.scratchBytes === UNPRICED_HOST_SCRATCH ? null : entry.scratchBytes;
}

/** Bytes of one kind of memory. */
export type MemoryTotals = {weightsBytes: number; kvCacheBytes: number; scratchBytes: number};

/** Where a loaded (or planned) model's memory goes, per buffer type. JSON-serialisable. */
export type MemoryReport = {
    bufferTypes: BufferTypeMemory[];
    /** Totals over host buffer types (system RAM) and over device (VRAM) buffer types. */
    host: MemoryTotals;
    device: MemoryTotals;
};

/**
 * Whether a buffer type llama.cpp reports lives in system RAM: `ggml_backend_buft_is_host`, or a buffer type of the CPU
 * device itself. The CPU's extra buffer types (`"AMX"` on Intel CPUs with AMX, `"CPU_REPACK"`, `"CPU_KLEIDIAI"`) say
 * they are not host, because their tensors are repacked for the CPU's kernels and cannot be read as plain data
 * (ggml_backend_amx_buffer_type in ggml/src/ggml-cpu/amx/amx.cpp), yet they are system RAM all the same.
 */
export function inSystemRam(bufferType: {readonly isHost: boolean; readonly deviceType: string | null}): boolean {
    return bufferType.isHost || bufferType.deviceType === "cpu";
}

/**
 * Whether buffer type `name` is host memory (system RAM, pinned or not). A buffer type listed in `known` — the
 * machine's buffer types (`ggml_backend_buft_is_host`) or a measured report's — answers for itself; any other name is
 * host when it is ggml's CPU buffer type (`"CPU"`, or an extra CPU buffer type such as `"CPU_REPACK"` or `"AMX"`) or a device's
 * pinned host buffer type (see {@link isPinnedHostBufferType}).
 */
export function isHostBufferType(name: string, known: readonly {readonly name?: string; readonly bufferType?: string; readonly isHost: boolean}[] = []): boolean {
    const entry = known.find((candidate) => (candidate.name ?? candidate.bufferType) === name);
    if (entry != null)
        return entry.isHost;
    return name === "CPU" || name.startsWith("CPU_") || name === "AMX" || isPinnedHostBufferType(name);
}

/**
 * Whether `name` is a device's pinned host buffer type, which ggml names `<backend>_Host` (`"CUDA_Host"`,
 * `"Vulkan_Host"`: ggml_backend_cuda_host_buffer_type, ggml_backend_vk_host_buffer_type): system RAM the GPU copies
 * from fast.
 */
export function isPinnedHostBufferType(name: string): boolean {
    return name.endsWith("_Host");
}

/** Planned bytes of one physical memory; `null` where the plan predicts nothing for that kind. */
export type PlannedTotals = {weightsBytes: number; kvCacheBytes: number | null; scratchBytes: number | null};

/** A buffer type as counted on the physical memory that holds it, with the plan's weights for it. */
export type BufferTypeUse = BufferTypeMemory & {
    /** Planned weight bytes for this buffer type, `null` when the plan does not name it. */
    plannedWeightsBytes: number | null;
    /** The buffer type the plan named for these weights when llama.cpp used another one (planned `"CPU"` → `"Vulkan_Host"`). */
    plannedAs: string | null;
    /** What this buffer type is, for a user, when its name does not say it (`CPU_Mapped`, `Vulkan_Host`, …). */
    note: string | null;
};

/**
 * One physical memory — system RAM, or one GPU's memory — with what the plan expected on it and what llama.cpp
 * measured, against its capacity. Host buffer types (mapped and pinned ones included) count under system RAM.
 */
export type DeviceMemory = {
    /** `"CPU"` for system RAM, else the ggml device name (`"Vulkan0"`, `"CUDA0"`). */
    device: string;
    /** What a user calls it: `"System RAM"`, or the device's description. */
    name: string;
    kind: "host" | "gpu";
    totalBytes: number;
    /** Free memory as the operating system or driver reported it just after the load. */
    freeAfterLoadBytes: number;
    /** What the plan was allowed to use here (weights + KV cache + scratch); `null` where no budget applied. */
    budgetBytes: number | null;
    /** `null` when the load had no plan for this memory. */
    planned: PlannedTotals | null;
    measured: MemoryTotals;
    /**
     * The OpenAI-compatible server's embedding context here (its KV cache and scratch as llama.cpp measured them,
     * electron/serve/protocols/embeddings/ServedEmbeddings.ts): made on the first `/v1/embeddings` request and kept while the server runs;
     * 0 while there is none. Not in `measured`, which is the model's own context.
     */
    embeddingsBytes: number;
    /** Used by everything else on the machine (capacity − free − this model − the embedding context), never below 0. */
    otherBytes: number;
    bufferTypes: BufferTypeUse[];
    /** Sentences for the user about how to read this memory's numbers. */
    notes: string[];
};

/** Planned against measured memory after a load, per physical memory (system RAM first), computed by the engine. */
export type MemoryComparison = {devices: DeviceMemory[]};
