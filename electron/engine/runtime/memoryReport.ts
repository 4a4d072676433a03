import type {NativeBufferTypeMemory} from "../native/tensorwiseBindings.js";

/** Measured memory of one buffer type after load: weights, KV cache and scratch (compute buffers). */
export type BufferTypeMemory = {
    bufferType: string;
    /** The device the buffer type belongs to (`"CPU"` for plain host memory). */
    device: string;
    /** System RAM (pinned host buffers such as `CUDA_Host` count as host). */
    isHost: boolean;
    weightsBytes: number;
    kvCacheBytes: number;
    scratchBytes: number;
};

/** Where a loaded model's memory went, as llama.cpp accounts it. JSON-serialisable. */
export type MemoryReport = {
    bufferTypes: BufferTypeMemory[];
    /** Totals over host buffer types (system RAM) and over device (VRAM) buffer types. */
    host: {weightsBytes: number; kvCacheBytes: number; scratchBytes: number};
    device: {weightsBytes: number; kvCacheBytes: number; scratchBytes: number};
};

/** Turns the native breakdown into a {@link MemoryReport}. */
export function toMemoryReport(native: readonly NativeBufferTypeMemory[]): MemoryReport {
    const bufferTypes = native
        .map((entry): BufferTypeMemory => ({
            bufferType: entry.name,
            device: entry.device ?? "CPU",
            isHost: entry.isHost,
            weightsBytes: entry.model,
            kvCacheBytes: entry.context,
            scratchBytes: entry.compute
        }))
        .sort((a, b) => Number(a.isHost) - Number(b.isHost) || a.bufferType.localeCompare(b.bufferType));

    const sum = (host: boolean) => {
        const selected = bufferTypes.filter((entry) => entry.isHost === host);
        return {
            weightsBytes: selected.reduce((total, entry) => total + entry.weightsBytes, 0),
            kvCacheBytes: selected.reduce((total, entry) => total + entry.kvCacheBytes, 0),
            scratchBytes: selected.reduce((total, entry) => total + entry.scratchBytes, 0)
        };
    };
    return {bufferTypes, host: sum(true), device: sum(false)};
}
