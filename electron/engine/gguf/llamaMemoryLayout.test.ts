// The per-layer memory llama.cpp creates, read from metadata the way its loaders read it (llamaMemoryLayout.ts), for
// real models' metadata shapes (the keys their converters write; values shrunk).
import {describe, expect, it} from "vitest";
import {llamaMemoryLayout, type MemoryLayout} from "./llamaMemoryLayout.js";
import type {GgufMetadataValue} from "./types/ValidatedGguf.js";

function metadata(arch: string, keys: Record<string, number | number[] | boolean[]>): Map<string, GgufMetadataValue> {
    const map = new Map<string, GgufMetadataValue>([["general.architecture", {type: "string", value: arch}]]);
    for (const [key, value] of Object.entries(keys)) {
        const entry: GgufMetadataValue = !Array.isArray(value) ? {type: "uint32", value}
            : typeof value[0] === "boolean" ? {type: "array", elementType: "bool", value: value as boolean[]}
                : {type: "array", elementType: "int32", value: Int32Array.from(value as number[])};
        map.set(`${arch}.${key}`, entry);
    }
    return map;
}

function layout(arch: string, keys: Record<string, number | number[] | boolean[]>): MemoryLayout {
    return llamaMemoryLayout(metadata(arch, keys), arch)!;
}

const rows = (l: MemoryLayout) => l.layers.map((layer) => [layer.kElements, layer.vElements, layer.windowed, layer.recurrentElements, layer.attention != null]);

