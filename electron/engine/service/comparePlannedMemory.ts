import {isHostBufferType, type MemoryReport} from "../../contract/memory.js";

export type PlannedVsMeasuredRow = {
    bufferType: string;
    isHost: boolean;
    /** Planned weight bytes for this buffer type, when the plan names it. */
    plannedWeightsBytes: number | null;
    weightsBytes: number;
    kvCacheBytes: number;
    scratchBytes: number;
};

export type PlannedVsMeasured = {
    rows: PlannedVsMeasuredRow[];
    planned: {hostBytes: number; deviceBytes: number};
    measured: {hostBytes: number; deviceBytes: number};
};

/**
 * Lines planned weight bytes up with what llama.cpp allocated. A plan says "CPU" for host memory; llama.cpp puts
 * those tensors in the GPU's pinned host buffer type (CUDA_Host, Vulkan_Host) when mmap is off, so plans and
 * measurements are compared per side (host vs device) as well as per buffer type.
 */
export function comparePlannedMemory(plannedBytesPerBufferType: Readonly<Record<string, number>>, measured: MemoryReport): PlannedVsMeasured {
    const isHostName = (name: string) => isHostBufferType(name, measured.bufferTypes);
    // Planned "CPU" lands in the one host buffer type that holds weights (e.g. Vulkan_Host), if there is exactly one.
    const hostWithWeights = measured.bufferTypes.filter((entry) => entry.isHost && entry.weightsBytes > 0);
    const planned: Record<string, number> = {...plannedBytesPerBufferType};
    const onlyHost = hostWithWeights.length === 1 ? hostWithWeights[0] : undefined;
    if (onlyHost != null && onlyHost.bufferType !== "CPU" && planned.CPU != null && planned[onlyHost.bufferType] == null) {
        planned[onlyHost.bufferType] = planned.CPU;
        delete planned.CPU;
    }
    const rows: PlannedVsMeasuredRow[] = measured.bufferTypes.map((entry) => ({
        bufferType: entry.bufferType,
        isHost: entry.isHost,
        plannedWeightsBytes: planned[entry.bufferType] ?? null,
        weightsBytes: entry.weightsBytes,
        kvCacheBytes: entry.kvCacheBytes,
        scratchBytes: entry.scratchBytes
    }));
    for (const [bufferType, bytes] of Object.entries(planned))
        if (!rows.some((row) => row.bufferType === bufferType))
            rows.push({bufferType, isHost: isHostName(bufferType), plannedWeightsBytes: bytes, weightsBytes: 0, kvCacheBytes: 0, scratchBytes: 0});
    const plannedSide = (host: boolean) => Object.entries(plannedBytesPerBufferType)
        .filter(([name]) => isHostName(name) === host)
        .reduce((sum, [, bytes]) => sum + bytes, 0);
    return {
        rows,
        planned: {hostBytes: plannedSide(true), deviceBytes: plannedSide(false)},
        measured: {hostBytes: measured.host.weightsBytes, deviceBytes: measured.device.weightsBytes}
    };
}
