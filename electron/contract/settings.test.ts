import {describe, expect, it} from "vitest";
import {DEFAULT_RUNTIME_SETTINGS, resolveSettings} from "./settings.js";

describe("resolveSettings", () => {
    it("fills what the user left open: the contract's defaults, the engine's threads, mmap off once a weight is on a GPU", () => {
        expect(resolveSettings({}, {maxThreads: 6, partlyOnGpu: true}))
            .toEqual({contextSize: DEFAULT_RUNTIME_SETTINGS.contextSize, batchSize: DEFAULT_RUNTIME_SETTINGS.batchSize, threads: 6, useMmap: false});
        expect(resolveSettings({threads: null, useMmap: null}, {maxThreads: 2, partlyOnGpu: false})).toMatchObject({threads: 2, useMmap: true});
    });
    it("keeps every choice the user made", () => {
        expect(resolveSettings({contextSize: 4096, batchSize: 128, threads: 1, useMmap: true}, {maxThreads: 8, partlyOnGpu: true}))
            .toEqual({contextSize: 4096, batchSize: 128, threads: 1, useMmap: true});
    });
});
