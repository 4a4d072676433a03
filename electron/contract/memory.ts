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
 * Whether buffer type `name` is host memory (system RAM, pinned or not). A buffer type listed in `known` — the
 * machine's buffer types (`ggml_backend_buft_is_host`) or a measured report's — answers for itself; any other name is
 * host when it is ggml's CPU buffer type (`"CPU"`, or an extra CPU buffer type such as `"CPU_REPACK"`) or a device's
 * pinned host buffer type (see {@link isPinnedHostBufferType}).
 */
export function isHostBufferType(name: string, known: readonly {readonly name?: string; readonly bufferType?: string; readonly isHost: boolean}[] = []): boolean {
    const entry = known.find((candidate) => (candidate.name ?? candidate.bufferType) === name);
    if (entry != null)
        return entry.isHost;
    return name === "CPU" || name.startsWith("CPU_") || isPinnedHostBufferType(name);
}

/**
 * Whether `name` is a device's pinned host buffer type, which ggml names `<backend>_Host` (`"CUDA_Host"`,
 * `"Vulkan_Host"`: ggml_backend_cuda_host_buffer_type, ggml_backend_vk_host_buffer_type): system RAM the GPU copies
 * from fast.
 */
export function isPinnedHostBufferType(name: string): boolean {
    return name.endsWith("_Host");
}
