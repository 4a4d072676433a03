/**
 * Four new streams on four sequences that each still hold an earlier conversation: every one must be swapped out (its
 * state saved, its tokens erased) before the new prompt runs, while the streams admitted first already generate.
 * node-llama-cpp 3.22.1 decoded batch after batch under one hold of its context lock for as long as any sequence kept
 * queueing tokens (`LlamaContext.dispatchPendingBatch`), so the erase and state save of a later stream waited until the
 * earlier streams had finished: one or two of the four started seconds late. native/patches/node-llama-cpp-js.patch
 * releases the lock after every batch. Asserted by order, not time: every stream's first token comes before any
 * stream's last one.
 */
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../engine/testing/probeEngine.js";
import {makeTestModel} from "../../engine/testing/testModels.js";
import type {KvCostModel} from "./KvCostModel.js";
import {fairPolicy} from "../scheduling/schedulingPolicies.js";
import {serveOpenAi} from "../serveOpenAi.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] interleaving after eviction: ${probe.reason}`);

const PARALLEL = 4;
/** Swap is always chosen, so every new stream saves the state it evicts (the path that used to start late). */
const swapCheap: KvCostModel = {
    stateBytes: {headerBytes: 0, bytesPerToken: 1000}, save: {fixedMs: 0, msPer: 1e-9}, load: {fixedMs: 0, msPer: 1e-9},
    prefill: {fixedMs: 100, msPer: 10}, source: "given (swap cheap)"
};

describe.skipIf(probe.reason != null)("four new streams on sequences that hold earlier conversations (CPU, 1 thread)", () => {
    let placed: PlacedModel;

    beforeAll(async () => {
        const modelPath = await makeTestModel("serve-small", {preset: "small", type: "q8_0"});
        placed = await PlacedModel.load(probe.engine!, {modelPath, contextSize: 1024, threads: 1, sequences: PARALLEL});
    });
    afterAll(async () => {
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("interleaves all four streams: every first token comes before any stream's last token", async () => {
        const log: string[] = [];
        const server = await serveOpenAi({
            placed, modelId: "serve-small", queueLength: PARALLEL, requestTimeoutMs: 300_000, policy: fairPolicy,
            log: (line) => log.push(line), kv: {costModel: swapCheap}
        });
        const client = new OpenAI({baseURL: server.url, apiKey: "unused", maxRetries: 0});
        try {
            for (let index = 0; index < PARALLEL; index++)
                await client.chat.completions.create({model: "serve-small", messages: [{role: "user", content: `Earlier conversation ${index}`}], max_tokens: 8, temperature: 0});
            const events: {request: number; kind: "first" | "last"}[] = [];
            await Promise.all(Array.from({length: PARALLEL}, async (_unused, request) => {
                const stream = await client.chat.completions.create({
                    model: "serve-small", messages: [{role: "user", content: `Tell story number ${request}`}], max_tokens: 48, temperature: 0, stream: true
                });
                let started = false;
                for await (const chunk of stream) {
                    if ((chunk.choices[0]?.delta.content ?? "") !== "" && !started) {
                        started = true;
                        events.push({request, kind: "first"});
                    }
                }
                events.push({request, kind: "last"});
            }));
            // the scenario: each new stream pushed an earlier conversation out of its sequence by a swap (the server's log
            // says so; answers never name another conversation)
            expect(log.filter((line) => /^kv \w+ left sequence \d+ \(swap, saved in/.test(line))).toHaveLength(PARALLEL);
            const lastFirst = events.findLastIndex((event) => event.kind === "first");
            const firstLast = events.findIndex((event) => event.kind === "last");
            expect(events.filter((event) => event.kind === "first")).toHaveLength(PARALLEL);
            expect(lastFirst, `${JSON.stringify(events)}\n${log.join("\n")}`).toBeLessThan(firstLast);
        } finally {
            await server.close();
        }
    }, 300_000);
});
