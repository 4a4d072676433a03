import {weightInfoOf} from "../gguf/tensorRole.js";
import type {ExpertOperatorShape, OperatorShape} from "./MachineProfile.js";

/** The tensor fields operator extraction needs (structurally the inspector's `InspectedTensor`). */
export type ShapedTensor = {readonly name: string; readonly type: string; readonly shape: readonly number[]};

/**
 * The dense weight operator a tensor feeds, from the op llama.cpp's table gives its name (GGML_OP_MUL_MAT), or `null`
 * for any other tensor (norms, `token_embd`'s GET_ROWS, conv kernels, SSM A/D, biases, and expert weights, which
 * {@link expertOperatorOf} handles). `rows × cols` multiply-adds per token, `cols` the row length (`ne[0]`):
 * - 2-D `[cols, rows]`: one matmul.
 * - 1-D `[cols]`: one output row (the shared-expert gate `ffn_gate_inp_shexp`, a scalar per token).
 * - 3-D `[cols, rows, heads]`, multiplied per head (MLA's `attn_k_b` `{qk_nope, kv_lora_rank, n_head}` and `attn_v_b`
 *   `{kv_lora_rank, v_head, n_head}`, grouped `attn_output_a`, gemma3n's altup projections): ggml_mul_mat
 *   broadcasts the weight's `ne[2]` over the activations' (source: build_attn_mla in src/models/deepseek2.cpp, wk_b ×
 *   q_nope permuted to `{qk_nope, n_tokens, n_head}`; wv_b in llm_graph_context::build_attn_mha): `heads` matmuls of
 *   `[cols, rows]` over the same tokens in one graph node, priced as the one `[cols, rows × heads]` matmul of the same
 *   bytes and multiply-adds.
 * - 3-D `[1, cin, cout]`: a width-1 conv kernel (wavtokenizer's posnet, ggml_conv_1d = im2col + mul_mat), `[cin, cout]`.
 */
export function operatorOf(tensor: ShapedTensor): OperatorShape | null {
    if (weightInfoOf(tensor.name)?.op !== "MUL_MAT") return null;
    const shape = tensor.shape.length === 3 && tensor.shape[0] === 1 ? tensor.shape.slice(1) : tensor.shape;
    const [cols, ...rest] = shape;
    if (cols == null) return null;
    return {type: tensor.type, rows: rest.reduce((product, n) => product * n, 1), cols};
}

/** A 3-D expert weight (GGML_OP_MUL_MAT_ID): one expert's matrix and the number of experts. */
export type ExpertOperator = {readonly op: OperatorShape; readonly count: number};

/**
 * The per-expert operator of an expert weight `[cols, rows, experts]` (a 3-D tensor llama.cpp's table gives
 * GGML_OP_MUL_MAT_ID: `ffn_{gate,up,down,gate_up}_exps`, `*_chexps`), or `null` for any other tensor — a 1-D norm
 * named like an expert tensor (arctic's `ffn_norm_exps`, a GGML_OP_MUL) included. MUL_MAT_ID multiplies each token by
 * the matrices of its selected experts (source: llm_graph_context::build_moe_ffn, ggml_mul_mat_id).
 */
export function expertOperatorOf(tensor: ShapedTensor): ExpertOperator | null {
    if (weightInfoOf(tensor.name)?.op !== "MUL_MAT_ID" || tensor.shape.length !== 3) return null;
    const [cols, rows, count] = tensor.shape as [number, number, number];
    return {op: {type: tensor.type, rows, cols}, count};
}

/**
 * The distinct weight operators (ggml type, rows, cols) of a model: what the profiler times. A dense Llama has about
 * seven (q, k=v, o, gate=up, down, output), whatever its depth; a MoE adds its router and one expert's gate=up and down.
 */
export function distinctOperators(tensors: readonly ShapedTensor[]): OperatorShape[] {
    const seen = new Map<string, OperatorShape>();
    for (const tensor of tensors) {
        // an expert weight is timed as one expert's matrix: MUL_MAT_ID runs that matmul per selected expert
        const op = operatorOf(tensor) ?? expertOperatorOf(tensor)?.op;
        if (op != null) seen.set(`${op.type}:${op.rows}x${op.cols}`, op);
    }
    return [...seen.values()];
}

/**
 * The distinct expert weights of a model as MUL_MAT_ID operators (one expert's matrix, `count` experts, `used` per
 * token): what the profiler times as GGML_OP_MUL_MAT_ID. `used` is the model's `expert_used_count`.
 */
export function distinctExpertOperators(tensors: readonly ShapedTensor[], used: number): ExpertOperatorShape[] {
    const seen = new Map<string, ExpertOperatorShape>();
    for (const tensor of tensors) {
        const expert = expertOperatorOf(tensor);
        if (expert == null) continue;
        const op = {...expert.op, count: expert.count, used: Math.min(expert.count, Math.max(1, used))};
        seen.set(`${op.type}:${op.rows}x${op.cols}x${op.count}/${op.used}`, op);
    }
    return [...seen.values()];
}
