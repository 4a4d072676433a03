import type {GgufValidationErrorCode} from "../errors/GgufValidationError.js";
import {buildTinyGguf, GgufType, kv} from "./tinyGguf.js";
import type {TinyKv, TinyTensor} from "./tinyGguf.js";
import {tinyModelSpec} from "./tinyModelSpec.js";
import type {TinyModelOptions} from "./tinyModelSpec.js";

/**
 * Models that are well-formed GGUF but whose hyper-parameters or tensors llama.cpp cannot take: each one, loaded,
 * fails a `GGML_ASSERT` (aborting the whole process), runs away in memory, or fails later with a less clear error.
 * Listed as (name, expected code, bytes).
 */
export function hostileModelImages(): Array<readonly [string, GgufValidationErrorCode, Buffer]> {
    const image = (options: TinyModelOptions): Buffer => buildTinyGguf(tinyModelSpec(options)).bytes;
    const llama = (hparams: Record<string, TinyKv | null>, extra: TinyModelOptions = {}): Buffer => image({...extra, hparams});
    const moe = {count: 4, used: 2};
    const dropTensor = (name: string) => (tensors: TinyTensor[]): TinyTensor[] => tensors.filter((t) => t.name !== name);
    const reshape = (name: string, shape: readonly number[]) => (tensors: TinyTensor[]): TinyTensor[] =>
        tensors.map((t) => (t.name === name ? {...t, shape} : t));

    return [
        ["head_count 0", "bad-hparam", llama({"attention.head_count": kv.u32("llama.attention.head_count", 0)})],
        ["head_count_kv 0", "bad-hparam", llama({"attention.head_count_kv": kv.u32("llama.attention.head_count_kv", 0)})],
        ["feed_forward_length 0", "bad-hparam", llama({feed_forward_length: kv.u32("llama.feed_forward_length", 0)})],
        ["embedding_length 0", "bad-hparam", llama({embedding_length: kv.u32("llama.embedding_length", 0)})],
        ["per-layer head_count with a 0", "bad-hparam",
            llama({"attention.head_count": kv.u32s("llama.attention.head_count", [4, 0])})],
        ["per-layer head_count_kv too short", "bad-hparam",
            llama({"attention.head_count_kv": kv.u32s("llama.attention.head_count_kv", [2])})],
        ["head_count negative", "bad-hparam", llama({"attention.head_count": kv.i32("llama.attention.head_count", -4)})],
        ["head_count a string", "bad-hparam", llama({"attention.head_count": kv.str("llama.attention.head_count", "4")})],
        ["head_count not a multiple of head_count_kv", "bad-hparam",
            llama({"attention.head_count_kv": kv.u32("llama.attention.head_count_kv", 3)})],
        ["embedding_length not a multiple of head_count", "bad-hparam",
            image({heads: 4, kvHeads: 2, embd: 32, hparams: {
                "attention.head_count": kv.u32("llama.attention.head_count", 6),
                "attention.head_count_kv": kv.u32("llama.attention.head_count_kv", 2)
            }})],
        ["key_length differs from value_length", "bad-hparam", llama({
            "attention.key_length": kv.u32("llama.attention.key_length", 8),
            "attention.value_length": kv.u32("llama.attention.value_length", 16)
        })],
        ["rope dimension_count differs from the head size", "bad-hparam",
            llama({"rope.dimension_count": kv.u32("llama.rope.dimension_count", 6)})],
        ["unknown rope scaling type", "bad-hparam", llama({"rope.scaling.type": kv.str("llama.rope.scaling.type", "spiral")})],
        ["block_count missing", "missing-hparam", llama({block_count: null})],
        ["block_count a float", "bad-hparam", llama({block_count: kv.f32("llama.block_count", 2)})],
        ["block_count 0", "bad-hparam", llama({block_count: kv.u32("llama.block_count", 0)})],
        ["block_count 1000 with 2 blocks", "bad-hparam", llama({block_count: kv.u32("llama.block_count", 1000)})],
        ["block_count 4294967295", "bad-hparam", llama({block_count: kv.u32("llama.block_count", 0xffff_ffff)})],
        ["block_count 2^64-1 as uint64", "bad-hparam", llama({block_count: kv.u64("llama.block_count", 2n ** 64n - 1n)})],
        ["block_count 3 with 2 blocks", "layer-mismatch", llama({block_count: kv.u32("llama.block_count", 3)})],
        ["blk.1 tensors with block_count 1", "layer-mismatch", llama({block_count: kv.u32("llama.block_count", 1)})],
        ["unknown architecture, block_count 4294967295", "bad-hparam",
            image({arch: "futurenet", hparams: {block_count: kv.u32("futurenet.block_count", 0xffff_ffff)}})],
        ["unknown architecture, blk index past block_count", "layer-mismatch",
            image({arch: "futurenet", layers: 3, hparams: {block_count: kv.u32("futurenet.block_count", 2)}})],
        ["nextn_predict_layers above block_count", "bad-hparam",
            llama({nextn_predict_layers: kv.u32("llama.nextn_predict_layers", 3)})],
        ["attn_k shape inconsistent with the head counts", "shape-mismatch",
            image({tensors: reshape("blk.1.attn_k.weight", [32, 32])})],
        ["token_embd shape inconsistent with the vocabulary", "shape-mismatch",
            image({tensors: reshape("token_embd.weight", [32, 7])})],
        ["ffn_down shape inconsistent with feed_forward_length", "shape-mismatch",
            image({tensors: reshape("blk.0.ffn_down.weight", [32, 64])})],
        ["a layer without its attn_q", "missing-tensor", image({tensors: dropTensor("blk.1.attn_q.weight")})],
        ["expert_count without expert tensors", "bad-experts",
            llama({expert_count: kv.u32("llama.expert_count", 4), expert_used_count: kv.u32("llama.expert_used_count", 2)})],
        ["expert tensors holding 3 experts, expert_count 4", "bad-experts",
            image({experts: moe, tensors: reshape("blk.0.ffn_up_exps.weight", [32, 64, 3])})],
        ["expert tensors without expert_count", "bad-experts",
            image({experts: moe, hparams: {expert_count: null, expert_used_count: null}})],
        ["expert_used_count above expert_count", "bad-experts",
            image({experts: moe, hparams: {expert_used_count: kv.u32("llama.expert_used_count", 5)}})],
        ["expert_used_count 0 with experts", "bad-experts",
            image({experts: moe, hparams: {expert_used_count: kv.u32("llama.expert_used_count", 0)}})],
        ["expert_count 4096", "bad-experts",
            image({experts: moe, hparams: {expert_count: kv.u32("llama.expert_count", 4096)}})],
        ["expert_group_count not below expert_count", "bad-experts",
            image({experts: moe, hparams: {expert_group_count: kv.u32("llama.expert_group_count", 4)}})],
        ["qwen3moe without experts", "bad-experts", image({arch: "qwen3moe"})],
        ["qwen3moe expert width inconsistent", "shape-mismatch",
            image({arch: "qwen3moe", experts: {...moe, ff: 16}, tensors: reshape("blk.1.ffn_down_exps.weight", [32, 32, 4])})],
        ["general.architecture not a string", "bad-hparam",
            buildTinyGguf({...tinyModelSpec(), kvs: [kv.raw("general.architecture", (w) => w.u32(GgufType.uint32).u32(1)),
                ...(tinyModelSpec().kvs ?? []).slice(1)]}).bytes]
    ];
}
