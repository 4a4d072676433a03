import {createHash} from "node:crypto";
import {mkdtemp, readFile, rm, stat} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {getLlama, LlamaChatSession, LlamaCompletion, LlamaLogLevel, readGgufFileInfo, type Llama} from "node-llama-cpp";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel, resolveSyntheticShape, syntheticModelPresets, syntheticTensorSpecs, type SyntheticWeightType} from "./makeSyntheticModel.js";
import {buildSyntheticVocab, minSyntheticVocabSize} from "./syntheticVocab.js";

let dir = "";
beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tensorwise-synthetic-"));
});
afterAll(async () => {
    await rm(dir, {recursive: true, force: true});
});

async function sha256(path: string): Promise<string> {
    return createHash("sha256").update(await readFile(path)).digest("hex");
}

const ggmlTypeIds: Readonly<Record<SyntheticWeightType, number>> = {f32: 0, f16: 1, bf16: 30, q8_0: 8, q4_0: 2};

describe("buildSyntheticVocab", () => {
    it("has llama's special and byte tokens, unique strings and the exact size", () => {
        const vocab = buildSyntheticVocab(1024);
        expect(vocab.tokens.length).toBe(1024);
        expect(new Set(vocab.tokens).size).toBe(1024);
        expect(vocab.tokens.slice(0, 3)).toEqual(["<unk>", "<s>", "</s>"]);
        expect([...vocab.tokenTypes.slice(0, 3)]).toEqual([2, 3, 3]);
        expect(vocab.tokens[3 + 0x0a]).toBe("<0x0A>");
        expect([...vocab.tokenTypes.slice(3, 259)].every((type) => type === 6)).toBe(true);
        expect(vocab.tokens).toContain("▁the");
        expect(vocab.tokens).toContain("▁hello");
    });

    it("scales to Llama-3's vocabulary size and rejects too small ones", () => {
        const vocab = buildSyntheticVocab(128256);
        expect(new Set(vocab.tokens).size).toBe(128256);
        expect(() => buildSyntheticVocab(minSyntheticVocabSize - 1)).toThrow(RangeError);
    });
});

describe("makeSyntheticModel", () => {
    for (const type of ["f32", "f16", "bf16", "q8_0", "q4_0"] as const) {
        it(`writes a tiny ${type} model that node-llama-cpp reads back`, async () => {
            const path = join(dir, `tiny-${type}.gguf`);
            const progress: number[] = [];
            const result = await makeSyntheticModel(path, {type, onProgress: (written) => progress.push(written)});
            const {embd, ff, vocab, layers} = syntheticModelPresets.tiny;
            expect(result.tensorCount).toBe(3 + 9 * layers);
            expect((await stat(path)).size).toBe(result.totalBytes);
            expect(progress.at(-1)).toBe(result.totalBytes);

            const info = await readGgufFileInfo(path, {logWarnings: false});
            expect(info.metadata.general?.architecture).toBe("llama");
            const llama = info.architectureMetadata;
            expect([llama.block_count, llama.embedding_length, llama.feed_forward_length, llama.context_length])
                .toEqual([layers, embd, ff, 4096]);
            expect([llama.attention?.head_count, llama.attention?.head_count_kv, llama.rope?.dimension_count])
                .toEqual([4, 2, 32]);
            expect(info.metadata.tokenizer?.ggml?.model).toBe("llama");
            expect(info.metadata.tokenizer?.ggml?.tokens?.length).toBe(vocab);

            const tensors = new Map((info.tensorInfo ?? []).map((tensor) => [tensor.name, tensor]));
            const expectTensor = (name: string, dims: number[], ggmlType: number): void => {
                const tensor = tensors.get(name);
                expect(tensor, name).toBeDefined();
                expect([tensor?.dimensions.map(Number), tensor?.ggmlType], name).toEqual([dims, ggmlType]);
            };
            const weight = ggmlTypeIds[type];
            expectTensor("token_embd.weight", [embd, vocab], weight);
            expectTensor("blk.1.attn_norm.weight", [embd], 0);
            expectTensor("blk.1.attn_q.weight", [embd, embd], weight);
            expectTensor("blk.1.attn_k.weight", [embd, 64], weight);
            expectTensor("blk.1.attn_v.weight", [embd, 64], weight);
            expectTensor("blk.1.attn_output.weight", [embd, embd], weight);
            expectTensor("blk.1.ffn_norm.weight", [embd], 0);
            expectTensor("blk.1.ffn_gate.weight", [embd, ff], weight);
            expectTensor("blk.1.ffn_up.weight", [embd, ff], weight);
            expectTensor("blk.1.ffn_down.weight", [ff, embd], weight);
            expectTensor("output_norm.weight", [embd], 0);
            expectTensor("output.weight", [embd, vocab], type === "q4_0" ? ggmlTypeIds.q8_0 : weight);
        });
    }

    it("writes byte-identical files for the same seed and different ones for another", async () => {
        const [a, b, c] = [join(dir, "seed-a.gguf"), join(dir, "seed-b.gguf"), join(dir, "seed-c.gguf")];
        await makeSyntheticModel(a, {type: "q8_0", seed: 7});
        await makeSyntheticModel(b, {type: "q8_0", seed: 7});
        await makeSyntheticModel(c, {type: "q8_0", seed: 8});
        expect(await sha256(a)).toBe(await sha256(b));
        expect(await sha256(a)).not.toBe(await sha256(c));
    });

    it("stops on abort and deletes the partial file", async () => {
        const path = join(dir, "aborted.gguf");
        const controller = new AbortController();
        const written = makeSyntheticModel(path, {
            preset: "small", type: "f32", signal: controller.signal,
            onProgress: (bytes) => {
                if (bytes > 1 << 20) controller.abort(new Error("stop"));
            }
        });
        await expect(written).rejects.toThrow("stop");
        await expect(stat(path)).rejects.toThrow();
    });

    it("rejects shapes llama.cpp cannot load", async () => {
        const path = join(dir, "bad.gguf");
        await expect(makeSyntheticModel(path, {heads: 3})).rejects.toThrow(/multiple of heads/);
        await expect(makeSyntheticModel(path, {kvHeads: 3})).rejects.toThrow(/kvHeads/);
        await expect(makeSyntheticModel(path, {type: "q8_0", ff: 100})).rejects.toThrow(/multiples of 32/);
        await expect(makeSyntheticModel(path, {layers: 0})).rejects.toThrow(/positive integer/);
        await expect(stat(path)).rejects.toThrow();
    });
});

