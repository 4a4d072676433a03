import type {PlacementStrategy, PlacementView} from "../contract/ipc.js";
import type {InspectedModel} from "../engine/gguf/inspectGguf.js";
import type {Placement, TensorBufferOverride} from "../engine/placement/Placement.js";
import {summarisePlacement} from "../engine/placement/summarisePlacement.js";
import {loadedTensors} from "../engine/gguf/loadedTensors.js";
import {isExpertRole} from "../engine/gguf/tensorRole.js";

/** What the placement map, legend and flags line in the UI need. */
export function toPlacementView(options: {
    strategy: PlacementStrategy;
    placement: Placement;
    model: InspectedModel;
    overrides: readonly TensorBufferOverride[];
    gpuLayers: number | "max";
    llamaCppFlags: string;
}): PlacementView {
    // the tensors llama.cpp loads: not those of the MTP layers it skips (a tied output's copy is not a file tensor)
    const summary = summarisePlacement(options.placement, loadedTensors(options.model).filter((t) => t.tiedTo == null));
    return {
        strategy: options.strategy,
        defaultBufferType: options.placement.defaultBufferType,
        roles: [...summary.roles],
        grid: summary.rows.map((row) => row.cells.map((cell) => cell?.bufferType ?? null)),
        expertRoles: summary.roles.filter(isExpertRole),
        globals: summary.globals.map((tensor) => ({name: tensor.name, bufferType: tensor.bufferType})),
        bytesPerBufferType: Object.fromEntries(summary.byBufferType.map((entry) => [entry.bufferType, entry.bytes])),
        overrides: options.overrides.map((override) => ({pattern: override.pattern, bufferType: override.bufferType})),
        gpuLayers: options.gpuLayers,
        llamaCppFlags: options.llamaCppFlags
    };
}
