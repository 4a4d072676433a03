import {describe, expect, it} from "vitest";
import type {InspectedModel, InspectedTensor} from "../gguf/inspectGguf.js";
import {LLAMA_ARCH_TENSORS} from "../gguf/llamaArchTensors.js";
import {LLAMA_TENSORS} from "../gguf/llamaTensorTable.js";
import {isMatmulWeight, parseTensorName} from "../gguf/tensorRole.js";
import {plannerModelFrom} from "../planner/types.js";
import {distinctExpertOperators, distinctOperators, expertOperatorOf, operatorOf} from "./operatorShapes.js";

const tensor = (name: string, shape: number[], type = "f16") => ({name, type, shape});

describe("operatorOf", () => {
    it("is a dense matmul for a 2-D MUL_MAT weight: attention, MLA, SSM and short-conv projections alike", () => {
        expect(operatorOf(tensor("blk.0.attn_q.weight", [64, 128]))).toEqual({type: "f16", rows: 128, cols: 64});
        expect(operatorOf(tensor("blk.0.attn_kv_a_mqa.weight", [64, 96]))).toEqual({type: "f16", rows: 96, cols: 64});
        expect(operatorOf(tensor("blk.0.ssm_in.weight", [64, 320]))).toEqual({type: "f16", rows: 320, cols: 64});
        expect(operatorOf(tensor("blk.0.shortconv.out_proj.weight", [64, 64]))).toEqual({type: "f16", rows: 64, cols: 64});
        expect(operatorOf(tensor("blk.0.ffn_up_shexp.weight", [64, 32]))).toEqual({type: "f16", rows: 32, cols: 64});
    });

    it("prices MLA's per-head attn_k_b / attn_v_b as their n_head matmuls over the same tokens", () => {
        // {qk_nope, kv_lora_rank, n_head}: per head, q_nope (qk_nope) → kv_lora_rank (src/models/deepseek2.cpp)
        expect(operatorOf(tensor("blk.0.attn_k_b.weight", [16, 32, 4]))).toEqual({type: "f16", rows: 32 * 4, cols: 16});
        // {kv_lora_rank, v_head, n_head}: per head, kv_lora_rank → v_head
        expect(operatorOf(tensor("blk.0.attn_v_b.weight", [32, 24, 4]))).toEqual({type: "f16", rows: 24 * 4, cols: 32});
    });

    it("gives a 1-D MUL_MAT weight one output row, and a width-1 conv kernel its [cin, cout] matrix", () => {
        expect(operatorOf(tensor("blk.0.ffn_gate_inp_shexp.weight", [64], "f32"))).toEqual({type: "f32", rows: 1, cols: 64});
        expect(operatorOf(tensor("posnet.1.attn_q.weight", [1, 64, 48], "f32"))).toEqual({type: "f32", rows: 48, cols: 64});
    });

    it("is null for lookups, norms, conv kernels, SSM A/D, biases, experts and unknown names", () => {
        for (const t of [tensor("token_embd.weight", [64, 100]), tensor("blk.0.attn_norm.weight", [64]),
            tensor("blk.0.ssm_conv1d.weight", [4, 128]), tensor("blk.0.shortconv.conv.weight", [3, 64]), tensor("blk.0.ssm_a", [16, 128]),
            tensor("blk.0.ssm_d.weight", [128]), tensor("blk.0.attn_q.bias", [128]), tensor("blk.0.ffn_up_exps.weight", [64, 32, 4]),
            tensor("v.blk.0.attn_q.weight", [64, 64]), tensor("blk.0.mystery.weight", [64, 64])])
            expect(operatorOf(t), t.name).toBeNull();
    });
});