describe("synthetic mixture-of-experts models", () => {
    const elements = (shape: readonly (number | bigint)[]): number => shape.reduce<number>((a, b) => a * Number(b), 1);

    it("writes the Mixtral-style mixtral-mini preset: 8 experts of width ff, 2 used, under 60 MiB at F16", async () => {
        const path = join(dir, "mixtral-mini.gguf");
        const result = await makeSyntheticModel(path, {preset: "mixtral-mini"});
        expect(result.totalBytes).toBeLessThan(60 * 2 ** 20);
        const info = await readGgufFileInfo(path, {logWarnings: false});
        expect(info.metadata.general?.architecture).toBe("llama");
        expect([info.architectureMetadata.expert_count, info.architectureMetadata.expert_used_count]).toEqual([8, 2]);
        const tensors = new Map((info.tensorInfo ?? []).map((tensor) => [tensor.name, tensor.dimensions.map(Number)]));
        // source: load_arch_tensors in src/models/llama.cpp (n_expert > 0): experts are n_ff wide, the router F32
        expect(tensors.get("blk.3.ffn_gate_inp.weight")).toEqual([256, 8]);
        expect(tensors.get("blk.3.ffn_gate_exps.weight")).toEqual([256, 512, 8]);
        expect(tensors.get("blk.3.ffn_up_exps.weight")).toEqual([256, 512, 8]);
        expect(tensors.get("blk.3.ffn_down_exps.weight")).toEqual([512, 256, 8]);
        expect(tensors.has("blk.0.ffn_up.weight")).toBe(false);
    });

    it("describes Qwen3-30B-A3B's tensors without writing them: 48 layers of 128 experts 768 wide, head size 128", () => {
        const shape = resolveSyntheticShape({preset: "qwen3-30b-a3b"});
        const specs = syntheticTensorSpecs(shape, "f16");
        const byName = new Map(specs.map((spec) => [spec.name, spec.shape]));
        expect(byName.get("blk.47.ffn_gate_exps.weight")).toEqual([2048, 768, 128]);
        expect(byName.get("blk.47.ffn_down_exps.weight")).toEqual([768, 2048, 128]);
        expect(byName.get("blk.0.attn_q.weight")).toEqual([2048, 4096]);
        expect(byName.get("blk.0.attn_k.weight")).toEqual([2048, 512]);
        expect(byName.get("blk.0.attn_output.weight")).toEqual([4096, 2048]);
        expect(byName.get("blk.0.attn_q_norm.weight")).toEqual([128]);
        // 30.5 B parameters, 3.35 B of them used per token (8 of 128 experts, embeddings counted): the model's name
        const params = specs.reduce((sum, spec) => sum + elements(spec.shape), 0);
        const expertParams = specs.filter((spec) => spec.name.includes("_exps")).reduce((sum, spec) => sum + elements(spec.shape), 0);
        expect(params / 1e9).toBeCloseTo(30.5, 1);
        expect((params - expertParams * (1 - 8 / 128)) / 1e9).toBeCloseTo(3.35, 2);
    });

    it("rejects expert counts llama.cpp cannot load", async () => {
        const path = join(dir, "bad-moe.gguf");
        await expect(makeSyntheticModel(path, {preset: "mixtral-mini", expertsUsed: 9})).rejects.toThrow(/expertsUsed must be from 1 to the 8 experts/);
        await expect(makeSyntheticModel(path, {preset: "mixtral-mini", experts: 0})).rejects.toThrow(/expertsUsed needs experts/);
        await expect(makeSyntheticModel(path, {preset: "qwen3-30b-a3b", experts: 0, expertsUsed: 0})).rejects.toThrow(/qwen3moe model needs experts/);
        await expect(stat(path)).rejects.toThrow();
    });
});

