import {describe, expect, it} from "vitest";
import type {InspectedModel} from "../gguf/inspectGguf.js";
import {LLAMA_TENSORS} from "../gguf/llamaTensorTable.js";
import {isMatmulOp, parseTensorName, TENSOR_ROLES, weightInfoOf} from "../gguf/tensorRole.js";
import {executionOrder, NORM_POSITIONS, ROLE_ORDER, WEIGHT_POSITIONS} from "./costModel.js";
import {plannerModelFrom, type PlannerModel} from "./types.js";

/** A planner model of these tensors (`name: shape`), one layer unless the names say more. */
function modelOf(shapes: Record<string, number[]>, layerCount = 1): PlannerModel {
    const tensors = Object.entries(shapes).map(([name, shape]) => {
        const elements = shape.reduce((a, b) => a * b, 1);
        return {name, ...parseTensorName(name), type: "f16", shape, elements, bytes: 2 * elements};
    });
    return plannerModelFrom({layerCount, embeddingLength: 64, feedForwardLength: 128, headCount: 4, headCountKv: 4, vocabSize: 100,
        expertUsedCount: 2, tensors, tensorBytes: 0} as unknown as InspectedModel);
}

/**
 * The execution order as names: `@attn.N` for layer N's attention node, `@pin.N.<role>` for a node pinned to layer N's
 * device, else the tensor's name without `.weight`.
 */
function order(model: PlannerModel, options: {pins?: boolean} = {}): string[] {
    return executionOrder(model, options).map((n) => n.kind === "attn" ? `@attn.${n.layer}` : n.kind === "pin" ? `@pin.${n.layer}.${n.what}`
        : n.tensor.name.replace(/\.weight$/, ""));
}

describe("ROLE_ORDER", () => {
    it("names roles of llama.cpp's tensor table only", () => {
        const roles = new Set<string>(TENSOR_ROLES);
        expect(ROLE_ORDER.filter((role) => role !== "@attn" && !roles.has(role))).toEqual([]);
    });

    it("places every matmul role of a layer (blk.N) before or after the attention node", () => {
        const layerMatmulRoles = new Set(LLAMA_TENSORS.filter((t) => isMatmulOp(t.op) && t.name.includes("blk.%d."))
            .map((t) => weightInfoOf(`${t.name.replaceAll("%d", "0")}.weight`)!.role));
        expect([...layerMatmulRoles].filter((role) => !ROLE_ORDER.includes(role))).toEqual([]);
    });
});

describe("NORM_POSITIONS and WEIGHT_POSITIONS", () => {
    it("name roles of llama.cpp's tensor table only, each beside a role of ROLE_ORDER", () => {
        const roles = new Set<string>(TENSOR_ROLES);
        for (const table of [NORM_POSITIONS, WEIGHT_POSITIONS])
            for (const [role, [anchor]] of Object.entries(table)) {
                expect(roles.has(role), role).toBe(true);
                expect(ROLE_ORDER.includes(anchor), anchor).toBe(true);
            }
    });
});

describe("executionOrder with the nodes llama.cpp pins to a layer's device", () => {
    it("a llama layer: the input norm first, the FFN norm between the attention's output projection and the FFN", () => {
        const model = modelOf({
            "blk.0.attn_norm.weight": [64], "blk.0.attn_q.weight": [64, 64], "blk.0.attn_k.weight": [64, 64], "blk.0.attn_v.weight": [64, 64],
            "blk.0.attn_output.weight": [64, 64], "blk.0.ffn_norm.weight": [64], "blk.0.ffn_gate.weight": [64, 128], "blk.0.ffn_up.weight": [64, 128],
            "blk.0.ffn_down.weight": [128, 64], "output_norm.weight": [64], "output.weight": [64, 100]
        });
        expect(order(model, {pins: true})).toEqual(["@pin.0.attn_norm", "blk.0.attn_q", "blk.0.attn_k", "blk.0.attn_v", "@attn.0", "blk.0.attn_output",
            "@pin.0.ffn_norm", "blk.0.ffn_gate", "blk.0.ffn_up", "blk.0.ffn_down", "output"]);
        // without pins, as before
        expect(order(model)).toEqual(["blk.0.attn_q", "blk.0.attn_k", "blk.0.attn_v", "@attn.0", "blk.0.attn_output", "blk.0.ffn_gate", "blk.0.ffn_up",
            "blk.0.ffn_down", "output"]);
    });

    it("gemma2's post-norms after the projection they normalise, and a short convolution's kernel right after its input projection", () => {
        const gemma = modelOf({
            "blk.0.attn_norm.weight": [64], "blk.0.attn_q.weight": [64, 64], "blk.0.attn_output.weight": [64, 64], "blk.0.post_attention_norm.weight": [64],
            "blk.0.ffn_norm.weight": [64], "blk.0.ffn_down.weight": [128, 64], "blk.0.post_ffw_norm.weight": [64]
        });
        expect(order(gemma, {pins: true})).toEqual(["@pin.0.attn_norm", "blk.0.attn_q", "@attn.0", "blk.0.attn_output", "@pin.0.post_attention_norm",
            "@pin.0.ffn_norm", "blk.0.ffn_down", "@pin.0.post_ffw_norm"]);
        const conv = modelOf({"blk.0.shortconv.in_proj.weight": [64, 192], "blk.0.shortconv.conv.weight": [3, 64], "blk.0.shortconv.out_proj.weight": [64, 64]});
        expect(order(conv, {pins: true})).toEqual(["blk.0.shortconv.in_proj", "blk.0.shortconv.conv", "@attn.0", "blk.0.shortconv.out_proj"]);
    });
});

