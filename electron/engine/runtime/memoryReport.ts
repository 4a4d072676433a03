import {inSystemRam, type BufferTypeMemory, type MemoryReport} from "../../contract/memory.js";
import type {NativeBufferTypeMemory} from "../native/tensorwiseBindings.js";

/** A plan's predicted memory per buffer type as a {@link MemoryReport}, leaving out buffer types with no bytes. */
export function predictedMemoryReport(rows: readonly NativeBufferTypeMemory[]): MemoryReport {
    return toMemoryReport(rows.filter((row) => row.model + row.context + row.compute > 0));
}

/** Turns the native breakdown into a {@link MemoryReport}. */
export function toMemoryReport(native: readonly NativeBufferTypeMemory[]): MemoryReport {
    const bufferTypes = native
        .map((entry): BufferTypeMemory => ({
            bufferType: entry.name,
            device: entry.device ?? "CPU",
            isHost: inSystemRam(entry),
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
