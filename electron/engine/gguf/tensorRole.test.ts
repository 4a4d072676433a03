import {describe, expect, it} from "vitest";
import {isMatmulWeight, parseTensorName, tensorRole} from "./tensorRole.js";
import type {TensorRole} from "./tensorRole.js";

describe("parseTensorName", () => {
    it.each<[string, number | null, TensorRole]>([
        ["token_embd.weight", null, "token_embd"],
        ["output_norm.weight", null, "output_norm"],
        ["output.weight", null, "output"],
        ["rope_freqs.weight", null, "rope_freqs"],
        ["blk.0.attn_norm.weight", 0, "attn_norm"],
        ["blk.12.attn_q.weight", 12, "attn_q"],
        ["blk.3.attn_k.weight", 3, "attn_k"],
        ["blk.3.attn_v.weight", 3, "attn_v"],
        ["blk.3.attn_qkv.weight", 3, "attn_qkv"],
        ["blk.3.attn_output.weight", 3, "attn_output"],
        ["blk.3.ffn_norm.weight", 3, "ffn_norm"],
        ["blk.3.ffn_gate.weight", 3, "ffn_gate"],
        ["blk.3.ffn_up.weight", 3, "ffn_up"],
        ["blk.3.ffn_down.weight", 3, "ffn_down"],
        ["blk.3.ffn_gate_inp.weight", 3, "ffn_gate_inp"],
        ["blk.47.ffn_gate_exps.weight", 47, "ffn_gate_exps"],
        ["blk.47.ffn_up_exps.weight", 47, "ffn_up_exps"],
        ["blk.47.ffn_down_exps.weight", 47, "ffn_down_exps"],
        ["blk.5.ffn_up_shexp.weight", 5, "ffn_up"],
        ["blk.5.ffn_down.7.weight", 5, "ffn_down_exps"],
        ["blk.5.ffn_gate_up_exps.weight", 5, "ffn_up_exps"],
        ["blk.0.attn_q_norm.weight", 0, "other"],
        ["blk.0.attn_q.bias", 0, "other"],
        ["blk.0.ssm_conv1d.weight", 0, "other"],
        ["v.blk.0.attn_q.weight", null, "other"],
        ["blk.x.attn_q.weight", null, "other"],
        ["blk.99999999999999999999.attn_q.weight", null, "attn_q"]
    ])("%s → layer %s, %s", (name, layer, role) => {
        expect(parseTensorName(name)).toEqual({layer, role});
        expect(tensorRole(name)).toBe(role);
    });
});

describe("isMatmulWeight", () => {
    it("is true for projections, FFN matrices, router, experts and output", () => {
        for (const role of ["attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output", "ffn_gate", "ffn_up", "ffn_down",
            "ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps", "output"] as const)
            expect(isMatmulWeight(role), role).toBe(true);
    });

    it("is false for norms, the embedding lookup, rope_freqs and other", () => {
        for (const role of ["attn_norm", "ffn_norm", "output_norm", "token_embd", "rope_freqs", "other"] as const)
            expect(isMatmulWeight(role), role).toBe(false);
    });
});
