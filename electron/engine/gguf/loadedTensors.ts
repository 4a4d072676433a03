import {LLAMA_TIED_OUTPUT_ARCHS} from "./llamaArchTensors.js";
import type {InspectedModel, InspectedTensor} from "./inspectGguf.js";

/** A weight as llama.cpp creates it for a load; `tiedTo` names the file tensor whose data a duplicated weight copies. */
export type LoadedTensor = InspectedTensor & {
    /**
     * `"token_embd.weight"` on the output matmul's weight of a model without `output.weight`: llama.cpp creates it from
     * `token_embd` with TENSOR_DUPLICATED in the output layer's buffer type — a second copy where that is a GPU, the
     * same bytes where it is the CPU's buffer, which already holds token_embd (source: llama_model_loader::create_tensor,
     * "if duplicated, check if the original tensor was allocated in the same buffer type context"). Tensor overrides
     * match it by that name, so they move both copies.
     */
    readonly tiedTo?: string;
};

/**
 * The weights llama.cpp creates for this file with node-llama-cpp's parameters: the file's tensors without those of
 * the MTP (nextn) layers — every tensor of the last `nextn_predict_layers` blocks is created with TENSOR_SKIP while
 * llama_model_params.load_mtp is off, its default, which node-llama-cpp never changes: not loaded, never run
 * (src/models/deepseek2.cpp, glm4-moe.cpp, qwen3next.cpp, …: `if (!ml.load_mtp) mtp_flags |= TENSOR_SKIP`) — plus, for
 * an architecture that ties its output to `token_embd` and a file without `output.weight`, the output matmul's weight.
 */
export function loadedTensors(model: Pick<InspectedModel, "architecture" | "memory" | "tensors">): LoadedTensor[] {
    const trunk = model.memory?.trunkLayers ?? Number.POSITIVE_INFINITY;
    const tensors: LoadedTensor[] = model.tensors.filter((t) => t.layer == null || t.layer < trunk);
    const embd = model.tensors.find((t) => t.name === "token_embd.weight");
    const tied = embd != null && model.architecture != null && LLAMA_TIED_OUTPUT_ARCHS.has(model.architecture)
        && !model.tensors.some((t) => t.name === "output.weight");
    if (tied) tensors.push({...embd, name: "output.weight", role: "output", tiedTo: embd.name});
    return tensors;
}
