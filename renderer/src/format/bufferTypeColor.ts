import {isHostBufferType, isPinnedHostBufferType} from "../../../electron/contract/memory";

/** Colour of a buffer type: GPU memory, pinned host memory, or plain CPU memory. */
export function bufferTypeKind(bufferType: string): "gpu" | "pinned" | "cpu" {
    if (!isHostBufferType(bufferType))
        return "gpu";
    return isPinnedHostBufferType(bufferType) ? "pinned" : "cpu";
}

const palette = {gpu: "#2dd4bf", pinned: "#f59e0b", cpu: "#a78bfa"} as const;
const gpuShades = ["#2dd4bf", "#38bdf8", "#4ade80", "#22d3ee"];

export function bufferTypeColor(bufferType: string): string {
    const kind = bufferTypeKind(bufferType);
    if (kind !== "gpu")
        return palette[kind];
    const index = Number(/(\d+)$/.exec(bufferType)?.[1] ?? 0);
    return gpuShades[index % gpuShades.length] ?? palette.gpu;
}

export function bufferTypeLabel(bufferType: string): string {
    const kind = bufferTypeKind(bufferType);
    return kind === "gpu" ? "device memory" : kind === "pinned" ? "pinned host memory" : "host memory";
}
