import type {MachineDescription} from "../contract/machine.js";
import {
    isHostBufferType, isPinnedHostBufferType, plannedScratchBytes, type BufferTypeMemory, type BufferTypeUse, type DeviceMemory, type MemoryComparison,
    type MemoryReport, type MemoryTotals, type PlannedTotals
} from "../contract/memory.js";

/** What a load planned and what llama.cpp measured, with the machine as described just after the load. */
export type PlannedMemoryInputs = {
    /** Planned weight bytes per buffer type (the placement's). */
    plannedWeights: Readonly<Record<string, number>>;
    /** The planner's per-buffer-type prediction (weights, KV cache, scratch), `null` when the load had none. */
    prediction: MemoryReport | null;
    measured: MemoryReport;
    machine: MachineDescription;
    /** The GPU budget the plan was made under (weights + KV cache + scratch), `null` for loads without one. */
    budgetBytes: number | null;
    /** The served embedding context's measured memory (ServedEmbeddings.ts), `null` or absent while there is none. */
    embeddings?: MemoryReport | null;
};

const HOST = "CPU";

/**
 * Lines planned memory up with what llama.cpp allocated, per physical memory: every host buffer type (plain, mapped
 * or a GPU's pinned host buffer) counts under system RAM, every other one under its device. A plan says "CPU" for
 * host memory, and llama.cpp puts those tensors in a GPU's pinned buffer (Vulkan_Host, CUDA_Host) when mmap is off or
 * maps them from the file (CPU_Mapped) when it is on, so host weights are compared on system RAM as a whole; per
 * buffer type, planned "CPU" is shown on the one host buffer type that holds weights.
 */
export function comparePlannedMemory(inputs: PlannedMemoryInputs): MemoryComparison {
    const {measured, machine} = inputs;
    const known = [...machine.bufferTypes, ...measured.bufferTypes];
    const isHost = (name: string) => isHostBufferType(name, known);
    const deviceOf = (entry: {bufferType: string; device: string; isHost: boolean}) => entry.isHost ? HOST : entry.device;
    const uses = bufferTypeUses(inputs.plannedWeights, measured, isHost);
    // the embedding context's buffer types, each counted on the memory that holds it as the model's are
    const embeddingsOn = (name: string) => (inputs.embeddings?.bufferTypes ?? []).filter((entry) => deviceOf({...entry, isHost: isHost(entry.bufferType)}) === name)
        .reduce((sum, entry) => sum + entry.weightsBytes + entry.kvCacheBytes + entry.scratchBytes, 0);

    const gpuNames = [...new Set([
        ...machine.devices.filter((device) => device.type !== "cpu").map((device) => device.name),
        ...uses.map(deviceOf).filter((name) => name !== HOST),
        ...(inputs.embeddings?.bufferTypes ?? []).map((entry) => deviceOf({...entry, isHost: isHost(entry.bufferType)})).filter((name) => name !== HOST)
    ])];
    const host: DeviceMemory = finish({
        device: HOST, name: "System RAM", kind: "host", totalBytes: machine.ram.totalBytes, freeAfterLoadBytes: machine.ram.freeBytes,
        budgetBytes: null, planned: plannedOn(inputs, true, isHost, null), embeddingsBytes: embeddingsOn(HOST)
    }, uses.filter((use) => deviceOf(use) === HOST));
    const gpus = gpuNames.map((name): DeviceMemory => {
        const device = machine.devices.find((candidate) => candidate.name === name);
        const mine = uses.filter((use) => deviceOf(use) === name);
        const planned = plannedOn(inputs, false, isHost, device?.bufferType ?? name);
        return finish({
            device: name, name: device?.description || name, kind: "gpu", totalBytes: device?.totalBytes ?? 0,
            freeAfterLoadBytes: device?.freeBytes ?? 0,
            budgetBytes: inputs.budgetBytes != null && machine.gpu?.name === name ? inputs.budgetBytes : null,
            planned, embeddingsBytes: embeddingsOn(name)
        }, mine);
    });
    return {devices: [host, ...gpus]};
}

type DeviceHead = Pick<DeviceMemory, "device" | "name" | "kind" | "totalBytes" | "freeAfterLoadBytes" | "budgetBytes" | "planned" | "embeddingsBytes">;

function finish(head: DeviceHead, uses: BufferTypeUse[]): DeviceMemory {
    const measured = totals(uses);
    const ours = measured.weightsBytes + measured.kvCacheBytes + measured.scratchBytes + head.embeddingsBytes;
    const notes = uses.flatMap((use) => use.note == null ? [] : [use.note]);
    if (head.kind === "gpu" && ours > 0 && head.totalBytes > 0 && head.freeAfterLoadBytes + ours > head.totalBytes)
        notes.push(`The driver reports ${head.name} as having more free memory than this model leaves it (it does not count ` +
            "these allocations, as software and shared-memory devices often do), so free memory here is the driver's figure.");
    return {...head, measured, otherBytes: Math.max(0, head.totalBytes - head.freeAfterLoadBytes - ours), bufferTypes: uses, notes};
}

