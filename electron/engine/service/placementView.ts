import type {PlacementStrategy, PlacementView} from "../../contract/ipc.js";
import type {InspectedModel} from "../gguf/inspectGguf.js";
import type {Placement, TensorBufferOverride} from "../placement/Placement.js";
import {summarisePlacement} from "../placement/summarisePlacement.js";

/** What the placement map, legend and flags line in the UI need. */
export function toPlacementView(options: {
    strategy: PlacementStrategy;
    placement: Placement;
    model: InspectedModel;
    overrides: readonly TensorBufferOverride[];
    gpuLayers: number | "max";
    llamaCppFlags: string;
}): PlacementView {
    const summary = summarisePlacement(options.placement, options.model.tensors);
    return {
        strategy: options.strategy,
        defaultBufferType: options.placement.defaultBufferType,
        roles: [...summary.roles],
        grid: summary.rows.map((row) => row.cells.map((cell) => cell?.bufferType ?? null)),
        globals: summary.globals.map((tensor) => ({name: tensor.name, bufferType: tensor.bufferType})),
        bytesPerBufferType: Object.fromEntries(summary.byBufferType.map((entry) => [entry.bufferType, entry.bytes])),
        overrides: options.overrides.map((override) => ({pattern: override.pattern, bufferType: override.bufferType})),
        gpuLayers: options.gpuLayers,
        llamaCppFlags: options.llamaCppFlags
    };
}

/**
 * Where llama.cpp's layer split puts each tensor with `-ngl gpuLayers`: the last `gpuLayers` repeating layers on the
 * GPU, the output layer too once every repeating layer is there, token embeddings always on the host.
 * source: llama_model::load_tensors (src/llama-model.cpp): i_gpu_start = max(n_layer + 1 - n_gpu_layers, 0).
 */
export function layerSplitPlacement(model: InspectedModel, gpuLayers: number, gpuBufferType: string | null): Placement {
    const layerCount = model.layerCount ?? 0;
    const firstGpuLayer = Math.max(layerCount + 1 - gpuLayers, 0);
    const assignments: Record<string, string> = {};
    for (const tensor of model.tensors) {
        const index = tensor.layer ?? (tensor.role === "token_embd" ? -1 : layerCount);
        const onGpu = gpuBufferType != null && index >= firstGpuLayer && tensor.role !== "token_embd";
        assignments[tensor.name] = onGpu ? gpuBufferType : "CPU";
    }
    return {defaultBufferType: gpuBufferType ?? "CPU", assignments};
}
