// A plan's host memory against what llama.cpp allocates: the KV cache of the layers left on the CPU (from the shapes)
// and the host compute buffers (from llama.cpp's no-alloc simulation of the chosen plan), so the Memory screen's
// "planned" row for system RAM is a prediction, not a dash. Needs the CPU engine; generates its model.
import {mkdtempSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {PlacedModel} from "../runtime/PlacedModel.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {autoPlan} from "./autoPlan.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] host memory of a CPU plan: ${probe.reason}`);

describe.skipIf(probe.reason != null)("a CPU-only plan's host memory, predicted and allocated", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });

    it("plans exactly the KV cache and compute buffers that llama.cpp then allocates in system RAM", async () => {
        const engine = probe.engine!;
        const modelPath = await makeTestModel("host-memory-cpu", {preset: "small", layers: 2, type: "f16"});
        const planned = await autoPlan(engine, modelPath, {
            strategy: "cpu",
            settings: {contextSize: 1024, batchSize: 256, threads: 1},
            profile: {cacheDir: mkdtempSync(path.join(os.tmpdir(), "tensorwise-profile-"))}
        });
        const {prediction, settings} = planned.result;
        const placed = await PlacedModel.load(engine, {
            modelPath, gpuLayers: planned.result.gpuLayers, overrides: planned.overrides, useMmap: settings.useMmap,
            contextSize: settings.contextSize, batchSize: settings.batchSize, threads: settings.threads
        });
        try {
            const measured = placed.memory().host;
            // 2 layers × K and V × 1024 cells × (1024/16 × 4 KV heads) × 2 bytes (F16): all on the host
            expect(prediction.hostKvBytes).toBe(2 * 2 * 1024 * 256 * 2);
            expect(measured.kvCacheBytes).toBe(prediction.hostKvBytes);
            expect(prediction.hostScratchBytes).toBeGreaterThan(0);
            expect(measured.scratchBytes).toBe(prediction.hostScratchBytes);
        } finally {
            await placed.dispose();
        }
    }, 300_000);
});
