/**
 * The proof: simulates how llama.cpp assigns buffer types to tensors under a list of overrides, and compares the
 * result with the plan.
 *
 * source: `llama_model_loader::create_tensor` (src/llama-model-loader.cpp) — for each tensor, in list order,
 * `std::regex_search(tensor_name, std::regex(pattern))` (ECMAScript grammar, substring search); the first match
 * decides; no match leaves the tensor on its layer's device. JS `new RegExp(pattern).test(name)` has the same
 * semantics for the syntax we generate (see regexSource.ts).
 */
import type { Placement, PlacementTensor, TensorBufferOverride } from "./Placement.js";

/** Where llama.cpp puts a tensor that matches no override: tensor name → buffer type name. */
export type NaturalBufferType = (tensorName: string) => string;

/**
 * Input-layer tensors: llama.cpp always keeps them on the CPU ("there is very little benefit to offloading the input
 * layer"). source: `LLM_TENSOR_LAYER_INPUT` entries in src/llama-arch.cpp, `pimpl->dev_input` in src/llama-model.cpp.
 */
export const INPUT_LAYER_TENSOR =
    /^(?:token_embd|position_embd|token_types|per_layer_token_embd|masked_embd_centroids|masked_embd_ordering|hrm\.z_l_init)(?:\.|$)/;

/** Buffer type name of the CPU backend (`ggml_backend_cpu_buffer_type()`). */
export const CPU_BUFFER_TYPE = "CPU";

/**
 * llama.cpp's placement without overrides when every layer is offloaded (`gpuLayers` = all) to a single device:
 * input-layer tensors (`token_embd.weight`, …) on `"CPU"`, everything else on `defaultBufferType`.
 */
export function llamaCppNaturalBufferType(defaultBufferType: string): NaturalBufferType {
    return (tensorName) => (INPUT_LAYER_TENSOR.test(tensorName) ? CPU_BUFFER_TYPE : defaultBufferType);
}

function toNatural(defaultBufferType: string | NaturalBufferType): NaturalBufferType {
    return typeof defaultBufferType === "string" ? llamaCppNaturalBufferType(defaultBufferType) : defaultBufferType;
}

/** A compiled override with the regex that llama.cpp would build from it. */
interface CompiledOverride {
    readonly override: TensorBufferOverride;
    readonly regex: RegExp;
}

function compileOverrides(overrides: readonly TensorBufferOverride[]): CompiledOverride[] {
    return overrides.map((override, i) => {
        try {
            return { override, regex: new RegExp(override.pattern) };
        } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            throw new Error(`override ${i} has an invalid pattern ${JSON.stringify(override.pattern)}: ${reason}`);
        }
    });
}

/** Result of simulating one tensor: its buffer type and the override that put it there (`null`: none matched). */
export interface ResolvedBufferType {
    readonly bufferType: string;
    readonly matchedPattern: string | null;
}

function resolveOne(compiled: readonly CompiledOverride[], name: string, natural: NaturalBufferType): ResolvedBufferType {
    for (const { override, regex } of compiled) {
        if (regex.test(name)) return { bufferType: override.bufferType, matchedPattern: override.pattern };
    }
    return { bufferType: natural(name), matchedPattern: null };
}

/**
 * Simulates llama.cpp: for each tensor name, the buffer type of the first override whose pattern is found in the
 * name, else its natural buffer type. A string `defaultBufferType` means {@link llamaCppNaturalBufferType} of it
 * (all layers offloaded, input layer on the CPU). Returns tensor name → buffer type, in input order.
 */
export function resolveBufferTypes(
    overrides: readonly TensorBufferOverride[],
    tensorNames: Iterable<string>,
    defaultBufferType: string | NaturalBufferType
): Map<string, string> {
    const compiled = compileOverrides(overrides);
    const natural = toNatural(defaultBufferType);
    const result = new Map<string, string>();
    for (const name of tensorNames) result.set(name, resolveOne(compiled, name, natural).bufferType);
    return result;
}

/** The buffer type a placement plans for a tensor: its assignment, else where llama.cpp would put it anyway. */
export function plannedBufferType(placement: Placement, tensorName: string, natural: NaturalBufferType): string {
    return Object.hasOwn(placement.assignments, tensorName)
        ? (placement.assignments[tensorName] as string)
        : natural(tensorName);
}

/** A tensor that the overrides would put somewhere other than planned. */
export interface PlacementMismatch {
    readonly tensor: string;
    readonly planned: string;
    readonly resolved: string;
    /** The override pattern that decided, or `null` when none matched. */
    readonly matchedPattern: string | null;
}

/**
 * Checks overrides against a placement for every tensor of the model, simulating llama.cpp. Returns the tensors
 * that would land on another buffer type than planned (empty: the overrides realise the plan exactly).
 * `natural` defaults to {@link llamaCppNaturalBufferType} of `placement.defaultBufferType`.
 */
export function verifyCompiledPlacement(
    placement: Placement,
    tensors: readonly Pick<PlacementTensor, "name">[],
    overrides: readonly TensorBufferOverride[],
    natural: NaturalBufferType = llamaCppNaturalBufferType(placement.defaultBufferType)
): PlacementMismatch[] {
    const compiled = compileOverrides(overrides);
    const mismatches: PlacementMismatch[] = [];
    for (const { name } of tensors) {
        const planned = plannedBufferType(placement, name, natural);
        const resolved = resolveOne(compiled, name, natural);
        if (resolved.bufferType !== planned) {
            mismatches.push({ tensor: name, planned, resolved: resolved.bufferType, matchedPattern: resolved.matchedPattern });
        }
    }
    return mismatches;
}