describe("expertOperatorOf", () => {
    it("is one expert's matrix of a 3-D MUL_MAT_ID weight, fused and chunked experts included", () => {
        expect(expertOperatorOf(tensor("blk.0.ffn_up_exps.weight", [64, 32, 4]))).toEqual({op: {type: "f16", rows: 32, cols: 64}, count: 4});
        expect(expertOperatorOf(tensor("blk.0.ffn_gate_up_exps.weight", [64, 64, 4]))).toEqual({op: {type: "f16", rows: 64, cols: 64}, count: 4});
        expect(expertOperatorOf(tensor("blk.0.ffn_down_chexps.weight", [32, 64, 8]))).toEqual({op: {type: "f16", rows: 64, cols: 32}, count: 8});
    });

    it("is null for arctic's 1-D ffn_norm_exps (a GGML_OP_MUL norm) and for dense weights", () => {
        expect(expertOperatorOf(tensor("blk.0.ffn_norm_exps.weight", [64], "f32"))).toBeNull();
        expect(expertOperatorOf(tensor("blk.0.ffn_up_shexp.weight", [64, 32]))).toBeNull();
        expect(distinctOperators([tensor("blk.0.ffn_norm_exps.weight", [64], "f32")])).toEqual([]);
        expect(distinctExpertOperators([tensor("blk.0.ffn_norm_exps.weight", [64], "f32")], 2)).toEqual([]);
    });
});

describe("every architecture llama.cpp loads", () => {
    const byId = new Map(LLAMA_TENSORS.map((t) => [t.id, t]));
    const dims = [64, 32, 4, 2];

    /** The weights of one architecture's loader, each with a shape of its dimension count and the table's op. */
    function archTensors(arch: string) {
        return (LLAMA_ARCH_TENSORS[arch] ?? []).map(([id, n]) => {
            const row = byId.get(id as (typeof LLAMA_TENSORS)[number]["id"])!;
            const name = row.name.replaceAll("%d", "0");
            // tn(LLM_TENSOR_X, "weight", i) names `<name>.weight`; only SSM A/D are created without a suffix (not matmuls)
            return {row, tensor: tensor(`${name}.weight`, dims.slice(0, n))};
        });
    }

    it("has an operator for each MUL_MAT / MUL_MAT_ID weight: none is left a fixed small tensor", () => {
        const unpriced: string[] = [];
        let matmuls = 0;
        for (const arch of Object.keys(LLAMA_ARCH_TENSORS)) {
            for (const {row, tensor: t} of archTensors(arch)) {
                if (row.op !== "MUL_MAT" && row.op !== "MUL_MAT_ID") continue;
                matmuls++;
                const priced = row.op === "MUL_MAT" ? operatorOf(t) != null : expertOperatorOf(t) != null;
                const role = parseTensorName(t.name).role;
                if (!priced || !isMatmulWeight(role)) unpriced.push(`${arch}: ${t.name} [${t.shape.join(", ")}] ${row.op}, role ${role}`);
            }
        }
        expect(matmuls).toBeGreaterThan(1000);
        expect(unpriced).toEqual([]);
    });

    it("gives the planner an op for every matmul weight and none for the rest", () => {
        for (const arch of Object.keys(LLAMA_ARCH_TENSORS)) {
            const tensors: InspectedTensor[] = archTensors(arch).map(({tensor: t}) => {
                const elements = t.shape.reduce((a, b) => a * b, 1);
                return {...t, ...parseTensorName(t.name), elements, bytes: 2 * elements};
            });
            const model = {layerCount: 1, embeddingLength: 64, feedForwardLength: 128, headCount: 4, headCountKv: 4, vocabSize: 100,
                expertUsedCount: 2, tensors, tensorBytes: 0} as unknown as InspectedModel;
            const ops = new Map(archTensors(arch).map(({row, tensor: t}) => [t.name, row.op]));
            for (const t of plannerModelFrom(model).tensors) {
                const op = ops.get(t.name);
                expect(t.op != null, `${arch}: ${t.name} (${op})`).toBe(op === "MUL_MAT" || op === "MUL_MAT_ID");
                expect(t.experts != null, `${arch}: ${t.name} (${op})`).toBe(op === "MUL_MAT_ID");
            }
        }
    });
});
