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
import type {KvCostModel} from "./kv/KvCostModel.js";
import {scheduledChatReply} from "./scheduledChatReply.js";
import {fifoPolicy} from "./scheduling/schedulingPolicies.js";
import {longestTokenBytes} from "./generation/promptBound.js";
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

type FloodAnswer = {status: number; body: {error: {code: string; message: string; param: string}}};

/**
 * Starts a long stream, and once it flows sends {@link FLOOD} copies of `body` at once. Returns their answers, the gaps
 * between the stream's chunks (ms), and how many chunks came after every flood request was answered.
 */
async function floodWhileStreaming(client: OpenAI, url: string, body: string, streamTokens = 400): Promise<{answers: FloodAnswer[]; gaps: number[]; chunksAfterFlood: number}> {
    const gaps: number[] = [];
    let floodStarted!: () => void;
    const streaming = new Promise<void>((resolve) => (floodStarted = resolve));
    let floodAnswered = false;
    let chunksAfterFlood = 0;
    const stream = (async () => {
        let last = performance.now();
        for await (const _chunk of await client.chat.completions.create({model: "m", messages: [{role: "user", content: "Tell a long story"}],
            max_tokens: streamTokens, temperature: 0, stream: true})) {
            gaps.push(performance.now() - last);
            last = performance.now();
            if (gaps.length === 3)
                floodStarted();
            // a few chunks after the flood show the stream outlived it; then it may stop
            if (floodAnswered && ++chunksAfterFlood >= 3)
                break;
        }
    })();
    await streaming;
    const answers = await Promise.all(Array.from({length: FLOOD}, async () => {
        const response = await fetch(`${url}/chat/completions`, {method: "POST", headers: {"Content-Type": "application/json"}, body});
        return {status: response.status, body: await response.json() as FloodAnswer["body"]};
    }));
    floodAnswered = true;
    await stream;
    return {answers, gaps, chunksAfterFlood};
}

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
    });

    it("refuses megabyte prompts before tokenizing them, so a running stream keeps flowing", async () => {
        const huge = {messages: Array.from({length: MESSAGES_PER_BODY}, (_unused, index) => ({role: "user", content: `${index}`.padEnd(TEXT_LIMITS.message, "x")})),
            max_tokens: 2};
        const body = JSON.stringify(huge);
        expect(body.length).toBeGreaterThan(3_000_000);
        const {answers, gaps, chunksAfterFlood} = await floodWhileStreaming(client, server.url, body);
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

    it("the app's chat through the server fits a long conversation to a sequence under its policy, or refuses it under stop", async () => {
        // 50 exchanges of about 40 tokens: several times one sequence's 1024 tokens
        const history = Array.from({length: 100}, (_, index) => ({
            role: index % 2 === 0 ? "user" as const : "assistant" as const,
            text: Array.from({length: 12}, (_unused, word) => `m${index}w${word}`).join(" ")
        }));
        const options = {history, message: "and now?", maxTokens: 8, temperature: 0, conversationId: "app-long"};
        const answer = await scheduledChatReply(server, placed.model, options);
        expect(answer.aborted).toBe(false);
        expect(answer.leftOutMessages).toBeGreaterThan(0);
        expect(answer.leftOutMessages).toBeLessThan(history.length);
        expect(answer.prompt.tokens + 8).toBeLessThanOrEqual(1024);
        await expect(scheduledChatReply(server, placed.model, {...options, contextOverflow: "stop"}))
            .rejects.toMatchObject({code: "conversation-too-long", message: expect.stringMatching(/^The conversation \(\d+ tokens\) does not fit in the context \(1024 tokens\)/)});
    }, 120_000);
});

afterAll(async () => {
    await probe.engine?.llama.dispose();
});

/** A context long enough that megabytes of text pass the byte bound (promptBound.ts) and must really be counted. */
const LONG_CONTEXT = 262_144;

describe.skipIf(probe.reason != null)("a long context: prompts the byte bound lets through are counted off the server's thread (CPU, generated model)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;

    beforeAll(async () => {
        const modelPath = await makeTestModel("kv-tiny-long", {preset: "tiny", type: "q8_0", contextLength: LONG_CONTEXT});
        // flash attention keeps the scratch of so long a context small (272 MiB instead of 2.6 GiB)
        placed = await PlacedModel.load(probe.engine!, {modelPath, contextSize: LONG_CONTEXT, threads: 1, sequences: 1, flashAttention: true});
        server = await serveOpenAi({placed, modelId: "kv-tiny-long", queueLength: 1, requestTimeoutMs: 120_000, policy: fifoPolicy,
            kv: {costModel: recomputeCheap}});
        client = new OpenAI({baseURL: server.url, apiKey: "unused", maxRetries: 0});
    });
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
    });

    it("refuses megabyte prompts by their real count, counted on a worker while a running stream keeps flowing", async () => {
        const longest = longestTokenBytes(placed.model);
        // under the byte bound (so it must be counted), yet far beyond the context in tokens: one or two characters a token
        const bytes = Math.min(LONG_CONTEXT * longest, 3_900_000) - 4096;
        expect(bytes).toBeGreaterThan(4 * LONG_CONTEXT);
        const perMessage = TEXT_LIMITS.message - 16;
        const messages = [];
        for (let left = bytes, index = 0; left > 0; left -= perMessage, index++)
            messages.push({role: "user", content: "a b c d e f g h ".repeat(Math.ceil(Math.min(left, perMessage) / 16)).slice(0, Math.min(left, perMessage))});
        const body = JSON.stringify({messages, max_tokens: 2});
        // counting the eight bodies on one worker takes seconds: a stream long enough to outlast them
        const {answers, gaps, chunksAfterFlood} = await floodWhileStreaming(client, server.url, body, 20_000);
        expect(chunksAfterFlood).toBeGreaterThan(0);
        // tokenizing each body on the server's thread stalled the stream for 1.3–1.6 s on this VM
        expect(Math.max(...gaps.slice(1))).toBeLessThan(1000);
        for (const answer of answers) {
            expect(answer.status).toBe(400);
            expect(answer.body.error.message).toMatch(/^This request needs at least \d+ prompt tokens/);
            const counted = Number(/needs at least (\d+) prompt tokens/.exec(answer.body.error.message)?.[1]);
            // refused by the count, not the byte bound: far more tokens than the bytes alone prove
            expect(counted).toBeGreaterThan(LONG_CONTEXT);
            expect(counted).toBeGreaterThan(2 * Math.ceil(bytes / longest));
        }
    }, 240_000);
});
