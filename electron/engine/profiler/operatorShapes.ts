import {isMatmulWeight, type TensorRole} from "../gguf/tensorRole.js";
import type {OperatorShape} from "./MachineProfile.js";

/** The tensor fields operator extraction needs (structurally the inspector's `InspectedTensor`). */
export type ShapedTensor = {readonly name: string; readonly role: TensorRole | string; readonly type: string; readonly shape: readonly number[]};

/** The weight operator a tensor feeds, or `null` when it is not a 2-D matmul weight (norms, `token_embd`, experts). */
export function operatorOf(tensor: ShapedTensor): OperatorShape | null {
    if (!isMatmulWeight(tensor.role as TensorRole) || tensor.shape.length !== 2) return null;
    const [cols, rows] = tensor.shape as [number, number];
    return {type: tensor.type, rows, cols};
}

/**
 * The distinct weight operators (ggml type, rows, cols) of a model: what the profiler times. A dense Llama has about
 * seven (q, k=v, o, gate=up, down, output), whatever its depth.
 */
export function distinctOperators(tensors: readonly ShapedTensor[]): OperatorShape[] {
    const seen = new Map<string, OperatorShape>();
    for (const tensor of tensors) {
        const op = operatorOf(tensor);
        if (op != null) seen.set(`${op.type}:${op.rows}x${op.cols}`, op);
    }
    return [...seen.values()];
}
