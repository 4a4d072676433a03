import {isHostBufferType, isPinnedHostBufferType} from "../../../electron/contract/memory";

/** What the buffer types of a measurement say of themselves (isHostBufferType's `known`), which outranks their names. */
type Known = Parameters<typeof isHostBufferType>[1];

/** Colour of a buffer type: GPU memory, pinned host memory, or plain CPU memory. */
export function bufferTypeKind(bufferType: string, known?: Known): "gpu" | "pinned" | "cpu" {
    if (!isHostBufferType(bufferType, known))
        return "gpu";
    return isPinnedHostBufferType(bufferType) ? "pinned" : "cpu";
}

/** The theme's colours (styles/theme.css), so swatches follow the light and dark theme. */
const palette = {gpu: "var(--gpu)", pinned: "var(--pinned)", cpu: "var(--cpu)"} as const;
/** Further GPUs (Vulkan1, CUDA1, …): mid-tones that read on both themes. */
const gpuShades = ["var(--gpu)", "#0ea5e9", "#22c55e", "#06b6d4"];

export function bufferTypeColor(bufferType: string, known?: Known): string {
    const kind = bufferTypeKind(bufferType, known);
    if (kind !== "gpu")
        return palette[kind];
    const index = Number(/(\d+)$/.exec(bufferType)?.[1] ?? 0);
    return gpuShades[index % gpuShades.length] ?? palette.gpu;
}

export function bufferTypeLabel(bufferType: string, known?: Known): string {
    const kind = bufferTypeKind(bufferType, known);
    return kind === "gpu" ? "device memory" : kind === "pinned" ? "pinned host memory" : "host memory";
}
