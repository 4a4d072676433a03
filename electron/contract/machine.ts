/**
 * The machine as the engine reports it across the contract (`machine.describe`, the CLI's `devices`): CPU, RAM, the
 * llama.cpp build and every ggml device with its buffer types. The contract's own shapes: the engine fills them from
 * the native binding, and nothing here depends on that binding.
 */

/** ggml's device kinds (`ggml_backend_dev_type`), as strings. */
export type DeviceType = "cpu" | "gpu" | "igpu" | "accel" | "unknown";

/** One ggml device. */
export type DeviceDescription = {
    name: string;
    description: string;
    type: DeviceType;
    backend: string | null;
    freeBytes: number;
    totalBytes: number;
    /** The device's own buffer type, e.g. `"CUDA0"`, `"Vulkan0"`, `"CPU"`. */
    bufferType: string | null;
    /** The device's pinned host buffer type, e.g. `"CUDA_Host"`, or `null`. */
    hostBufferType: string | null;
};

/** A buffer type tensors can be placed in. */
export type BufferTypeDescription = {
    name: string;
    /** Host memory (system RAM), pinned or not. */
    isHost: boolean;
    device: string | null;
    deviceType: DeviceType | null;
};

/** What this machine offers for inference, as the loaded llama.cpp binary sees it. JSON-serialisable. */
export type MachineDescription = {
    cpu: {model: string; cores: number; threads: number};
    ram: {totalBytes: number; freeBytes: number};
    /** The llama.cpp build in use: `"cuda"`, `"vulkan"`, `"metal"` or `"cpu"`. */
    backend: string;
    buildType: string;
    llamaCpp: {release: string; repo: string};
    devices: DeviceDescription[];
    bufferTypes: BufferTypeDescription[];
    /** The first GPU device, if any: where a plan puts the tensors it does not keep on the host. */
    gpu: DeviceDescription | null;
};
