import {describe, expect, it} from "vitest";
import type {MachineDescription} from "../contract/machine.js";
import type {BufferTypeMemory, MemoryReport} from "../contract/memory.js";
import {toMemoryReport} from "../engine/runtime/memoryReport.js";
import {comparePlannedMemory} from "./comparePlannedMemory.js";

const GiB = 2 ** 30;
const MiB = 2 ** 20;

function machine(gpu: {freeBytes: number; totalBytes: number} | null): MachineDescription {
    const vulkan = gpu == null ? null : {
        name: "Vulkan0", description: "llvmpipe (LLVM 15.0.6, 256 bits)", type: "gpu" as const, backend: "Vulkan", ...gpu,
        bufferType: "Vulkan0", hostBufferType: "Vulkan_Host"
    };
    return {
        cpu: {model: "test CPU", cores: 2, threads: 2}, ram: {totalBytes: 16 * GiB, freeBytes: 10 * GiB}, backend: gpu == null ? "cpu" : "vulkan",
        buildType: "localBuild", llamaCpp: {release: "b0", repo: "ggml-org/llama.cpp"},
        devices: [
            {name: "CPU", description: "test CPU", type: "cpu", backend: "CPU", freeBytes: 10 * GiB, totalBytes: 16 * GiB, bufferType: "CPU", hostBufferType: null},
            ...vulkan == null ? [] : [vulkan]
        ],
        bufferTypes: [
            {name: "CPU", isHost: true, device: "CPU", deviceType: "cpu"},
            ...vulkan == null ? [] : [{name: "Vulkan0", isHost: false, device: "Vulkan0", deviceType: "gpu" as const},
                {name: "Vulkan_Host", isHost: true, device: "Vulkan0", deviceType: "gpu" as const}]
        ],
        gpu: vulkan
    };
}

function report(entries: Omit<BufferTypeMemory, "isHost" | "device">[], hosts: string[]): MemoryReport {
    const bufferTypes = entries.map((entry) => ({...entry, isHost: hosts.includes(entry.bufferType), device: entry.bufferType.startsWith("Vulkan") ? "Vulkan0" : "CPU"}));
    const sum = (host: boolean) => ({
        weightsBytes: bufferTypes.filter((e) => e.isHost === host).reduce((s, e) => s + e.weightsBytes, 0),
        kvCacheBytes: bufferTypes.filter((e) => e.isHost === host).reduce((s, e) => s + e.kvCacheBytes, 0),
        scratchBytes: bufferTypes.filter((e) => e.isHost === host).reduce((s, e) => s + e.scratchBytes, 0)
    });
    return {bufferTypes, host: sum(true), device: sum(false)};
}

