import {describe, expect, it} from "vitest";
import {DEFAULT_RUNTIME_SETTINGS, defaultContextSize, resolveSettings} from "./settings.js";

describe("resolveSettings", () => {
    it("fills what the user left open: the contract's defaults, the engine's threads, mmap off once a weight is on a GPU", () => {
        expect(resolveSettings({}, {maxThreads: 6, partlyOnGpu: true}))
            .toEqual({contextSize: DEFAULT_RUNTIME_SETTINGS.contextSize, batchSize: DEFAULT_RUNTIME_SETTINGS.batchSize, threads: 6, useMmap: false,
                useGpu: true, opOffload: true, kvOffload: true, flashAttention: false, kvCacheType: "f16"});
        expect(resolveSettings({threads: null, useMmap: null}, {maxThreads: 2, partlyOnGpu: false})).toMatchObject({threads: 2, useMmap: true});
    });
    it("keeps every choice the user made", () => {
        expect(resolveSettings({contextSize: 4096, batchSize: 128, threads: 1, useMmap: true}, {maxThreads: 8, partlyOnGpu: true}))
            .toEqual({contextSize: 4096, batchSize: 128, threads: 1, useMmap: true, useGpu: true, opOffload: true, kvOffload: true, flashAttention: false, kvCacheType: "f16"});
        expect(resolveSettings({useGpu: false, opOffload: false, kvOffload: false, flashAttention: true, kvCacheType: "q8_0"}, {maxThreads: 8, partlyOnGpu: true}))
            .toMatchObject({useGpu: false, opOffload: false, kvOffload: false, flashAttention: true, kvCacheType: "q8_0"});
    });
    it("turns flash attention on for a quantized KV cache left to it, and refuses one the user turned off", () => {
        expect(resolveSettings({kvCacheType: "q4_0"}, {maxThreads: 2, partlyOnGpu: false})).toMatchObject({flashAttention: true, kvCacheType: "q4_0"});
        expect(() => resolveSettings({kvCacheType: "q8_0", flashAttention: false}, {maxThreads: 2, partlyOnGpu: false})).toThrow(/needs flash attention/);
    });
    it("without a chosen context, takes the model's trained context where it is below the default", () => {
        expect(resolveSettings({}, {maxThreads: 2, partlyOnGpu: false, trainedContextSize: 256})).toMatchObject({contextSize: 256});
        expect(resolveSettings({}, {maxThreads: 2, partlyOnGpu: false, trainedContextSize: 131072})).toMatchObject({contextSize: 2048});
        expect(resolveSettings({}, {maxThreads: 2, partlyOnGpu: false, trainedContextSize: null})).toMatchObject({contextSize: 2048});
        expect(resolveSettings({contextSize: 1024}, {maxThreads: 2, partlyOnGpu: false, trainedContextSize: 256})).toMatchObject({contextSize: 1024});
    });
});

describe("defaultContextSize", () => {
    it("is the default, or the trained context where smaller and known", () => {
        expect([defaultContextSize(), defaultContextSize(null), defaultContextSize(0), defaultContextSize(256), defaultContextSize(2048), defaultContextSize(8192)])
            .toEqual([2048, 2048, 2048, 256, 2048, 2048]);
    });
});
