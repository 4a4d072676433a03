/** Converts between the planner's device view of a plan and the `Placement` / llama.cpp parameters that load it. */
import {compilePlacement} from "../placement/compilePlacement.js";
import type {Placement, TensorBufferOverride} from "../placement/Placement.js";
import {escapeRegexLiteral} from "../placement/regexSource.js";
import {weightBaseName, type PlannerModel, type ResolvedPlacement} from "./types.js";

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
    const layerOnGpu = Array.from({length: model.layerCount}, (_, l) => l >= first);
    return {gpuLayers: gpuLayers > model.layerCount ? "max" : gpuLayers, onGpu, layerOnGpu};
}

/**
 * Per-tensor placement of the weight matmuls on top of a layer split: the last `gpuLayerCount` repeating layers (all
 * of them by default: `-ngl max`) are GPU layers, and every matmul weight not named in `hostTensors` lives on the GPU,
 * whichever layer it is in — so a CPU layer may keep some weights on the GPU (`-ngl N -ot …=CUDA0`) and a GPU layer
 * some in host memory (`-ot …=CPU`). The other weights follow what uses them, so that none of them makes a CPU↔GPU
 * switch of its own: a bias or scale goes with its matmul (`blk.N.attn_q.bias` with `blk.N.attn_q.weight`: the add runs
 * where the bias lives, ggml_backend_sched assigning an op with a weight source to that weight's backend); a norm and
 * every other per-layer weight stays on its layer's device, where llama.cpp runs the layer's norms during decode anyway
 * (llama_context's graph callback pins every "norm" node there); output_norm goes with the output matmul.
 */
export function perTensor(model: PlannerModel, hostTensors: ReadonlySet<string>, gpuLayerCount = model.layerCount): ResolvedPlacement {
    const count = Math.max(0, Math.min(model.layerCount, gpuLayerCount));
    const first = model.layerCount - count;
    const layerOnGpu = Array.from({length: model.layerCount}, (_, l) => l >= first);
    const opOnGpu = new Map(model.tensors.filter((t) => t.op != null).map((t) => [weightBaseName(t.name), !hostTensors.has(t.name)]));
    const outputOnGpu = model.tensors.some((t) => t.role === "output" && !hostTensors.has(t.name));
    const onGpu = new Set<string>();
    for (const t of model.tensors) {
        if (isInputLayer(t.role)) continue;
        const gpu = t.op != null ? !hostTensors.has(t.name)
            : opOnGpu.get(weightBaseName(t.name)) ?? (t.layer != null ? layerOnGpu[t.layer] === true : t.role === "output_norm" ? outputOnGpu : count > 0);
        if (gpu) onGpu.add(t.name);
    }
    // -ngl counts the output layer: N = the GPU layers + 1 puts the last N − 1 repeating layers there (see layerSplit)
    return {gpuLayers: count === model.layerCount ? "max" : count + 1, onGpu, layerOnGpu};
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
 * The tensor overrides that load `p` with `-ngl p.gpuLayers` (anchored, proved by compilePlacement against where
 * llama.cpp puts each tensor at that `-ngl`): none for a plain layer split; for every layer on the GPU, the weights
 * moved to host memory; for a split with overrides both ways, each weight that is not where its layer puts it. The
 * tied output's own override is {@link tiedOutputOverrides}.
 */
export function placementOverrides(model: PlannerModel, p: ResolvedPlacement, gpuBufferType: string): TensorBufferOverride[] {
    const files = model.tensors.filter((t) => t.tiedTo == null);
    if (p.gpuLayers === "max") return [...compilePlacement(toPlacement(model, p, gpuBufferType), files).overrides];
    const split = layerSplit(model, p.gpuLayers);
    if (files.every((t) => split.onGpu.has(t.name) === p.onGpu.has(t.name))) return [];
    const first = model.layerCount + 1 - p.gpuLayers;
    const byName = new Map(files.map((t) => [t.name, t]));
    // source: llama_model::load_tensors (the input layer on the CPU; layer i on the GPU from i_gpu_start =
    // n_layer + 1 − n_gpu_layers on; the output layer, index n_layer, on the GPU for any n_gpu_layers ≥ 1)
    const natural = (name: string): string => {
        const t = byName.get(name);
        if (t == null || isInputLayer(t.role)) return "CPU";
        return (t.layer ?? model.layerCount) >= first ? gpuBufferType : "CPU";
    };
    const assignments: Record<string, string> = {};
    for (const t of files) if (!isInputLayer(t.role)) assignments[t.name] = p.onGpu.has(t.name) ? gpuBufferType : "CPU";
    return [...compilePlacement({defaultBufferType: gpuBufferType, assignments}, files, {natural}).overrides];
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
