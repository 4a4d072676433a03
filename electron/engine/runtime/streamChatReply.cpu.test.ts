import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Token} from "node-llama-cpp";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {PlacedModel} from "./PlacedModel.js";
import {streamChatReply, type PromptProgress} from "./streamChatReply.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] chat reply tests: ${probe.reason}`);

/**
 * A stop must land this fast in either phase (prompt processing or decoding), or within two of the steps it cannot
 * interrupt (one prompt chunk, one decode step) where a loaded machine makes one step itself slower than that.
 */
const STOP_WITHIN_MS = 250;
const stopLimit = (stepMs: number): number => Math.max(STOP_WITHIN_MS, 2 * stepMs);

describe.skipIf(probe.reason != null)("streamChatReply (patched CPU build)", () => {
    let engine: EngineLlama;
    let placed: PlacedModel;

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("chat-tiny", {preset: "tiny", type: "q8_0"});
        placed = await PlacedModel.load(engine, {modelPath, contextSize: 2048, batchSize: 512});
    }, 180_000);
    afterAll(async () => {
        await placed?.dispose();
        await engine?.llama.dispose();
    });

    it("stops within the limit while the prompt is processed, reports progress, and reuses the prompt next time", async () => {
        const message = Array.from({length: 300}, (_, index) => `word${index}`).join(" ");
        const controller = new AbortController();
        const progress: PromptProgress[] = [];
        let abortedAt = 0;
        const reply = await streamChatReply(placed, {
            message, maxTokens: 8, temperature: 0, signal: controller.signal,
            onPromptProgress(step) {
                progress.push(step);
                // the stop arrives while the next chunk is being decoded, as a user's click would
                if (step.evaluated > step.reused && abortedAt === 0)
                    setTimeout(() => {
                        abortedAt = performance.now();
                        controller.abort();
                    }, 1);
            }
        });
        const latency = performance.now() - abortedAt;
        const chunkMs = Math.max(...progress.slice(1).map((step, index) => step.elapsedMs - progress[index]!.elapsedMs));
        console.log(`[measure] stop during prompt processing landed after ${latency.toFixed(0)} ms (prompt ${reply.prompt.tokens} tokens, slowest chunk ${chunkMs.toFixed(0)} ms)`);
        expect(reply).toMatchObject({aborted: true, stopReason: "stopped", text: ""});
        expect(reply.prompt.tokens).toBeGreaterThan(600);
        expect(progress.at(-1)!.evaluated).toBeLessThan(progress.at(-1)!.total);
        expect(latency).toBeLessThan(stopLimit(chunkMs));

        // the same prompt again: what the stopped reply evaluated is reused, the rest runs to the end, the reply is cut
        // at max tokens and says so
        const steps: PromptProgress[] = [];
        const full = await streamChatReply(placed, {message, maxTokens: 4, temperature: 0, onPromptProgress: (step) => steps.push(step)});
        expect(full.stopReason).toBe("max-tokens");
        expect(full.timing.generatedTokens).toBeLessThanOrEqual(4);
        expect(full.prompt.reused).toBeGreaterThan(0);
        expect(steps.at(-1)!.evaluated).toBe(steps.at(-1)!.total);
        expect(full.context.size).toBe(2048);
        expect(full.context.usedTokens).toBeGreaterThanOrEqual(full.prompt.tokens);
    }, 180_000);

    it("generates the same greedy reply, token for token, as node-llama-cpp's own chat session did", async () => {
        const message = "Tell me about the weather";
        const reply = await streamChatReply(placed, {message, maxTokens: 24, temperature: 0});
        // the path chat took before the native loop: LlamaChatSession.promptWithMeta on the context's sequence
        const session = placed.chatSession();
        session.setChatHistory([]);
        const before: Token[] = [];
        const old = await session.promptWithMeta(message, {maxTokens: 24, temperature: 0, onToken: (tokens) => before.push(...tokens)});
        const now = placed.model.tokenize(reply.text, false);
        console.log(`[measure] greedy reply: ${reply.timing.generatedTokens} tokens natively, ${before.length} through node-llama-cpp`);
        expect(reply.text).toBe(old.responseText);
        expect(reply.timing.generatedTokens).toBe(before.filter((token) => !placed.model.isEogToken(token)).length);
        expect(placed.model.detokenize(now, false)).toBe(placed.model.detokenize(before.filter((token) => !placed.model.isEogToken(token)), false));
    }, 180_000);

    it("samples with a seed reproducibly, and a repeat penalty changes a greedy reply's repeats", async () => {
        const settings = {message: "Hello", maxTokens: 16, temperature: 0.9, topK: 20, topP: 0.9, minP: 0.05, seed: 1234};
        const first = await streamChatReply(placed, settings);
        const second = await streamChatReply(placed, settings);
        expect(second.text).toBe(first.text);
        expect(second.prompt.reused).toBeGreaterThan(0);

        const plain = await streamChatReply(placed, {message: "Hello", maxTokens: 32, temperature: 0});
        const penalised = await streamChatReply(placed, {message: "Hello", maxTokens: 32, temperature: 0, repeatPenalty: 1.8});
        const distinct = (text: string): number => new Set(placed.model.tokenize(text, false)).size;
        console.log(`[measure] distinct tokens in 32: greedy ${distinct(plain.text)}, with repeat penalty 1.8 ${distinct(penalised.text)}`);
        expect(penalised.text).not.toBe(plain.text);
    }, 180_000);

    it("refuses a conversation longer than the context with an error that says what to do", async () => {
        const message = Array.from({length: 3000}, (_, index) => `w${index}`).join(" ");
        await expect(streamChatReply(placed, {message, maxTokens: 4, temperature: 0})).rejects.toThrow(/^The newest message with the system prompt and the chat template takes \d+ tokens and the context holds 2048: shorten the message/);
    }, 180_000);

    it("stops within the limit while decoding, and keeps a stop string out of the reply", async () => {
        const controller = new AbortController();
        let abortedAt = 0;
        const reply = await streamChatReply(placed, {
            message: "Hello", maxTokens: 1000, temperature: 0, signal: controller.signal,
            onText(_text, _elapsed, tokens) {
                if (tokens >= 3 && abortedAt === 0)
                    setTimeout(() => {
                        abortedAt = performance.now();
                        controller.abort();
                    }, 1);
            }
        });
        const latency = performance.now() - abortedAt;
        const tpot = reply.timing.tpotMs ?? 0;
        console.log(`[measure] stop while decoding landed after ${latency.toFixed(0)} ms (TPOT ${tpot.toFixed(0)} ms, ${reply.timing.generatedTokens} tokens)`);
        expect(reply.aborted).toBe(true);
        expect(reply.stopReason).toBe("stopped");
        expect(latency).toBeLessThan(stopLimit(tpot));

        // greedy output is deterministic: pick a piece of it as a stop string, and the reply ends just before it
        const free = await streamChatReply(placed, {message: "Hello", maxTokens: 24, temperature: 0});
        const cut = free.text.slice(Math.floor(free.text.length / 2)).trim().slice(0, 4);
        if (cut.length < 2) {
            console.warn("[skip] stop-string check: the greedy reply has no text to cut at");
            return;
        }
        const stopped = await streamChatReply(placed, {message: "Hello", maxTokens: 24, temperature: 0, stopStrings: [cut]});
        expect(stopped.stopReason).toBe("stop-string");
        expect(stopped.text).not.toContain(cut);
        expect(free.text.startsWith(stopped.text.trimEnd())).toBe(true);
    }, 180_000);
});
