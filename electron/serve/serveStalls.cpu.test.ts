/**
 * What a flood of API requests can do to everyone else, on a generated model with one sequence: over-long bodies are
 * refused before tokenizing (the tokenizer is synchronous and would freeze every stream), too many messages are refused
 * by count, and the app's own chat is never told "server is busy" by a queue full of API requests.
 */
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EngineLlama} from "../engine/native/getEngineLlama.js";
import {PlacedModel} from "../engine/runtime/PlacedModel.js";
import {probeEngine} from "../engine/testing/probeEngine.js";
import {makeTestModel} from "../engine/testing/testModels.js";
import {TEXT_LIMITS} from "../contract/limits.js";
import type {KvCostModel} from "./KvCostModel.js";
import {scheduledChatReply} from "./scheduledChatReply.js";
import {fifoPolicy} from "./schedulingPolicies.js";
import {serveOpenAi, type OpenAiServer} from "./serveOpenAi.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] serve stall tests: ${probe.reason}`);

const recomputeCheap: KvCostModel = {
    stateBytes: {headerBytes: 0, bytesPerToken: 1000}, save: {fixedMs: 100, msPer: 1}, load: {fixedMs: 100, msPer: 1},
    prefill: {fixedMs: 0, msPer: 1e-6}, source: "given (recompute cheap)"
};
/** Bodies the attacker sends at once, each just under the 4 MiB body limit. */
const FLOOD = 8;
const MESSAGES_PER_BODY = 12;

describe.skipIf(probe.reason != null)("floods of API requests (CPU, generated model, 1 sequence)", () => {
    let engine: EngineLlama;
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("kv-tiny", {preset: "tiny", type: "q8_0"});
        placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024, threads: 1, sequences: 1});
        server = await serveOpenAi({placed, modelId: "kv-tiny", queueLength: 1, requestTimeoutMs: 120_000, policy: fifoPolicy,
            kv: {costModel: recomputeCheap}});
        client = new OpenAI({baseURL: server.url, apiKey: "unused", maxRetries: 0});
    });
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await engine?.llama.dispose();
    });

    it("refuses megabyte prompts before tokenizing them, so a running stream keeps flowing", async () => {
        const huge = {messages: Array.from({length: MESSAGES_PER_BODY}, (_unused, index) => ({role: "user", content: `${index}`.padEnd(TEXT_LIMITS.message, "x")})),
            max_tokens: 2};
        const body = JSON.stringify(huge);
        expect(body.length).toBeGreaterThan(3_000_000);
        const gaps: number[] = [];
        let floodStarted!: () => void;
        const streaming = new Promise<void>((resolve) => (floodStarted = resolve));
        let floodAnswered = false;
        let chunksAfterFlood = 0;
        const stream = (async () => {
            let last = performance.now();
            for await (const _chunk of await client.chat.completions.create({model: "m", messages: [{role: "user", content: "Tell a long story"}],
                max_tokens: 400, temperature: 0, stream: true})) {
                gaps.push(performance.now() - last);
                last = performance.now();
                if (gaps.length === 3)
                    floodStarted();
                if (floodAnswered)
                    chunksAfterFlood++;
            }
        })();
        // once the stream runs, the flood arrives
        await streaming;
        const answers = await Promise.all(Array.from({length: FLOOD}, async () => {
            const response = await fetch(`${server.url}/chat/completions`, {method: "POST", headers: {"Content-Type": "application/json"}, body});
            return {status: response.status, body: await response.json() as {error: {code: string; message: string; param: string}}};
        }));
        floodAnswered = true;
        await stream;
        // the stream was still running when the flood was answered: every refusal happened between two of its tokens
        expect(chunksAfterFlood).toBeGreaterThan(0);
        for (const answer of answers) {
            expect(answer.status).toBe(400);
            expect(answer.body.error).toMatchObject({code: "context_length_exceeded", param: "messages",
                message: expect.stringMatching(/^This request needs at least \d+ prompt tokens \+ 2 to generate, but each sequence's context holds 1024 tokens/)});
        }
        // tokenizing the eight bodies took about 7 s on this VM, all of it between two tokens of the stream
        expect(Math.max(...gaps.slice(1))).toBeLessThan(2000);
    }, 120_000);

    it("refuses more messages than the bounds table allows, by count, in one sentence", async () => {
        const messages = Array.from({length: 4097}, () => ({role: "user" as const, content: "hi"}));
        await expect(client.chat.completions.create({model: "m", messages, max_tokens: 2}))
            .rejects.toMatchObject({status: 400, param: "messages", message: expect.stringMatching(/`messages`: The number of messages must be an integer from 1 to 4096/)});
    });

    it("the app's own chat is never refused as busy: it goes ahead of the waiting API requests", async () => {
        const finished: string[] = [];
        const running = client.chat.completions.create({model: "m", messages: [{role: "user", content: "running"}], max_tokens: 400, temperature: 0})
            .then(() => finished.push("api running"));
        await expect.poll(() => server.scheduler.busyCount, {interval: 5}).toBe(1);
        // the one queue place
        const queued = client.chat.completions.create({model: "m", messages: [{role: "user", content: "queued"}], max_tokens: 4, temperature: 0})
            .then(() => finished.push("api queued"));
        await expect.poll(() => server.scheduler.waitingCount, {interval: 5}).toBe(1);
        // an API request now is refused…
        await expect(client.chat.completions.create({model: "m", messages: [{role: "user", content: "one more"}], max_tokens: 2}))
            .rejects.toMatchObject({status: 429, code: "queue_full"});
        // …the app's chat is not, and is served before the API request that waited longer
        const reply = scheduledChatReply(server, placed.model, {message: "Hello from the app", maxTokens: 4, temperature: 0, conversationId: "app-1"})
            .then((answer) => {
                finished.push("app");
                return answer;
            });
        await Promise.all([running, queued]);
        const answer = await reply;
        expect(answer.aborted).toBe(false);
        expect(answer.text.length).toBeGreaterThan(0);
        expect(finished).toEqual(["api running", "app", "api queued"]);
    }, 120_000);
});
