import {mkdtemp, rm, writeFile} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../../writer/makeSyntheticModel.js";
import type {SyntheticModelPresetName} from "../../writer/makeSyntheticModel.js";
import {GgufValidationError} from "../errors/GgufValidationError.js";
import {buildTinyGguf, kv} from "../testing/tinyGguf.js";
import type {TinyGgufSpec, TinyTensor} from "../testing/tinyGguf.js";
import {tinyModelSpec} from "../testing/tinyModelSpec.js";
import {validateGgufFileSync} from "../validateGguf.js";

let dir: string;
let fileCount = 0;

async function write(spec: TinyGgufSpec): Promise<string> {
    const path = join(dir, `model-${fileCount++}.gguf`);
    await writeFile(path, buildTinyGguf(spec).bytes);
    return path;
}

/** An arctic model as `load_arch_tensors` of src/models/arctic.cpp creates it, `experts` experts of which 1 is used per token. */
function arcticSpec(experts: number, rewrite: (tensors: TinyTensor[]) => TinyTensor[] = (tensors) => tensors): TinyGgufSpec {
    const embd = 32;
    return tinyModelSpec({
        arch: "arctic", experts: {count: experts, used: 1},
        tensors: (tensors) => rewrite(tensors.flatMap((tensor) => {
            const layer = /^blk\.(\d+)\.ffn_norm\.weight$/.exec(String(tensor.name))?.[1];
            if (layer === undefined)
                return [tensor];
            const dense = ["ffn_gate", "ffn_up", "ffn_down"].map((role) => ({...tensor, name: `blk.${layer}.${role}.weight`, shape: [embd, embd]}));
            return [tensor, ...dense, {...tensor, name: `blk.${layer}.ffn_norm_exps.weight`, shape: [embd]}];
        }))
    });
}

function rejection(path: string): GgufValidationError {
    try {
        validateGgufFileSync(path);
    } catch (error) {
        if (error instanceof GgufValidationError)
            return error;
        throw error;
    }
    throw new Error("expected a GgufValidationError, but the file was accepted");
}

beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "model-hparams-"));
});

afterAll(async () => {
    await rm(dir, {recursive: true, force: true});
});

describe("checkModelHparams accepts real model layouts", () => {
    it.each([
        ["llama", {}],
        ["llama without head_count_kv (defaults to head_count)", {kvHeads: 4, hparams: {"attention.head_count_kv": null}}],
        ["llama with per-layer head counts", {
            hparams: {
                "attention.head_count": kv.u32s("llama.attention.head_count", [4, 8]),
                "attention.head_count_kv": kv.i32s("llama.attention.head_count_kv", [2, 4]),
                feed_forward_length: kv.u32s("llama.feed_forward_length", [64, 128])
            }
        }],
        ["llama MoE (Mixtral layout)", {experts: {count: 4, used: 2}}],
        ["qwen2", {arch: "qwen2"}],
        ["qwen3", {arch: "qwen3"}],
        ["qwen3moe", {arch: "qwen3moe", experts: {count: 8, used: 2, ff: 16}}],
        ["qwen3moe deriving the expert width from feed_forward_length / expert_used_count", {
            arch: "qwen3moe", ff: 64, experts: {count: 8, used: 2, ff: 32}, hparams: {expert_feed_forward_length: null}
        }],
        ["an unknown architecture with zero heads and feed-forward (as Mamba writes them)", {
            arch: "futurenet", hparams: {
                "attention.head_count": kv.u32("futurenet.attention.head_count", 0),
                "attention.head_count_kv": kv.u32("futurenet.attention.head_count_kv", 0),
                feed_forward_length: kv.u32("futurenet.feed_forward_length", 0)
            }
        }]
    ] as const)("%s", async (_, options) => {
        const path = await write(tinyModelSpec(options));
        expect(validateGgufFileSync(path).tensors.length).toBeGreaterThan(10);
    });

    it("accepts fused attn_qkv tensors in place of attn_q/k/v", async () => {
        const path = await write(tinyModelSpec({
            tensors: (tensors) => tensors.flatMap((tensor) => {
                const match = /^blk\.(\d+)\.attn_([qkv])\.weight$/.exec(String(tensor.name));
                if (match === null)
                    return [tensor];
                return match[2] === "q" ? [{...tensor, name: `blk.${match[1]}.attn_qkv.weight`, shape: [32, 32 + 16 + 16]}] : [];
            })
        }));
        expect(validateGgufFileSync(path).tensors.some((tensor) => tensor.name === "blk.1.attn_qkv.weight")).toBe(true);
    });

    it("accepts arctic's layout: a 1-D ffn_norm_exps norm beside the expert tensors (src/models/arctic.cpp)", async () => {
        // arctic: a dense FFN {n_embd, n_embd} and, after its own norm ffn_norm_exps {n_embd}, the experts {…, n_expert}
        const path = await write(arcticSpec(2));
        const gguf = validateGgufFileSync(path);
        expect(gguf.tensors.find((tensor) => tensor.name === "blk.1.ffn_norm_exps.weight")?.shape).toEqual([32n]);
    });

    it("still refuses arctic expert tensors that hold another number of experts than expert_count", async () => {
        const path = await write(arcticSpec(2, (tensors) => tensors.map((t) => t.name === "blk.0.ffn_down_exps.weight" ? {...t, shape: [64, 32, 3]} : t)));
        expect(rejection(path).message).toBe('tensor "blk.0.ffn_down_exps.weight" holds 3 experts, but "arctic.expert_count" is 2');
    });

    it.each(["tiny", "small", "llama3.2-3b", "llama3-8b", "mixtral-mini", "qwen3-30b-a3b"] as const)("accepts what makeSyntheticModel writes for the %s preset", async (preset: SyntheticModelPresetName) => {
        // The preset's real widths and head counts; one layer and a small vocabulary keep the file small (and for
        // Qwen3-30B-A3B 16 of its 128 experts: one layer of all of them is 600 MiB at q4_0).
        const path = join(dir, `synthetic-${preset}.gguf`);
        const small = preset === "tiny" ? {} : {layers: 1, vocab: 512, ...(preset === "qwen3-30b-a3b" ? {experts: 16} : {})};
        await makeSyntheticModel(path, {preset, type: "q4_0", ...small});
        const gguf = validateGgufFileSync(path);
        expect(gguf.metadata.get("general.architecture")).toEqual({type: "string", value: preset === "qwen3-30b-a3b" ? "qwen3moe" : "llama"});
        await rm(path);
    }, 60_000);
});

describe("checkModelHparams on huge declared counts", () => {
    it("rejects block_count 4294967295 in bounded time, without iterating over the layers", async () => {
        const path = await write(tinyModelSpec({hparams: {block_count: kv.u32("llama.block_count", 0xffff_ffff)}}));
        rejection(path); // warm-up
        const started = performance.now();
        for (let i = 0; i < 10; i++)
            expect(rejection(path).message).toBe('"llama.block_count" declares 4294967295 layers, but llama.cpp needs between 1 and 512');
        // a loop over 2^32 layers would take minutes; the margin is a busy machine's
        expect((performance.now() - started) / 10).toBeLessThan(1_000);
    });

    it("rejects a per-layer array longer than the layers without reading it into per-layer state", async () => {
        const path = await write(tinyModelSpec({
            hparams: {"attention.head_count": kv.u32s("llama.attention.head_count", new Array<number>(100_000).fill(4))}
        }));
        const started = performance.now();
        expect(rejection(path).code).toBe("bad-hparam");
        expect(performance.now() - started).toBeLessThan(2_000);
    });
});
