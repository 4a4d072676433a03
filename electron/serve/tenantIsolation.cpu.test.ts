/**
 * A hostile client of the same server, from its side: it holds its own API key (or none, on a server without keys) and
 * tries to learn another client's conversation through the shared sequence — the prompt tokens it has to evaluate (a
 * prefix still cached would be skipped), the other conversation's X-Conversation-Id, and what the answers' timings
 * say — and tries every shape of wrong key. One sequence, so every request lands where the victim's just ran.
 */
import http from "node:http";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EngineLlama} from "../engine/native/getEngineLlama.js";
import {PlacedModel} from "../engine/runtime/PlacedModel.js";
import {probeEngine} from "../engine/testing/probeEngine.js";
import {makeTestModel} from "../engine/testing/testModels.js";
import type {KvCostModel} from "./kv/KvCostModel.js";
import type {Timings} from "./protocols/openai/replyBodies.js";
import {fifoPolicy} from "./scheduling/schedulingPolicies.js";
import {serveOpenAi, type OpenAiServer} from "./serveOpenAi.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] tenant isolation tests: ${probe.reason}`);

const KEY_A = "tw-victim-0123456789abcdef";
const KEY_B = "tw-attack-0123456789abcdef";
/** The victim's secret, and the attacker's guesses at it. */
const SECRET = "The vault code is 4721 and nobody else may know it";
/** Swap always wins, so a displaced conversation's state is saved and could be loaded into another's sequence. */
const swapCheap: KvCostModel = {
    stateBytes: {headerBytes: 0, bytesPerToken: 1000}, save: {fixedMs: 0, msPer: 1e-9}, load: {fixedMs: 0, msPer: 1e-9},
    prefill: {fixedMs: 100, msPer: 10}, source: "given (swap cheap)"
};

type Answer = {status: number; body: {usage?: {prompt_tokens: number}; timings?: Timings; error?: {message: string; code: string | null}}; text: string};

/** A raw request, so any header (repeated, Latin-1, odd Authorization shapes) goes out exactly as written. */
function post(server: OpenAiServer, headers: Record<string, string | string[]>, body: unknown, path = "/v1/chat/completions"): Promise<Answer> {
    const data = JSON.stringify(body);
    return new Promise((resolve, reject) => {
        const request = http.request({host: "127.0.0.1", port: server.port, path, method: body == null ? "GET" : "POST",
            headers: {"Content-Type": "application/json", ...headers}}, (response) => {
            let text = "";
            response.setEncoding("utf8");
            response.on("data", (chunk: string) => (text += chunk));
            response.on("end", () => resolve({status: response.statusCode ?? 0, body: JSON.parse(text) as Answer["body"], text}));
        });
        request.on("error", reject);
        request.end(body == null ? undefined : data);
    });
}

const chatBody = (content: string) => ({messages: [{role: "user", content}], max_tokens: 2, temperature: 0});

/**
 * Prompt tokens a request evaluates when nothing of it is cached, from its prompt length: measured on the server's
 * first request (an untouched sequence): the whole prompt (ServeSlot.ts counts the last prompt token, which node-llama-cpp's
 * TokenMeter books as output).
 */
async function freshEvaluation(server: OpenAiServer, headers: Record<string, string>): Promise<(answer: Answer) => number> {
    const first = await post(server, headers, chatBody("a first request on an untouched sequence"));
    const held = first.body.usage!.prompt_tokens - first.body.timings!.prompt_tokens_evaluated;
    return (answer) => answer.body.usage!.prompt_tokens - held;
}
const bearer = (key: string) => ({Authorization: `Bearer ${key}`});

