// Needs the CPU build and a C++ compiler (stock llama-speculative-simple is built from the same llama.cpp source).
// Speculative decoding in the native loop (native/src/TensorwiseSpeculative.cpp): greedy tokens with speculation equal
// greedy tokens without it, and stock llama.cpp's for the same files and flags, for n-gram lookup and a draft model.
import {spawnSync} from "node:child_process";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Token} from "node-llama-cpp";
import {ensureStockLlamaTool, LLAMA_SPECULATIVE_SIMPLE_TOOL} from "../bench/llamaBench/buildLlamaBench.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {PlacedModel, type SpeculativeLoad} from "./PlacedModel.js";
import {tokenPiece} from "./tokenPiece.js";
import {LLAMA_SPECULATIVE_TYPE} from "../../contract/speculative.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] speculative decoding on the CPU: ${probe.reason}`);

const PROMPT = "hello world";
/** Long enough for the random-weight model's greedy reply to fall into loops, where n-gram lookup finds drafts. */
const TOKENS = 200;
const CONTEXT = 1024;
/** Short n-grams: the loops of a random-weight reply are short (llama.cpp's default looks up 12 tokens). */
const NGRAM = {ngramSizeN: 3, ngramSizeM: 8} as const;
/** The models' shape: see beforeAll. */
const SHAPE = {preset: "tiny", type: "f32", embd: 256, ff: 768, heads: 8, kvHeads: 2, vocab: 4096} as const;

