import os from "node:os";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {NativeBufferType, NativeDevice} from "../native/tensorwiseBindings.js";

/** What this machine offers for inference, as the loaded llama.cpp binary sees it. JSON-serialisable. */
export type MachineDescription = {
    cpu: {model: string; cores: number; threads: number};
    ram: {totalBytes: number; freeBytes: number};
    /** The llama.cpp build in use: `"cuda"`, `"vulkan"`, `"metal"` or `"cpu"`. */
    backend: string;
    buildType: string;
    llamaCpp: {release: string; repo: string};
    devices: NativeDevice[];
    bufferTypes: NativeBufferType[];
    /** The first GPU device, if any: where a plan puts the tensors it does not keep on the host. */
    gpu: NativeDevice | null;
};

/** Reads CPU, RAM and every ggml device with its buffer types and free memory. */
export function describeMachine(engine: EngineLlama): MachineDescription {
    const {llama, bindings} = engine;
    const cpus = os.cpus();
    const devices = bindings.tensorwiseGetDevices();
    const gpu = devices.find((device) => device.type === "gpu" || device.type === "igpu") ?? null;
    return {
        cpu: {model: cpus[0]?.model.trim() ?? "unknown", cores: llama.cpuMathCores, threads: os.availableParallelism()},
        ram: {totalBytes: os.totalmem(), freeBytes: os.freemem()},
        backend: llama.gpu === false ? "cpu" : llama.gpu,
        buildType: llama.buildType,
        llamaCpp: {release: llama.llamaCppRelease.release, repo: llama.llamaCppRelease.repo},
        devices,
        bufferTypes: bindings.tensorwiseGetBufferTypes().map((bufferType) => ({
            ...bufferType,
            // ggml reports no device for the plain CPU buffer type
            device: bufferType.device ?? (bufferType.name === "CPU" ? "CPU" : null),
            deviceType: bufferType.deviceType ?? (bufferType.name === "CPU" ? "cpu" : null)
        })),
        gpu
    };
}
