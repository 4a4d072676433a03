import {describe, expect, it} from "vitest";
import {toMemoryReport} from "./memoryReport.js";

describe("toMemoryReport", () => {
    // llama_context::memory_breakdown() per buffer type: model = weights, context = KV cache (the memory module),
    // compute = the scheduler's compute buffers (scratch). Every number distinct, so a swapped field cannot pass.
    const native = [
        {name: "Vulkan0", device: "Vulkan0", isHost: false, deviceType: "gpu" as const, model: 1_000, context: 20, compute: 300},
        {name: "Vulkan_Host", device: "Vulkan0", isHost: true, deviceType: "gpu" as const, model: 4_000, context: 0, compute: 50_000},
        {name: "CPU", device: null, isHost: true, deviceType: "cpu" as const, model: 600_000, context: 7_000_000, compute: 80_000_000}
    ];

    it("keeps weights, KV cache and scratch apart per buffer type, device rows first", () => {
        const report = toMemoryReport(native);
        expect(report.bufferTypes).toEqual([
            {bufferType: "Vulkan0", device: "Vulkan0", isHost: false, weightsBytes: 1_000, kvCacheBytes: 20, scratchBytes: 300},
            {bufferType: "CPU", device: "CPU", isHost: true, weightsBytes: 600_000, kvCacheBytes: 7_000_000, scratchBytes: 80_000_000},
            {bufferType: "Vulkan_Host", device: "Vulkan0", isHost: true, weightsBytes: 4_000, kvCacheBytes: 0, scratchBytes: 50_000}
        ]);
    });

    it("sums each part over host and over device buffer types", () => {
        const report = toMemoryReport(native);
        expect(report.device).toEqual({weightsBytes: 1_000, kvCacheBytes: 20, scratchBytes: 300});
        expect(report.host).toEqual({weightsBytes: 604_000, kvCacheBytes: 7_000_000, scratchBytes: 80_050_000});
    });

    it("counts the CPU's repacking buffer types (AMX, CPU_REPACK) as system RAM, though ggml says they are not host", () => {
        // as llama.cpp reports a CPU-only Q8_0 load on a Xeon with AMX: the matmul weights repacked into "AMX"
        const report = toMemoryReport([
            {name: "AMX", device: "CPU", isHost: false, deviceType: "cpu", model: 622_592, context: 0, compute: 0},
            {name: "CPU_REPACK", device: "CPU", isHost: false, deviceType: "cpu", model: 1_024, context: 0, compute: 0},
            {name: "CPU_Mapped", device: null, isHost: true, deviceType: null, model: 559_616, context: 0, compute: 0},
            {name: "CPU", device: null, isHost: true, deviceType: null, model: 0, context: 524_288, compute: 12_068_864}
        ]);
        expect(report.device).toEqual({weightsBytes: 0, kvCacheBytes: 0, scratchBytes: 0});
        expect(report.host).toEqual({weightsBytes: 622_592 + 1_024 + 559_616, kvCacheBytes: 524_288, scratchBytes: 12_068_864});
        expect(report.bufferTypes.find((entry) => entry.bufferType === "AMX")).toMatchObject({device: "CPU", isHost: true});
    });
});