describe("llamaMemoryLayout", () => {
    it("a plain GQA model: K and V rows of key_length × head_count_kv in every layer", () => {
        const l = layout("llama", {block_count: 2, embedding_length: 256, "attention.head_count": 8, "attention.head_count_kv": 2});
        expect(rows(l)).toEqual([[64, 64, false, 0, true], [64, 64, false, 0, true]]);
        expect(l.vElementsMax).toBe(64);
        expect(l.window).toBeNull();
    });

    it("DeepSeek-V2 MLA: one latent row (kv_lora_rank + rope), no V; the MTP layer has no memory and no attention", () => {
        const l = layout("deepseek2", {
            block_count: 3, nextn_predict_layers: 1, embedding_length: 256, "attention.head_count": 16, "attention.head_count_kv": 1,
            "attention.key_length": 576, "attention.value_length": 512, "attention.key_length_mla": 192, "attention.value_length_mla": 128
        });
        expect(rows(l)).toEqual([[576, 0, false, 0, true], [576, 0, false, 0, true], [0, 0, false, 0, false]]);
        expect(l.trunkLayers).toBe(2);
        expect(l.layers[0]!.attention).toEqual({heads: 16, kvHeads: 1, headK: 576, headV: 512, cellElements: 576, window: null});
    });

    it("DeepSeek-V3.2 sparse attention: the indexer's key row beside the latent", () => {
        const l = layout("deepseek32", {
            block_count: 1, embedding_length: 256, "attention.head_count": 16, "attention.head_count_kv": 1, "attention.key_length": 576,
            "attention.value_length": 512, "attention.key_length_mla": 192, "attention.value_length_mla": 128, "attention.indexer.key_length": 128
        });
        expect(rows(l)).toEqual([[704, 0, false, 0, true]]);
    });

    it("indexer caches: hy_v4's listed layers (K only, beside the latent), MiniMax-M3's K and V rows after the dense layers", () => {
        const hy = layout("hy_v4", {
            block_count: 2, embedding_length: 256, "attention.head_count": 16, "attention.head_count_kv": 1, "attention.key_length": 576,
            "attention.value_length": 512, "attention.key_length_mla": 192, "attention.value_length_mla": 128,
            "attention.indexer.key_length": 128, "attention.indexer.top_k": 64, "attention.indexer.types": [1, 0]
        });
        expect(rows(hy)).toEqual([[704, 0, false, 0, true], [576, 0, false, 0, true]]);
        const mm = layout("minimax-m3", {block_count: 2, leading_dense_block_count: 1, embedding_length: 256, "attention.head_count": 2,
            "attention.head_count_kv": 2, "attention.key_length": 128, "attention.value_length": 128, "attention.indexer.key_length": 128});
        expect(rows(mm)).toEqual([[256, 256, false, 0, true], [384, 384, false, 0, true]]);
    });

    it("Gemma 3: every sixth layer global, the rest sliding-window; no window in the file, no SWA", () => {
        const keys = {block_count: 7, embedding_length: 256, "attention.head_count": 4, "attention.head_count_kv": 1, "attention.key_length": 64,
            "attention.value_length": 64, context_length: 8192};
        const swa = layout("gemma3", {...keys, "attention.sliding_window": 512});
        expect(swa.layers.map((layer) => layer.windowed)).toEqual([true, true, true, true, true, false, true]);
        expect(swa.window).toBe(512);
        expect(swa.swaBatchPad).toBe(true);
        expect(layout("gemma3", keys).layers.some((layer) => layer.windowed)).toBe(false);
    });

    it("gpt-oss: a sliding_window_pattern array in the file replaces the default pattern", () => {
        const l = layout("gpt-oss", {block_count: 3, embedding_length: 256, "attention.head_count": 4, "attention.head_count_kv": 1,
            "attention.sliding_window": 128, "attention.sliding_window_pattern": [false, true, true]});
        expect(l.layers.map((layer) => layer.windowed)).toEqual([false, true, true]);
    });

    it("Llama 4: chunked attention with llama.cpp's fixed 8192 window, none when the file's window is 0", () => {
        const keys = {block_count: 4, embedding_length: 256, "attention.head_count": 4, "attention.head_count_kv": 1};
        const chunked = layout("llama4", keys);
        expect(chunked.layers.map((layer) => layer.windowed)).toEqual([true, true, true, false]);
        expect(chunked.window).toBe(8192);
        expect(layout("llama4", {...keys, "attention.sliding_window": 0}).window).toBeNull();
    });

    it("Mamba: a conv and SSM state per layer, no KV cache", () => {
        const l = layout("mamba", {block_count: 2, embedding_length: 128, "ssm.conv_kernel": 4, "ssm.inner_size": 256, "ssm.state_size": 16});
        expect(rows(l)).toEqual([[0, 0, false, 3 * 256 + 16 * 256, false], [0, 0, false, 3 * 256 + 16 * 256, false]]);
    });

    it("RWKV-6: token shifts and the WKV state", () => {
        const l = layout("rwkv6", {block_count: 1, embedding_length: 128, "wkv.head_size": 64});
        expect(rows(l)).toEqual([[0, 0, false, 2 * 128 + 128 * 64, false]]);
    });

    it("Jamba: attention where head_count_kv > 0, Mamba state where it is 0", () => {
        const l = layout("jamba", {block_count: 2, embedding_length: 256, "attention.head_count": 4, "attention.head_count_kv": [0, 2],
            "ssm.conv_kernel": 4, "ssm.inner_size": 512, "ssm.state_size": 16});
        expect(rows(l)).toEqual([[0, 0, false, 3 * 512 + 16 * 512, false], [128, 128, false, 0, true]]);
    });

    it("Falcon-H1: attention and an SSM state in every layer (with groups in the conv state)", () => {
        const l = layout("falcon-h1", {block_count: 1, embedding_length: 256, "attention.head_count": 4, "attention.head_count_kv": 2,
            "ssm.conv_kernel": 4, "ssm.inner_size": 512, "ssm.state_size": 16, "ssm.group_count": 2});
        expect(rows(l)).toEqual([[128, 128, false, 3 * (512 + 2 * 2 * 16) + 16 * 512, true]]);
    });

    it("Nemotron-H: attention layers, Mamba layers and FFN-only layers with neither", () => {
        const l = layout("nemotron_h", {block_count: 3, embedding_length: 256, "attention.head_count": [4, 0, 0], "attention.head_count_kv": [2, 0, 0],
            feed_forward_length: [0, 0, 512], "ssm.conv_kernel": 4, "ssm.inner_size": 256, "ssm.state_size": 16, "ssm.group_count": 1});
        expect(rows(l)).toEqual([[128, 128, false, 0, true], [0, 0, false, 3 * (256 + 2 * 16) + 16 * 256, false], [0, 0, false, 0, false]]);
    });

    it("Qwen3-Next: full attention every full_attention_interval-th layer, the gated delta net's state elsewhere", () => {
        const l = layout("qwen3next", {block_count: 4, embedding_length: 256, "attention.head_count": 4, "attention.head_count_kv": 2,
            "attention.key_length": 64, "attention.value_length": 64, "ssm.conv_kernel": 4, "ssm.inner_size": 256, "ssm.state_size": 64, "ssm.group_count": 2});
        const state = 3 * (256 + 2 * 2 * 64) + 64 * 256;
        expect(rows(l)).toEqual([[0, 0, false, state, false], [0, 0, false, state, false], [0, 0, false, state, false], [128, 128, false, 0, true]]);
    });

    it("LFM2: short convolutions where head_count_kv is 0, sliding-window attention elsewhere when a window is set", () => {
        const l = layout("lfm2", {block_count: 2, embedding_length: 256, "attention.head_count": 4, "attention.head_count_kv": [0, 2],
            "shortconv.l_cache": 3, "attention.sliding_window": 64, context_length: 4096});
        expect(rows(l)).toEqual([[0, 0, false, 256 * 2, false], [128, 128, true, 0, true]]);
    });

    it("Gemma 3n's layers that share another's KV cache own none, encoders have no memory", () => {
        expect(layout("bert", {block_count: 1, embedding_length: 256, "attention.head_count": 4}).layers[0]!.kElements).toBe(0);
        const l = layout("gemma3n", {block_count: 22, embedding_length: 256, "attention.head_count": 4, "attention.head_count_kv": 1,
            "attention.key_length": 64, "attention.value_length": 64, "attention.sliding_window": 512});
        // layers from 20 on reuse the caches of earlier layers (llama_hparams::has_kv, n_layer_kv_from_start = 20)
        expect(l.layers.slice(19).map((layer) => layer.kElements)).toEqual([64, 0, 0]);
        expect(l.layers[21]!.attention).not.toBeNull();
    });
});