describe.skipIf(probe.reason != null)("one client cannot see another's conversation (CPU, generated model, 1 sequence)", () => {
    let engine: EngineLlama;
    let placed: PlacedModel;
    let server: OpenAiServer;
    let uncached: (answer: Answer) => number;
    const log: string[] = [];

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("kv-tiny", {preset: "tiny", type: "q8_0"});
        placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024, threads: 1, sequences: 1});
        server = await serveOpenAi({placed, modelId: "kv-tiny", queueLength: 4, requestTimeoutMs: 60_000, policy: fifoPolicy,
            apiKeys: [KEY_A, KEY_B], kv: {costModel: swapCheap}, log: (line) => log.push(line)});
        uncached = await freshEvaluation(server, bearer(KEY_B));
    });
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await engine?.llama.dispose();
    });

    it("a guess at another key's prompt evaluates every one of its own prompt tokens, right or wrong", async () => {
        const victim = await post(server, bearer(KEY_A), chatBody(SECRET));
        expect(victim.status).toBe(200);
        // the victim's own follow-up still reuses its cache: the isolation costs other tenants nothing of their own
        const follow = await post(server, bearer(KEY_A), {...chatBody(SECRET), messages: [{role: "user", content: SECRET},
            {role: "assistant", content: "ok"}, {role: "user", content: "and then?"}]});
        expect(follow.body.timings!.kv.path).toBe("resident");
        expect(follow.body.timings!.prompt_tokens_evaluated).toBeLessThan(follow.body.usage!.prompt_tokens);

        for (const guess of ["The vault code is 4", "The vault code is 9", SECRET]) {
            await post(server, bearer(KEY_A), chatBody(SECRET));
            const probe = await post(server, bearer(KEY_B), chatBody(guess));
            expect(probe.status).toBe(200);
            // nothing of the victim's tokens was reused: the count depends on the guess alone
            expect(probe.body.timings!.prompt_tokens_evaluated, guess).toBe(uncached(probe));
            expect(probe.body.timings!.kv.path).toBe("new");
        }
    });

    it("the other key's X-Conversation-Id names a different conversation, never the victim's saved state", async () => {
        const victim = await post(server, {...bearer(KEY_A), "X-Conversation-Id": "thread-1"}, chatBody(SECRET));
        await post(server, bearer(KEY_A), chatBody("something else, so thread-1 is swapped out to a file"));
        const stolen = await post(server, {...bearer(KEY_B), "X-Conversation-Id": "thread-1"}, chatBody("continue"));
        expect(stolen.status).toBe(200);
        expect(stolen.body.timings!.kv.conversation).not.toBe(victim.body.timings!.kv.conversation);
        expect(stolen.body.timings!.kv.path).toBe("new");
        expect(stolen.body.timings!.prompt_tokens_evaluated).toBe(uncached(stolen));
        // same length, one character off: another conversation of B's own
        const near = await post(server, {...bearer(KEY_B), "X-Conversation-Id": "thread-2"}, chatBody("continue"));
        expect(near.body.timings!.kv.conversation).not.toBe(stolen.body.timings!.kv.conversation);
        // the victim still gets its own state back
        const back = await post(server, {...bearer(KEY_A), "X-Conversation-Id": "thread-1"}, chatBody(SECRET));
        expect(back.body.timings!.kv).toMatchObject({conversation: victim.body.timings!.kv.conversation, path: "swap"});
    });

    it("no answer names, sizes or times the conversation it displaced; the server's log does", async () => {
        const victim = await post(server, {...bearer(KEY_A), "X-Conversation-Id": "victim-3"}, chatBody(SECRET));
        const victimId = victim.body.timings!.kv.conversation!;
        log.length = 0;
        const attacker = await post(server, bearer(KEY_B), chatBody("who was here before me?"));
        expect(attacker.text).not.toContain(victimId);
        expect(Object.keys(attacker.body.timings!.kv).sort()).toEqual(["conversation", "fallback", "measured", "path", "predicted", "restore_ms", "state_bytes", "tokens"]);
        expect(attacker.body.timings!.kv).toMatchObject({path: "new", tokens: null, state_bytes: null, predicted: null, measured: null});
        expect(log.some((line) => line.startsWith(`kv ${victimId} left sequence 0 (swap`))).toBe(true);
    });

    it("refuses every wrong shape of key with 401, and serves each right key as its own client", async () => {
        const status = async (headers: Record<string, string | string[]>) => (await post(server, headers, null, "/v1/models")).status;
        const sameLength = (key: string, at: number) => key.slice(0, at) + (key[at] === "x" ? "y" : "x") + key.slice(at + 1);
        const refused: Record<string, string | string[]>[] = [
            {},
            {Authorization: ""},
            {Authorization: "Bearer"},
            {Authorization: "Bearer "},
            {Authorization: KEY_A},
            {Authorization: `Basic ${Buffer.from(`user:${KEY_A}`).toString("base64")}`},
            {Authorization: `Bearer${KEY_A}`},
            {Authorization: `Bearer\t${KEY_A}`},
            {Authorization: `Bearer ${KEY_A} ${KEY_B}`},
            {Authorization: `Bearer ${KEY_A},${KEY_B}`},
            {Authorization: `Token ${KEY_A}`},
            bearer(sameLength(KEY_A, 0)),
            bearer(sameLength(KEY_A, KEY_A.length - 1)),
            bearer(sameLength(KEY_A, 10)),
            bearer(KEY_A.toUpperCase()),
            bearer(KEY_A.slice(0, -1)),
            bearer(`${KEY_A}x`),
            bearer(`x${KEY_A}`),
            bearer(KEY_A.slice(0, 3)),
            bearer("x".repeat(10_000)),
            bearer(`${KEY_A}\u00e9`),
            {"X-Api-Key": sameLength(KEY_B, 4)},
            {"X-Api-Key": ""},
            {"X-Api-Key": [KEY_A, KEY_A]},
            {...bearer(KEY_A), "X-Api-Key": KEY_B}
        ];
        for (const headers of refused)
            expect(await status(headers), JSON.stringify(headers).slice(0, 120)).toBe(401);
        for (const headers of [bearer(KEY_A), bearer(KEY_B), {Authorization: `bearer ${KEY_A}`}, {Authorization: `BEARER ${KEY_B}`},
            {Authorization: `Bearer  ${KEY_A}`}, {Authorization: `Bearer ${KEY_A} `}, {"X-Api-Key": KEY_B}, {...bearer(KEY_A), "X-Api-Key": KEY_A}])
            expect(await status(headers), JSON.stringify(headers)).toBe(200);
        const answer = await post(server, bearer(sameLength(KEY_A, 5)), null, "/v1/models");
        expect(answer.body.error).toMatchObject({code: "invalid_api_key", message: expect.stringMatching(/^Incorrect API key provided/)});
    });

    it("refuses a malformed X-Conversation-Id in one sentence: over-long, non-ASCII, with a space, or sent twice", async () => {
        const ok = await post(server, {...bearer(KEY_B), "X-Conversation-Id": "x".repeat(200)}, chatBody("hi"));
        expect(ok.status).toBe(200);
        for (const id of ["x".repeat(201), "caf\u00e9", "two words", ["a", "b"], ["same", "same"]]) {
            const answer = await post(server, {...bearer(KEY_B), "X-Conversation-Id": id}, chatBody("hi"));
            expect(answer.status, JSON.stringify(id).slice(0, 40)).toBe(400);
            expect(answer.body.error).toMatchObject({code: "invalid_conversation_id",
                message: "The X-Conversation-Id header must be sent once, as 1 to 200 visible ASCII characters (no spaces)."});
        }
    });
});

