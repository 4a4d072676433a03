import {describe, expect, it} from "vitest";
import {LLAMA_TENSORS} from "./llamaTensorTable.js";
import {isExpertRole, isMatmulOp, isMatmulWeight, parseTensorName, TENSOR_ROLES, tensorRole, weightInfoOf} from "./tensorRole.js";
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
        ["blk.5.ffn_gate_inp_shexp.weight", 5, "ffn_gate_inp"],
        ["blk.5.ffn_up_chexps.weight", 5, "ffn_up_exps"],
        ["blk.0.attn_q_norm.weight", 0, "attn_q_norm"],
        ["blk.0.attn_q.bias", 0, "other"],
        ["blk.0.ffn_up_exps.bias", 0, "other"],
        ["blk.0.attn_q_a.weight", 0, "attn_q_a"],
        ["blk.0.attn_kv_a_mqa.weight", 0, "attn_kv_a_mqa"],
        ["blk.0.attn_k_b.weight", 0, "attn_k_b"],
        ["blk.0.attn_v_b.weight", 0, "attn_v_b"],
        ["blk.0.attn_gate.weight", 0, "attn_gate"],
        ["blk.0.indexer.attn_k.weight", 0, "indexer.attn_k"],
        ["blk.0.ssm_conv1d.weight", 0, "ssm_conv1d"],
        ["blk.0.ssm_in.weight", 0, "ssm_in"],
        ["blk.0.ssm_a", 0, "ssm_a"],
        ["blk.0.shortconv.in_proj.weight", 0, "shortconv.in_proj"],
        ["blk.1.ffn_norm_exps.weight", 1, "ffn_norm_exps"],
        ["dec.blk.2.attn_q.weight", 2, "dec.attn_q"],
        ["blk.3.foo.weight", 3, "other"],
        ["v.blk.0.attn_q.weight", null, "other"],
        ["blk.x.attn_q.weight", null, "other"],
        ["blk.99999999999999999999.attn_q.weight", null, "attn_q"]
    ])("%s → layer %s, %s", (name, layer, role) => {
        expect(parseTensorName(name)).toEqual({layer, role});
        expect(tensorRole(name)).toBe(role);
    });
});

describe("isMatmulWeight", () => {
    it("is true for projections (attention, MLA, SSM, short-conv), FFN matrices, router, experts and output", () => {
        for (const role of ["attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output", "ffn_gate", "ffn_up", "ffn_down",
            "ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps", "output", "attn_q_a", "attn_q_b", "attn_kv_a_mqa",
            "attn_k_b", "attn_v_b", "attn_gate", "ssm_in", "ssm_x", "ssm_dt", "ssm_out", "shortconv.in_proj",
            "shortconv.out_proj", "indexer.proj"] as const)
            expect(isMatmulWeight(role), role).toBe(true);
    });

    it("is false for norms, the embedding lookup, conv kernels, SSM A/D, rope_freqs and other", () => {
        for (const role of ["attn_norm", "ffn_norm", "output_norm", "token_embd", "rope_freqs", "ssm_conv1d", "shortconv.conv",
            "ssm_a", "ssm_d", "ffn_norm_exps", "other"] as const)
            expect(isMatmulWeight(role), role).toBe(false);
    });
});

describe("isExpertRole", () => {
    it("is true for the routed experts only (GGML_OP_MUL_MAT_ID in llama.cpp's table)", () => {
        expect(TENSOR_ROLES.filter(isExpertRole)).toEqual(["ffn_gate_exps", "ffn_down_exps", "ffn_up_exps"]);
    });
});

describe("weightInfoOf", () => {
    it("gives the table's layer class and op", () => {
        expect(weightInfoOf("blk.3.ffn_up_exps.weight")).toEqual({role: "ffn_up_exps", layerClass: "repeating", op: "MUL_MAT_ID"});
        expect(weightInfoOf("blk.3.ffn_gate_up_exps.weight")).toEqual({role: "ffn_up_exps", layerClass: "repeating", op: "MUL_MAT_ID"});
        expect(weightInfoOf("blk.3.ffn_norm_exps.weight")).toEqual({role: "ffn_norm_exps", layerClass: "repeating", op: "MUL"});
        expect(weightInfoOf("token_embd.weight")).toEqual({role: "token_embd", layerClass: "input", op: "GET_ROWS"});
        expect(weightInfoOf("output.weight")).toEqual({role: "output", layerClass: "output", op: "MUL_MAT"});
        expect(weightInfoOf("blk.3.attn_q.bias")).toBeNull();
        expect(weightInfoOf("v.blk.0.attn_q.weight")).toBeNull();
    });

    it("finds every name of the table, and names shared by two llm_tensors agree on being a matmul weight", () => {
        for (const t of LLAMA_TENSORS) {
            const name = `${t.name.replaceAll("%d", "7")}.weight`;
            expect(weightInfoOf(name), name).not.toBeNull();
            expect(isMatmulOp(weightInfoOf(name)!.op), name).toBe(isMatmulOp(t.op));
        }
    });
});