describe("comparePlannedMemory: planned vs measured per physical memory", () => {
    it("a mixed plan with mmap off: planned CPU weights measured in Vulkan_Host count under system RAM, and agree", () => {
        const measured = report([
            {bufferType: "Vulkan0", weightsBytes: 200 * MiB, kvCacheBytes: 8 * MiB, scratchBytes: 30 * MiB},
            {bufferType: "Vulkan_Host", weightsBytes: 100 * MiB, kvCacheBytes: 0, scratchBytes: 0},
            {bufferType: "CPU", weightsBytes: 0, kvCacheBytes: 0, scratchBytes: 2 * MiB}
        ], ["Vulkan_Host", "CPU"]);
        const prediction = report([
            {bufferType: "Vulkan0", weightsBytes: 200 * MiB, kvCacheBytes: 8 * MiB, scratchBytes: 30 * MiB},
            {bufferType: "CPU", weightsBytes: 100 * MiB, kvCacheBytes: 0, scratchBytes: 0}
        ], ["CPU"]);
        const {devices} = comparePlannedMemory({
            plannedWeights: {CPU: 100 * MiB, Vulkan0: 200 * MiB}, prediction, measured,
            machine: machine({freeBytes: 1.5 * GiB, totalBytes: 2 * GiB}), budgetBytes: 300 * MiB
        });
        expect(devices.map((device) => [device.device, device.kind, device.name])).toEqual([
            ["CPU", "host", "System RAM"], ["Vulkan0", "gpu", "llvmpipe (LLVM 15.0.6, 256 bits)"]
        ]);
        const [ram, gpu] = devices as [typeof devices[0], typeof devices[0]];
        // the planned "CPU" weights are the measured host weights: nothing reads as missing; no host KV cache planned
        // (every layer's is on the GPU), and the host scratch is not priced with a GPU in the graph
        expect(ram.planned).toEqual({weightsBytes: 100 * MiB, kvCacheBytes: 0, scratchBytes: null});
        expect(ram.measured).toEqual({weightsBytes: 100 * MiB, kvCacheBytes: 0, scratchBytes: 2 * MiB});
        const pinned = ram.bufferTypes.find((use) => use.bufferType === "Vulkan_Host")!;
        expect(pinned).toMatchObject({plannedWeightsBytes: 100 * MiB, plannedAs: "CPU", weightsBytes: 100 * MiB});
        expect(pinned.note).toMatch(/^Vulkan_Host is pinned system RAM that Vulkan0 copies from fast: what the plan calls CPU\.$/);
        expect(ram.bufferTypes.some((use) => use.bufferType === "CPU" && use.plannedWeightsBytes == null)).toBe(true);
        expect(ram.notes).toEqual([pinned.note]);
        expect(ram.totalBytes).toBe(16 * GiB);
        expect(ram.freeAfterLoadBytes).toBe(10 * GiB);
        expect(ram.otherBytes).toBe(6 * GiB - 102 * MiB);
        expect(ram.budgetBytes).toBeNull();

        expect(gpu.planned).toEqual({weightsBytes: 200 * MiB, kvCacheBytes: 8 * MiB, scratchBytes: 30 * MiB});
        expect(gpu.measured).toEqual({weightsBytes: 200 * MiB, kvCacheBytes: 8 * MiB, scratchBytes: 30 * MiB});
        expect(gpu.budgetBytes).toBe(300 * MiB);
        expect(gpu.freeAfterLoadBytes).toBe(1.5 * GiB);
        expect(gpu.otherBytes).toBe(0.5 * GiB - 238 * MiB);
        expect(gpu.notes).toEqual([]);
    });

    it("a CPU-only plan: system RAM's planned KV cache and scratch are the plan's, next to what llama.cpp allocated", () => {
        const measured = report([
            {bufferType: "CPU_Mapped", weightsBytes: 105 * MiB, kvCacheBytes: 0, scratchBytes: 0},
            {bufferType: "CPU", weightsBytes: 0, kvCacheBytes: 24 * MiB, scratchBytes: 82 * MiB}
        ], ["CPU_Mapped", "CPU"]);
        const prediction = report([{bufferType: "CPU", weightsBytes: 105 * MiB, kvCacheBytes: 24 * MiB, scratchBytes: 87 * MiB}], ["CPU"]);
        const {devices} = comparePlannedMemory({plannedWeights: {CPU: 105 * MiB}, prediction, measured, machine: machine(null), budgetBytes: null});
        expect(devices).toHaveLength(1);
        expect(devices[0]!.planned).toEqual({weightsBytes: 105 * MiB, kvCacheBytes: 24 * MiB, scratchBytes: 87 * MiB});
        expect(devices[0]!.measured).toEqual({weightsBytes: 105 * MiB, kvCacheBytes: 24 * MiB, scratchBytes: 82 * MiB});
    });

    it("the server's embedding context is its own number on the memory that holds it, beside the model's and out of other programs' share", () => {
        const measured = report([{bufferType: "CPU", weightsBytes: 105 * MiB, kvCacheBytes: 24 * MiB, scratchBytes: 82 * MiB},
            {bufferType: "Vulkan0", weightsBytes: 200 * MiB, kvCacheBytes: 32 * MiB, scratchBytes: 40 * MiB}], ["CPU"]);
        const embeddings = report([{bufferType: "CPU", weightsBytes: 0, kvCacheBytes: 6 * MiB, scratchBytes: 10 * MiB},
            {bufferType: "Vulkan_Host", weightsBytes: 0, kvCacheBytes: 0, scratchBytes: 2 * MiB},
            {bufferType: "Vulkan0", weightsBytes: 0, kvCacheBytes: 8 * MiB, scratchBytes: 30 * MiB}], ["CPU", "Vulkan_Host"]);
        const inputs = {plannedWeights: {CPU: 105 * MiB, Vulkan0: 200 * MiB}, prediction: null, measured, machine: machine({freeBytes: GiB, totalBytes: 2 * GiB}), budgetBytes: null};
        const without = comparePlannedMemory(inputs).devices;
        const withEmbeddings = comparePlannedMemory({...inputs, embeddings}).devices;
        expect(without.map((device) => device.embeddingsBytes)).toEqual([0, 0]);
        // the pinned Vulkan_Host scratch is system RAM, as the model's host buffer types are
        expect(withEmbeddings.map((device) => [device.device, device.embeddingsBytes])).toEqual([["CPU", 18 * MiB], ["Vulkan0", 38 * MiB]]);
        expect(withEmbeddings.map((device) => device.measured)).toEqual(without.map((device) => device.measured));
        expect(withEmbeddings.map((device) => device.otherBytes)).toEqual(without.map((device, index) => device.otherBytes - [18 * MiB, 38 * MiB][index]!));
    });

    it("a CPU with AMX: the weights llama.cpp repacked into the AMX buffer type are system RAM, not a GPU", () => {
        // llama.cpp's breakdown of a CPU-only Q8_0 load on a Xeon with AMX (ggml_backend_buft_is_host is false for "AMX")
        const measured = toMemoryReport([
            {name: "AMX", device: "CPU", isHost: false, deviceType: "cpu", model: 608 * 1024, context: 0, compute: 0},
            {name: "CPU_Mapped", device: null, isHost: true, deviceType: null, model: 546.5 * 1024, context: 0, compute: 0},
            {name: "CPU", device: null, isHost: true, deviceType: null, model: 0, context: 512 * 1024, compute: 11.5 * MiB}
        ]);
        const {devices} = comparePlannedMemory({plannedWeights: {CPU: 1154.5 * 1024}, prediction: null, measured, machine: machine(null), budgetBytes: null});
        expect(devices.map((device) => device.name)).toEqual(["System RAM"]);
        expect(devices[0]!.measured.weightsBytes).toBe(devices[0]!.planned?.weightsBytes);
        // mmap on: the file's mapping still covers the repacked weights, which the note says
        expect(devices[0]!.notes).toContain("AMX is system RAM in a layout llama.cpp's CPU kernels prefer (weights repacked at load): what the plan calls CPU. " +
            "The model file stays mapped too (CPU_Mapped), and llama.cpp counts the mapped range whole, which can include these weights' " +
            "original bytes: page cache the system can take back. Loading without mmap avoids it.");
    });

    it("mmap on: weights in CPU_Mapped are the plan's CPU weights, with a note saying what the name means", () => {
        const measured = report([
            {bufferType: "CPU_Mapped", weightsBytes: 50 * MiB, kvCacheBytes: 0, scratchBytes: 0},
            {bufferType: "CPU", weightsBytes: 0, kvCacheBytes: 4 * MiB, scratchBytes: 1 * MiB}
        ], ["CPU_Mapped", "CPU"]);
        const {devices} = comparePlannedMemory({plannedWeights: {CPU: 50 * MiB}, prediction: null, measured, machine: machine(null), budgetBytes: null});
        expect(devices).toHaveLength(1);
        const ram = devices[0]!;
        expect(ram.planned?.weightsBytes).toBe(ram.measured.weightsBytes);
        expect(ram.bufferTypes.find((use) => use.bufferType === "CPU_Mapped")).toMatchObject({plannedAs: "CPU", plannedWeightsBytes: 50 * MiB});
        expect(ram.notes).toEqual(["CPU_Mapped is system RAM mapped from the model file (mmap): what the plan calls CPU."]);
    });

    it("a driver whose free memory ignores the model's allocations is called out instead of shown as if nothing were used", () => {
        const measured = report([{bufferType: "Vulkan0", weightsBytes: 300 * MiB, kvCacheBytes: 0, scratchBytes: 0}], []);
        const gpu = comparePlannedMemory({
            plannedWeights: {Vulkan0: 300 * MiB}, prediction: null, measured, machine: machine({freeBytes: 2 * GiB, totalBytes: 2 * GiB}), budgetBytes: null
        }).devices[1]!;
        expect(gpu.otherBytes).toBe(0);
        expect(gpu.notes).toHaveLength(1);
        expect(gpu.notes[0]).toMatch(/does not count these allocations/);
    });

    it("a buffer type the plan named but llama.cpp did not use shows as planned with nothing measured", () => {
        const measured = report([{bufferType: "CPU", weightsBytes: 10 * MiB, kvCacheBytes: 0, scratchBytes: 0}], ["CPU"]);
        const {devices} = comparePlannedMemory({
            plannedWeights: {CPU: 10 * MiB, Vulkan0: 5 * MiB}, prediction: null, measured, machine: machine({freeBytes: GiB, totalBytes: 2 * GiB}), budgetBytes: null
        });
        const gpu = devices.find((device) => device.device === "Vulkan0")!;
        expect(gpu.planned).toEqual({weightsBytes: 5 * MiB, kvCacheBytes: null, scratchBytes: null});
        expect(gpu.measured.weightsBytes).toBe(0);
        expect(gpu.bufferTypes).toEqual([expect.objectContaining({bufferType: "Vulkan0", plannedWeightsBytes: 5 * MiB, weightsBytes: 0})]);
    });
});
