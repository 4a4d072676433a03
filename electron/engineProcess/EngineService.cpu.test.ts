/**
 * The engine's lifecycle against replies in flight, on a generated model (CPU): unloading the model, or starting and
 * stopping the app's server (which makes the context again), while a reply is being written must stop the reply and
 * keep the engine alive. Disposing a context under a generation that is still evaluating its batch ends the process
 * with SIGSEGV — found by `node bench/drivers/soak.mjs --serve` (a model reload while the app chatted with the server on).
 */
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {probeEngine} from "../engine/testing/probeEngine.js";
import {makeTestModel} from "../engine/testing/testModels.js";
import {EngineService} from "./EngineService.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] engine lifecycle tests: ${probe.reason}`);
// the probe's engine is the process's one binding; the service makes its own handle on it
await probe.engine?.llama.dispose();

const ROUNDS = 4;

describe.skipIf(probe.reason != null)("replies in flight when the model or the context goes away (CPU, generated model)", () => {
    let service: EngineService;
    let modelPath: string;

    beforeAll(async () => {
        service = await EngineService.create({gpu: "cpu", maxThreads: 1});
        modelPath = await makeTestModel("lifecycle-small", {preset: "small", type: "f16"});
    });
    afterAll(async () => {
        await service?.dispose();
    });

    const load = () => service.load({path: modelPath, gpuLayers: 0, settings: {contextSize: 1024}, taskId: `load-${Date.now()}`});

    /** Starts a long reply and, once its first text arrives, runs `interrupt`; returns how the reply ended. */
    async function interruptedReply(interrupt: () => Promise<unknown>): Promise<{outcome: string; interrupted: unknown}> {
        let interruption: Promise<unknown> | null = null;
        const reply = service.chat({streamId: `s-${Math.random()}`, conversationId: "c1", history: [], message: "Tell me a very long story.",
            maxTokens: 600, temperature: 0.8}, () => {
            interruption ??= interrupt();
        });
        const outcome = await reply.then((answer) => `finished (${answer.timing.generatedTokens} tokens)`, (error: unknown) => `failed: ${String(error)}`);
        return {outcome, interrupted: await (interruption ?? Promise.resolve("never interrupted"))};
    }

    it("an unload in the middle of a reply stops it, and the engine loads and answers again", async () => {
        for (let round = 0; round < ROUNDS; round++) {
            await load();
            const {outcome} = await interruptedReply(() => service.unload());
            expect(outcome).not.toMatch(/600 tokens/);
            expect(service.current()).toBeNull();
        }
        await load();
        const after = await service.chat({streamId: "after", history: [], message: "Hello", maxTokens: 8, temperature: 0}, () => {});
        expect(after.timing.generatedTokens).toBeGreaterThan(0);
    }, 300_000);

    it("replies sent while the server starts (it calibrates on the new context's first sequence) wait for it and are answered", async () => {
        if (service.current() == null)
            await load();
        for (let round = 0; round < 2; round++) {
            let started = false;
            const starting = service.serveStart({host: "127.0.0.1", port: 0, apiKeys: [], parallel: 2, kvDiskBudgetMiB: null, corsOrigins: []})
                .finally(() => started = true);
            const replies: Promise<{generatedTokens: number}>[] = [];
            while (!started) {
                replies.push(service.chat({streamId: `during-start-${round}-${replies.length}`, conversationId: `c${replies.length % 3}`, history: [],
                    message: "Hello there", maxTokens: 4, temperature: 0}, () => {}).then((reply) => reply.timing));
                await new Promise((resolve) => setTimeout(resolve, 25));
            }
            await starting;
            const outcomes = await Promise.allSettled(replies);
            expect(outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => String((outcome as PromiseRejectedResult).reason))).toEqual([]);
            expect(replies.length).toBeGreaterThan(0);
            await service.serveStop();
        }
        const after = await service.chat({streamId: "after-start", history: [], message: "Hello", maxTokens: 8, temperature: 0}, () => {});
        expect(after.timing.generatedTokens).toBeGreaterThan(0);
    }, 300_000);

    it("starting the server, and unloading, in the middle of a reply stop it and keep the engine alive", async () => {
        await load();
        for (let round = 0; round < ROUNDS; round++) {
            // the first reply goes through the model's own sequence; starting the server makes the context again
            await interruptedReply(() => service.serveStart({host: "127.0.0.1", port: 0, apiKeys: [], parallel: 2, kvDiskBudgetMiB: null, corsOrigins: []}));
            // with the server on the reply goes through its scheduler; stopping the server makes the context again
            await interruptedReply(() => service.serveStop());
        }
        await service.serveStart({host: "127.0.0.1", port: 0, apiKeys: [], parallel: 2, kvDiskBudgetMiB: null, corsOrigins: []});
        await interruptedReply(() => service.unload());
        expect(service.current()).toBeNull();
        await load();
        const after = await service.chat({streamId: "after-serve", history: [], message: "Hello", maxTokens: 8, temperature: 0}, () => {});
        expect(after.timing.generatedTokens).toBeGreaterThan(0);
    }, 300_000);
});