describe("executionOrder", () => {
    it("runs MLA's projections before the attention and attn_v_b after it, before attn_output (src/models/deepseek2.cpp)", () => {
        const model = modelOf({
            "blk.0.attn_output.weight": [64, 64], "blk.0.attn_v_b.weight": [16, 16, 4], "blk.0.ffn_down_exps.weight": [32, 64, 4],
            "blk.0.ffn_up_shexp.weight": [64, 32], "blk.0.attn_k_b.weight": [16, 16, 4], "blk.0.attn_kv_a_mqa.weight": [64, 24],
            "blk.0.attn_q_b.weight": [32, 80], "blk.0.attn_q_a.weight": [64, 32], "blk.0.ffn_gate_inp.weight": [64, 4],
            "blk.0.attn_kv_a_norm.weight": [16]
        });
        expect(order(model)).toEqual(["blk.0.attn_q_a", "blk.0.attn_q_b", "blk.0.attn_kv_a_mqa", "blk.0.attn_k_b", "@attn.0", "blk.0.attn_v_b",
            "blk.0.attn_output", "blk.0.ffn_gate_inp", "blk.0.ffn_down_exps", "blk.0.ffn_up_shexp"]);
    });

    it("runs an SSM layer's input projections before its scan and ssm_out after (src/models/mamba-base.cpp)", () => {
        const model = modelOf({
            "blk.0.ssm_out.weight": [128, 64], "blk.0.ssm_dt.weight": [4, 128], "blk.0.ssm_x.weight": [128, 36],
            "blk.0.ssm_in.weight": [64, 256], "blk.0.ssm_conv1d.weight": [4, 128], "blk.0.ssm_a": [16, 128], "blk.0.ssm_d": [128]
        });
        expect(order(model)).toEqual(["blk.0.ssm_in", "blk.0.ssm_x", "blk.0.ssm_dt", "@attn.0", "blk.0.ssm_out"]);
    });

    it("runs a short-conv layer's in_proj, the conv, out_proj, then the FFN (src/models/lfm2.cpp)", () => {
        const model = modelOf({
            "blk.0.ffn_down.weight": [128, 64], "blk.0.shortconv.out_proj.weight": [64, 64], "blk.0.shortconv.conv.weight": [3, 64],
            "blk.0.shortconv.in_proj.weight": [64, 192], "blk.0.ffn_up.weight": [64, 128]
        });
        expect(order(model)).toEqual(["blk.0.shortconv.in_proj", "@attn.0", "blk.0.shortconv.out_proj", "blk.0.ffn_up", "blk.0.ffn_down"]);
    });

    it("prices the weight ops outside the layers: gemma3n's input projections first, heads after the layers, output last", () => {
        const model = modelOf({
            "output.weight": [64, 100], "altup_unembd_proj.weight": [64, 64, 3], "blk.0.attn_q.weight": [64, 64],
            "per_layer_model_proj.weight": [64, 256], "altup_proj.weight": [64, 64, 3], "token_embd.weight": [64, 100]
        });
        expect(order(model)).toEqual(["per_layer_model_proj", "altup_proj", "blk.0.attn_q", "@attn.0", "altup_unembd_proj", "output"]);
    });
});