describe.skipIf(probe.reason != null)("a server without keys keeps its clients' conversations apart too (CPU, 1 sequence)", () => {
    it("a request of another conversation evaluates its whole prompt, whatever the sequence held", async () => {
        const modelPath = await makeTestModel("kv-tiny", {preset: "tiny", type: "q8_0"});
        const engine = (await probeEngine("cpu", {maxThreads: 1})).engine!;
        const placed = await PlacedModel.load(engine, {modelPath, contextSize: 1024, threads: 1, sequences: 1});
        const server = await serveOpenAi({placed, modelId: "kv-tiny", queueLength: 4, requestTimeoutMs: 60_000, policy: fifoPolicy,
            kv: {costModel: swapCheap}});
        try {
            const uncached = await freshEvaluation(server, {});
            await post(server, {}, chatBody(SECRET));
            const guess = await post(server, {}, chatBody("The vault code is 4"));
            expect(guess.body.timings!.prompt_tokens_evaluated).toBe(uncached(guess));
            // text completions name no conversation: each starts from an empty sequence, so what ran before (a prompt
            // sharing the guess's prefix, or one sharing nothing) changes nothing
            const completionAfter = async (before: string) => {
                await post(server, {}, {prompt: before, max_tokens: 2, temperature: 0}, "/v1/completions");
                return (await post(server, {}, {prompt: "The vault code is 4", max_tokens: 2, temperature: 0}, "/v1/completions")).body.timings!.prompt_tokens_evaluated;
            };
            expect(await completionAfter(SECRET)).toBe(await completionAfter("Nothing alike at all"));
        } finally {
            await server.close();
            await placed.dispose();
            await engine.llama.dispose();
        }
    });
});