function totals(entries: readonly MemoryTotals[]): MemoryTotals {
    return {
        weightsBytes: entries.reduce((sum, entry) => sum + entry.weightsBytes, 0),
        kvCacheBytes: entries.reduce((sum, entry) => sum + entry.kvCacheBytes, 0),
        scratchBytes: entries.reduce((sum, entry) => sum + entry.scratchBytes, 0)
    };
}

/**
 * The plan for one physical memory: weights from the placement; KV cache and scratch from the planner's prediction
 * for its buffer types (every host row for system RAM). A host scratch the plan does not price stays `null`
 * (plannedScratchBytes, electron/contract/memory.ts).
 */
function plannedOn(inputs: PlannedMemoryInputs, host: boolean, isHost: (name: string) => boolean, gpuBufferType: string | null): PlannedTotals | null {
    const weights = Object.entries(inputs.plannedWeights).filter(([name]) => host ? isHost(name) : name === gpuBufferType);
    const predicted = (inputs.prediction?.bufferTypes ?? []).filter((entry) => host ? isHost(entry.bufferType) : entry.bufferType === gpuBufferType);
    if (weights.length === 0 && predicted.length === 0)
        return null;
    const scratch = predicted.map(plannedScratchBytes).filter((bytes): bytes is number => bytes != null);
    return {
        weightsBytes: weights.reduce((sum, [, bytes]) => sum + bytes, 0),
        kvCacheBytes: predicted.length === 0 ? null : predicted.reduce((sum, entry) => sum + entry.kvCacheBytes, 0),
        scratchBytes: scratch.length === 0 ? null : scratch.reduce((sum, bytes) => sum + bytes, 0)
    };
}

/** Measured buffer types with their planned weights; a planned buffer type llama.cpp did not use gets a row of zeros. */
function bufferTypeUses(plannedWeights: Readonly<Record<string, number>>, measured: MemoryReport, isHost: (name: string) => boolean): BufferTypeUse[] {
    const planned: Record<string, number> = {...plannedWeights};
    const plannedAs: Record<string, string> = {};
    // planned "CPU" lands in the one host buffer type that holds weights (Vulkan_Host, CPU_Mapped), if there is exactly one
    const hostWithWeights = measured.bufferTypes.filter((entry) => entry.isHost && entry.weightsBytes > 0);
    const onlyHost = hostWithWeights.length === 1 ? hostWithWeights[0] : undefined;
    if (onlyHost != null && onlyHost.bufferType !== HOST && planned[HOST] != null && planned[onlyHost.bufferType] == null) {
        planned[onlyHost.bufferType] = planned[HOST];
        plannedAs[onlyHost.bufferType] = HOST;
        delete planned[HOST];
    }
    const mapped = measured.bufferTypes.some((entry) => entry.bufferType === "CPU_Mapped" && entry.weightsBytes > 0);
    const uses: BufferTypeUse[] = measured.bufferTypes.map((entry) => ({
        ...entry, plannedWeightsBytes: planned[entry.bufferType] ?? null, plannedAs: plannedAs[entry.bufferType] ?? null, note: noteFor(entry, mapped)
    }));
    for (const [bufferType, bytes] of Object.entries(planned))
        if (!uses.some((use) => use.bufferType === bufferType)) {
            const host = isHost(bufferType);
            uses.push({
                bufferType, device: host ? HOST : bufferType, isHost: host, weightsBytes: 0, kvCacheBytes: 0, scratchBytes: 0,
                plannedWeightsBytes: bytes, plannedAs: null, note: null
            });
        }
    return uses;
}

/**
 * Says what a host buffer type other than plain "CPU" is, when it holds anything. `mapped`: the load also maps weights
 * from the file (CPU_Mapped), whose range llama.cpp counts whole, the repacked weights' original bytes included.
 */
function noteFor(entry: BufferTypeMemory, mapped: boolean): string | null {
    if (!entry.isHost || entry.bufferType === HOST || entry.weightsBytes + entry.kvCacheBytes + entry.scratchBytes === 0)
        return null;
    if (entry.bufferType === "CPU_Mapped")
        return "CPU_Mapped is system RAM mapped from the model file (mmap): what the plan calls CPU.";
    if (isPinnedHostBufferType(entry.bufferType))
        return `${entry.bufferType} is pinned system RAM that ${entry.device === HOST ? "the GPU" : entry.device} copies from fast: what the plan calls CPU.`;
    if (entry.bufferType.startsWith("CPU_") || entry.device === HOST)
        return `${entry.bufferType} is system RAM in a layout llama.cpp's CPU kernels prefer (weights repacked at load): what the plan calls CPU.` +
            (mapped && entry.weightsBytes > 0 ? " The model file stays mapped too (CPU_Mapped), and llama.cpp counts the mapped range whole, which can " +
                "include these weights' original bytes: page cache the system can take back. Loading without mmap avoids it." : "");
    return `${entry.bufferType} is system RAM.`;
}
