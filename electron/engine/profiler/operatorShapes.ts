import {isExpertRole, isMatmulWeight, type TensorRole} from "../gguf/tensorRole.js";
import type {ExpertOperatorShape, OperatorShape} from "./MachineProfile.js";

/** The tensor fields operator extraction needs (structurally the inspector's `InspectedTensor`). */
export type ShapedTensor = {readonly name: string; readonly role: TensorRole | string; readonly type: string; readonly shape: readonly number[]};

/** The weight operator a tensor feeds, or `null` when it is not a 2-D matmul weight (norms, `token_embd`, experts). */
export function operatorOf(tensor: ShapedTensor): OperatorShape | null {
    if (!isMatmulWeight(tensor.role as TensorRole) || tensor.shape.length !== 2) return null;
    const [cols, rows] = tensor.shape as [number, number];
    return {type: tensor.type, rows, cols};
}

/** A 3-D expert weight (`ffn_*_exps`, used by GGML_OP_MUL_MAT_ID): one expert's matrix and the number of experts. */
export type ExpertOperator = {readonly op: OperatorShape; readonly count: number};

/**
 * The per-expert operator of an expert weight `[cols, rows, experts]`, or `null` for any other tensor. MUL_MAT_ID
 * multiplies each token by the matrices of its selected experts (source: llm_graph_context::build_moe_ffn, ggml_mul_mat_id).
 */
export function expertOperatorOf(tensor: ShapedTensor): ExpertOperator | null {
    if (!isExpertRole(tensor.role) || tensor.shape.length !== 3) return null;
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