describe.skipIf(probe.reason != null)("speculative decoding in the native loop (CPU)", () => {
    let target: string;
    let draft: string;
    let plain: Token[];
    /** A draft model's steps cost a decode of each model: a shorter reply keeps the test quick. */
    const DRAFT_TOKENS = 48;

    beforeAll(async () => {
        // every output row its own: the writer replays one pool of random weights per type (syntheticTensorData.ts), and
        // an output matrix larger than the pool repeats rows, whose tokens then tie exactly — so llama.cpp's kernels for
        // one token and for a batch, which round differently, pick different ones, and even stock llama.cpp's greedy
        // reply changes with the shape of its verification batches. F32 at 4096 × 256 is the pool's size
        target = await makeTestModel("spec-target", {...SHAPE, layers: 4});
        // the same vocabulary (the writer's tokenizer), other weights and half the layers: a real, cheaper draft
        draft = await makeTestModel("spec-draft", {...SHAPE, layers: 2, seed: 7});
        plain = (await greedy(undefined)).tokens;
    }, 300_000);
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });

    async function greedy(speculative: SpeculativeLoad | undefined, tokens = TOKENS) {
        const placed = await PlacedModel.load(probe.engine!, {modelPath: target, gpuLayers: 0, contextSize: CONTEXT, batchSize: 128, threads: 2,
            ...(speculative != null ? {speculative} : {})});
        try {
            const bos = placed.model.tokens.bos != null && placed.model.tokens.shouldPrependBosToken ? [placed.model.tokens.bos] : [];
            const prompt = [...bos, ...placed.model.tokenize(PROMPT, false)];
            const result = await placed.generate(prompt, {maxTokens: tokens, stopAtEog: false, temperature: 0, reusePrefix: false});
            // the reply's bytes, piece by piece as llama.cpp prints them (a byte token is one byte of a character)
            const bytes = Buffer.from(result.tokens.flatMap((token, i) => tokenPiece(placed.model, token, [...prompt, ...result.tokens.slice(0, i)]).bytes));
            return {tokens: result.tokens, stats: result.speculative, bytes};
        } finally {
            await placed.dispose();
        }
    }

    /** Stock llama-speculative-simple's reply, as it prints it: the prompt's pieces, then the reply's. */
    function stock(args: readonly string[], tokens = TOKENS): Buffer {
        const tool = ensureStockLlamaTool(LLAMA_SPECULATIVE_SIMPLE_TOOL, "cpu");
        const run = spawnSync(tool.program, ["-m", target, "-p", PROMPT, "-n", String(tokens), "--temp", "0", "-t", "2", "-c", String(CONTEXT),
            "-ngl", "0", "-fa", "off", "-b", "128", "-ub", "128", ...args], {maxBuffer: 16 << 20, timeout: 240_000});
        if (run.status !== 0) throw new Error(`llama-speculative-simple exit ${run.status}: ${run.stderr.toString().split("\n").slice(-5).join(" ")}`);
        return run.stdout;
    }

    /** Stock's printed reply holds ours right after the prompt's pieces (it may draft past -n). */
    function expectStockReply(printed: Buffer, ours: Buffer): void {
        const prompt = Buffer.from(` ${PROMPT}`);
        const at = printed.indexOf(prompt);
        expect(at, "the prompt in stock's output").toBeGreaterThanOrEqual(0);
        const reply = printed.subarray(at + prompt.length);
        let same = 0;
        while (same < ours.length && reply[same] === ours[same]) same++;
        expect(same, `stock's reply (${reply.length} bytes) differs from ours (${ours.length} bytes) at byte ${same}: ` +
            `…${JSON.stringify(reply.subarray(Math.max(0, same - 20), same + 20).toString("latin1"))} against …${JSON.stringify(ours.subarray(Math.max(0, same - 20), same + 20).toString("latin1"))}`).toBe(ours.length);
    }

    it("n-gram lookup: the plain greedy tokens and stock llama.cpp's, with drafts accepted on the reply's loops", async () => {
        const spec = await greedy({kind: "ngram", nMax: 8, ...NGRAM});
        expect(spec.tokens).toEqual(plain);
        expect(spec.stats!.drafted).toBeGreaterThan(0);
        expect(spec.stats!.accepted).toBeGreaterThan(0);
        expect(spec.stats!.accepted).toBeLessThanOrEqual(spec.stats!.drafted);
        const reference = stock(["--spec-type", LLAMA_SPECULATIVE_TYPE.ngram, "--spec-draft-n-max", "8",
            "--spec-ngram-map-k-size-n", String(NGRAM.ngramSizeN), "--spec-ngram-map-k-size-m", String(NGRAM.ngramSizeM)]);
        expectStockReply(reference, spec.bytes);
    }, 300_000);

    it("a draft model: the plain greedy tokens and stock llama.cpp's; and the target's own weights as its draft", async () => {
        const spec = await greedy({kind: "draft", nMax: 4, draft: {modelPath: draft, gpuLayers: 0}}, DRAFT_TOKENS);
        expect(spec.tokens).toEqual(plain.slice(0, DRAFT_TOKENS));
        expect(spec.stats!.steps).toBeGreaterThan(0);
        expect(spec.stats!.drafted).toBeGreaterThan(0);
        const reference = stock(["-md", draft, "-ngld", "0", "--spec-type", LLAMA_SPECULATIVE_TYPE.draft, "--spec-draft-n-max", "4"], DRAFT_TOKENS);
        expectStockReply(reference, spec.bytes);
        const itself = await greedy({kind: "draft", nMax: 4, draft: {modelPath: target, gpuLayers: 0}}, DRAFT_TOKENS);
        expect(itself.tokens).toEqual(plain.slice(0, DRAFT_TOKENS));
        // the model's own weights draft what it would say: nearly every draft token is kept (a tie-free model: see beforeAll)
        expect(itself.stats!.accepted / itself.stats!.drafted).toBeGreaterThan(0.9);
    }, 300_000);

    it("refuses, by name and before loading, what cannot run", async () => {
        const load = (speculative: unknown) => PlacedModel.load(probe.engine!, {modelPath: target, gpuLayers: 0, contextSize: 256, speculative: speculative as SpeculativeLoad});
        await expect(load({kind: "eagle"})).rejects.toThrow(/unknown speculative kind "eagle"/);
        for (const nMax of [0, 65, 1.5, Number.NaN])
            await expect(load({kind: "ngram", nMax})).rejects.toThrow(/--spec-draft-n-max/);
        await expect(load({kind: "ngram", nMax: 2, nMin: 3})).rejects.toThrow(/--spec-draft-n-min/);
        await expect(load({kind: "draft"})).rejects.toThrow(/needs the draft model \(--model-draft\)/);
        await expect(load({kind: "ngram", draft: {modelPath: draft}})).rejects.toThrow(/of kind ngram takes no draft model/);
        for (const ngramSizeN of [0, 65, 2.5])
            await expect(load({kind: "ngram", ngramSizeN})).rejects.toThrow(/n-gram/);
    }, 120_000);
});
