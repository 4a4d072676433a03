import type {Placement} from "./Placement.js";
import {CPU_BUFFER_TYPE, INPUT_LAYER_TENSOR, type NaturalBufferType} from "./verifyOverrides.js";
/** Where an unassigned tensor goes when several GPU-type devices exist: not knowable from the placement alone. */
const SPLIT_DECIDES = "<llama.cpp layer split>";

/**
 * A placement for a machine with several GPU-type devices (a second GPU, an rpc-server's device), and the "natural"
 * placement to compile it against (`compilePlacement(placement, tensors, {natural})`). With one GPU, a tensor left on
 * the default buffer type needs no override; with several, llama.cpp spreads unassigned layers over all of them
 * (llama_model::load_tensors, split by free memory), so every tensor but the input layer gets an explicit override.
 */
export function pinEveryTensor(placement: Placement, tensors: readonly {name: string}[]): {placement: Placement; natural: NaturalBufferType} {
    const assignments: Record<string, string> = {};
    for (const {name} of tensors)
        if (!INPUT_LAYER_TENSOR.test(name) || Object.hasOwn(placement.assignments, name))
            assignments[name] = placement.assignments[name] ?? placement.defaultBufferType;
    return {
        placement: {...placement, assignments},
        natural: (name) => (INPUT_LAYER_TENSOR.test(name) ? CPU_BUFFER_TYPE : SPLIT_DECIDES)
    };
}
