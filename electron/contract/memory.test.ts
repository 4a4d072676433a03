import {describe, expect, it} from "vitest";
import {inSystemRam, isHostBufferType, isPinnedHostBufferType} from "./memory.js";
import {DEFAULT_RUNTIME_SETTINGS, withDefaultSettings} from "./settings.js";

describe("isHostBufferType: the one rule for which buffer types are system RAM", () => {
    it("by name: ggml's CPU buffer types and the pinned <backend>_Host types are host, device buffer types are not", () => {
        for (const name of ["CPU", "CPU_REPACK", "AMX", "CUDA_Host", "Vulkan_Host"])
            expect(isHostBufferType(name), name).toBe(true);
        for (const name of ["CUDA0", "Vulkan0", "MTL0", "ROCm1"])
            expect(isHostBufferType(name), name).toBe(false);
        expect(isPinnedHostBufferType("Vulkan_Host")).toBe(true);
        expect(isPinnedHostBufferType("CPU")).toBe(false);
    });

    it("a buffer type the machine or a measurement lists answers for itself", () => {
        const machine = [{name: "CPU_Odd", isHost: false}, {name: "Weird0", isHost: true}];
        expect(isHostBufferType("CPU_Odd", machine)).toBe(false);
        expect(isHostBufferType("Weird0", machine)).toBe(true);
        const measured = [{bufferType: "Vulkan_Host", isHost: true}, {bufferType: "Vulkan0", isHost: false}];
        expect(isHostBufferType("Vulkan_Host", measured)).toBe(true);
        expect(isHostBufferType("Vulkan0", measured)).toBe(false);
        expect(isHostBufferType("CPU", measured)).toBe(true);
    });

    it("what llama.cpp reports: host buffer types, and the CPU device's repacking ones that ggml calls not host", () => {
        expect(inSystemRam({isHost: false, deviceType: "cpu"})).toBe(true);
        expect(inSystemRam({isHost: true, deviceType: null})).toBe(true);
        expect(inSystemRam({isHost: true, deviceType: "gpu"})).toBe(true);
        expect(inSystemRam({isHost: false, deviceType: "gpu"})).toBe(false);
        expect(inSystemRam({isHost: false, deviceType: null})).toBe(false);
    });
});

describe("runtime settings defaults", () => {
    it("fill only what a client left out; an explicit null stays null", () => {
        expect(withDefaultSettings()).toEqual(DEFAULT_RUNTIME_SETTINGS);
        expect(withDefaultSettings({contextSize: 4096, useMmap: false})).toEqual({...DEFAULT_RUNTIME_SETTINGS, contextSize: 4096, useMmap: false});
        expect(withDefaultSettings({threads: null, batchSize: 64})).toEqual({...DEFAULT_RUNTIME_SETTINGS, threads: null, batchSize: 64});
        expect(Object.isFrozen(DEFAULT_RUNTIME_SETTINGS)).toBe(true);
    });
});
