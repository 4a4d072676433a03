import type {MemoryComparison, PlannedTotals} from "../contract/memory.js";
import {formatBytes, formatTable} from "../engine/format/formatBytes.js";

const planned = (value: PlannedTotals | null, pick: (totals: PlannedTotals) => number | null) => {
    const bytes = value == null ? null : pick(value);
    return bytes == null ? "—" : formatBytes(bytes);
};

/**
 * The engine's planned-vs-measured memory as terminal lines: one table row per physical memory (system RAM, then each
 * GPU) with labelled columns, one per buffer type beneath it, then the engine's notes. Renders only; the comparison is
 * made once in the engine (comparePlannedMemory.ts).
 */
export function memoryLines(memory: MemoryComparison): string[] {
    const rows: string[][] = [["memory", "capacity", "free after load", "budget", "weights planned / measured", "KV cache planned / measured", "scratch planned / measured"]];
    for (const device of memory.devices) {
        rows.push([
            `${device.name} (${device.device})`, formatBytes(device.totalBytes), formatBytes(device.freeAfterLoadBytes),
            device.budgetBytes == null ? "—" : formatBytes(device.budgetBytes),
            `${planned(device.planned, (p) => p.weightsBytes)} / ${formatBytes(device.measured.weightsBytes)}`,
            `${planned(device.planned, (p) => p.kvCacheBytes)} / ${formatBytes(device.measured.kvCacheBytes)}`,
            `${planned(device.planned, (p) => p.scratchBytes)} / ${formatBytes(device.measured.scratchBytes)}`
        ]);
        for (const use of device.bufferTypes)
            rows.push([
                `  ${use.bufferType}${use.plannedAs == null ? "" : ` (planned as ${use.plannedAs})`}`, "", "", "",
                `${use.plannedWeightsBytes == null ? "—" : formatBytes(use.plannedWeightsBytes)} / ${formatBytes(use.weightsBytes)}`,
                `— / ${formatBytes(use.kvCacheBytes)}`, `— / ${formatBytes(use.scratchBytes)}`
            ]);
    }
    return [formatTable(rows), ...memory.devices.flatMap((device) => device.notes.map((note) => `note: ${note}`))];
}