describe("synthetic models in stock node-llama-cpp (prebuilt CPU binary)", () => {
    let llama: Llama | undefined;
    beforeAll(async () => {
        llama = await getLlama({gpu: false, build: "never", maxThreads: 2, logLevel: LlamaLogLevel.error});
    });
    afterAll(async () => {
        await llama?.dispose();
    });

    async function greedy(modelPath: string, prompt: string): Promise<{chat: string; completion: string; tokens: number[]}> {
        if (llama === undefined)
            throw new Error("no llama");
        const model = await llama.loadModel({modelPath});
        try {
            const context = await model.createContext({contextSize: 1024});
            const session = new LlamaChatSession({contextSequence: context.getSequence()});
            const chat = await session.prompt(prompt, {maxTokens: 8, temperature: 0});
            session.dispose();
            await context.dispose();

            const completionContext = await model.createContext({contextSize: 1024});
            const completion = new LlamaCompletion({contextSequence: completionContext.getSequence()});
            const text = await completion.generateCompletion(prompt, {maxTokens: 8, temperature: 0});
            const tokens = [...model.tokenize("Hello world, the quick brown fox.")];
            await completionContext.dispose();
            return {chat, completion: text, tokens};
        } finally {
            await model.dispose();
        }
    }

    it("loads and runs a Mixtral-style llama MoE and a qwen3moe model greedily and deterministically", async () => {
        const mixtral = join(dir, "chat-mixtral.gguf");
        await makeSyntheticModel(mixtral, {preset: "mixtral-mini", type: "q8_0", seed: 2});
        // Qwen3-30B-A3B's layout (q/k norms, head size ≠ embd/heads, expert width from expert_feed_forward_length), shrunk
        const qwen = join(dir, "chat-qwen3moe.gguf");
        await makeSyntheticModel(qwen, {preset: "qwen3-30b-a3b", layers: 2, embd: 128, ff: 384, heads: 4, kvHeads: 2, headDim: 64,
            vocab: 1024, experts: 16, expertsUsed: 4, expertFf: 64, contextLength: 4096, type: "q8_0", seed: 3});
        for (const path of [mixtral, qwen]) {
            const first = await greedy(path, "Hello");
            expect(await greedy(path, "Hello")).toEqual(first);
            expect(first.completion.length).toBeGreaterThan(0);
        }
    }, 120_000);

    for (const type of ["f32", "f16", "bf16", "q8_0", "q4_0"] as const) {
        it(`loads a tiny ${type} model, chats and generates greedily and deterministically`, async () => {
            const path = join(dir, `chat-${type}.gguf`);
            await makeSyntheticModel(path, {type, seed: 1});
            const first = await greedy(path, "Hello");
            const second = await greedy(path, "Hello");
            expect(first).toEqual(second);
            expect(first.chat.length).toBeGreaterThan(0);
            expect(first.completion.length).toBeGreaterThan(0);
            // "▁world" and "▁the" are whole pieces of the vocabulary
            expect(first.tokens.length).toBeLessThan("Hello world, the quick brown fox.".length);
        });
    }
});
