/**
 * The forced mixed placement every corpus model runs on a second device: the first half of the repeating layers keep
 * everything but their feed-forward tensors (`blk.N.ffn_*`: dense, expert, shared-expert and norm) on the CPU and put
 * the feed-forward ones on the device; the second half the other way round; everything outside the layers stays on the
 * CPU. So attention (MLA, SSM, short-conv, linear attention, …) and feed-forward (dense and experts) each run on both
 * sides, and the graph crosses devices in every layer. Chosen by tensor name, not by tensorwise's roles, so a role
 * tensorwise does not know still lands where this says.
 */
import type {PlacementFileV1} from "../../placement/Placement.js";

/** What the placement needs of a tensor (`tensorwise inspect --json`'s tensors). */
export type CorpusTensor = {readonly name: string; readonly layer: number | null};

/** The placement file and how many tensors it puts on each side. */
export type CorpusPlacement = {
    readonly file: PlacementFileV1;
    readonly onDevice: number;
    readonly onHost: number;
};

const FFN_TENSOR = /^blk\.\d+\.ffn_/;

/**
 * The mixed placement of `tensors` over `device` (a buffer type such as `"Vulkan0"`) and the CPU; `null` when the model
 * has no repeating layers (nothing to split).
 */
export function mixedCorpusPlacement(tensors: readonly CorpusTensor[], device: string): CorpusPlacement | null {
    const layers = [...new Set(tensors.flatMap((tensor) => tensor.layer == null ? [] : [tensor.layer]))].sort((a, b) => a - b);
    if (layers.length === 0) return null;
    const firstHalf = new Set(layers.slice(0, Math.ceil(layers.length / 2)));
    const onDevice = (tensor: CorpusTensor): boolean => {
        if (tensor.layer == null) return false;
        return firstHalf.has(tensor.layer) === FFN_TENSOR.test(tensor.name);
    };
    let chosen = tensors.filter(onDevice);
    // a one-layer model without feed-forward tensors would put nothing on the device: put its whole layer there
    if (chosen.length === 0) chosen = tensors.filter((tensor) => tensor.layer === layers[0]);
    const deviceNames = new Set(chosen.map((tensor) => tensor.name));
    const host = tensors.filter((tensor) => !deviceNames.has(tensor.name));
    return {
        // the default must be the device (tensorwise loads every layer onto it); the host side is spelled out per tensor
        file: {version: 1, defaultBufferType: device, tensors: Object.fromEntries(host.map((tensor) => [tensor.name, "CPU"]))},
        onDevice: deviceNames.size,
        onHost: host.length
    };
}
