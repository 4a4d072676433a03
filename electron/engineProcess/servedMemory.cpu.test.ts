/**
 * What the Memory screen reads (EngineService.current(): the memory comparison) while the app's server runs, on a
 * generated model (CPU): the context made again with the server's sequences, and the embedding context the server makes
 * on its first `/v1/embeddings` request, shown as its own number until the server stops.
 */
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {probeEngine} from "../engine/testing/probeEngine.js";
import {makeTestModel} from "../engine/testing/testModels.js";
import {EngineService} from "./EngineService.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] served memory tests: ${probe.reason}`);
// the probe's engine is the process's one binding; the service makes its own handle on it
await probe.engine?.llama.dispose();

describe.skipIf(probe.reason != null)("the server's memory on the Memory screen (CPU, generated model)", () => {
    let service: EngineService;

    beforeAll(async () => {
        service = await EngineService.create({gpu: "cpu", maxThreads: 1});
        const modelPath = await makeTestModel("served-memory-tiny", {preset: "tiny", type: "q8_0"});
        await service.load({path: modelPath, gpuLayers: 0, settings: {contextSize: 1024}, taskId: "load-served-memory"});
    }, 120_000);
    afterAll(async () => {
        await service?.dispose();
    });

    const ram = () => service.current()!.memory.devices.find((device) => device.device === "CPU")!;

    it("shows the server's sequences' KV cache, then its embedding context once made, as its own number, gone when the server stops", async () => {
        const alone = ram();
        expect(alone.embeddingsBytes).toBe(0);
        const started = await service.serveStart({host: "127.0.0.1", port: 0, apiKeys: [], parallel: 2, kvDiskBudgetMiB: null, corsOrigins: []});
        // two sequences: the context was made again with twice the KV cache, and the comparison counts it
        const serving = ram();
        expect(serving.measured.kvCacheBytes).toBe(2 * alone.measured.kvCacheBytes);
        expect(serving.measured.kvCacheBytes).toBe(started.measured.host.kvCacheBytes);
        expect(serving.embeddingsBytes).toBe(0);
        const answer = await fetch(`${started.url}/embeddings`, {method: "POST", headers: {"Content-Type": "application/json"},
            body: JSON.stringify({input: "Hello there"})});
        expect(answer.status).toBe(200);
        const embedding = ram();
        expect(embedding.embeddingsBytes).toBeGreaterThan(0);
        // the model's own numbers stay the model's
        expect(embedding.measured).toEqual(serving.measured);
        await service.serveStop();
        expect(ram().embeddingsBytes).toBe(0);
        expect(ram().measured).toEqual(alone.measured);
    }, 300_000);
});
