/** Converts between the planner's device view of a plan and the `Placement` / llama.cpp parameters that load it. */
import type {Placement, TensorBufferOverride} from "../placement/Placement.js";
import {escapeRegexLiteral} from "../placement/regexSource.js";
import type {PlannerModel, ResolvedPlacement} from "./types.js";

/** token_embd is an input-layer tensor llama.cpp always keeps on the CPU (llama_model::load_tensors, dev_input). */
function isInputLayer(role: string): boolean {
    return role === "token_embd";
}

/** Non-layer tensors that follow the output layer's device (`output`, `output_norm`). */
function isOutputLayer(layer: number | null, role: string): boolean {
    return layer == null && !isInputLayer(role);
}

/**
 * llama.cpp's default layer split `-ngl n`: the output layer counts as layer `n_layer`, so `-ngl n` puts the output
 * layer and the last `n − 1` repeating layers (with their KV cache) on the GPU, and `n_layer + 1` puts everything
 * (source: llama_model::load_tensors: i_gpu_start = max(n_layer + 1 − n_gpu_layers, 0); dev_output =
 * get_layer_buft_list(n_layer); "offloading output layer to GPU" is logged for any n ≥ 1).
 */
export function layerSplit(model: PlannerModel, gpuLayers: number): ResolvedPlacement {
    const first = Math.max(model.layerCount + 1 - gpuLayers, 0);
    const onGpu = new Set<string>();
    for (const t of model.tensors) {
        if (isInputLayer(t.role)) continue;
        if (t.layer != null ? t.layer >= first : gpuLayers >= 1) onGpu.add(t.name);
    }
    const kvOnGpu = Array.from({length: model.layerCount}, (_, l) => l >= first);
    return {gpuLayers: gpuLayers > model.layerCount ? "max" : gpuLayers, onGpu, kvOnGpu};
}

/** Every layer offloaded (`gpuLayers` = all, KV cache on the GPU) with the named tensors moved to host memory. */
export function perTensor(model: PlannerModel, hostTensors: ReadonlySet<string>): ResolvedPlacement {
    const onGpu = new Set(model.tensors.filter((t) => !isInputLayer(t.role) && !hostTensors.has(t.name)).map((t) => t.name));
    return {gpuLayers: "max", onGpu, kvOnGpu: Array.from({length: model.layerCount}, () => true)};
}

/**
 * A layer split plus llama.cpp tensor overrides (as `common_fit_params` returns them), resolved the way llama.cpp
 * does: `std::regex_search`, first match wins, a host buffer type moves the tensor to host memory.
 */
export function withOverrides(model: PlannerModel, gpuLayers: number, overrides: readonly (readonly [string, string])[],
    isHostBufferType: (name: string) => boolean): ResolvedPlacement {
    const base = layerSplit(model, gpuLayers);
    const compiled = overrides.map(([pattern, bufferType]) => ({re: new RegExp(pattern), host: isHostBufferType(bufferType)}));
    const onGpu = new Set(base.onGpu);
    for (const t of model.tensors) {
        // llama.cpp matches a tied output's copy by its source's name (tn.str() is token_embd.weight)
        const match = compiled.find((o) => o.re.test(t.tiedTo ?? t.name));
        if (match == null) continue;
        if (match.host) onGpu.delete(t.name);
        else if (!isInputLayer(t.role)) onGpu.add(t.name);
    }
    return {...base, onGpu};
}

/**
 * The placement as data for compilePlacement / summarisePlacement: host tensors assigned "CPU", the rest on
 * `gpuBufferType`. For a layer split it lists the CPU layers' tensors explicitly (load it with `gpuLayers` instead).
 */
export function toPlacement(model: PlannerModel, p: ResolvedPlacement, gpuBufferType: string | null): Placement {
    if (gpuBufferType == null) return {defaultBufferType: "CPU", assignments: {}};
    const assignments: Record<string, string> = {};
    for (const t of model.tensors) {
        if (t.tiedTo != null) continue; // not a file tensor: see tiedOutputOverrides
        if (!p.onGpu.has(t.name) && !isInputLayer(t.role)) assignments[t.name] = "CPU";
        if (p.onGpu.has(t.name) && isOutputLayer(t.layer, t.role) && p.gpuLayers !== "max") assignments[t.name] = gpuBufferType;
    }
    return {defaultBufferType: gpuBufferType, assignments};
}

/**
 * The override that keeps a tied output (a model without `output.weight`, see loadedTensors.ts) in host memory when
 * the plan leaves it there while the output layer is on the GPU (`-ngl` ≥ 1): `token_embd.weight` to the CPU, which
 * makes llama.cpp create the output's copy in the CPU buffer that already holds token_embd (one copy, no GPU bytes);
 * the input layer is on the CPU anyway. Empty otherwise.
 */
export function tiedOutputOverrides(model: PlannerModel, p: ResolvedPlacement): TensorBufferOverride[] {
    const outputOnGpu = p.gpuLayers === "max" || p.gpuLayers >= 1;
    const tied = model.tensors.find((t) => t.tiedTo != null);
    if (tied == null || !outputOnGpu || p.onGpu.has(tied.name)) return [];
    return [{pattern: `^${escapeRegexLiteral(tied.tiedTo!)}$`, bufferType: "CPU"}];
}
