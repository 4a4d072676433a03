import os from "node:os";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {MachineDescription} from "../../contract/machine.js";
import {inSystemRam} from "../../contract/memory.js";

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
            isHost: inSystemRam(bufferType),
            // ggml reports no device for the plain CPU buffer type
            device: bufferType.device ?? (bufferType.name === "CPU" ? "CPU" : null),
            deviceType: bufferType.deviceType ?? (bufferType.name === "CPU" ? "cpu" : null)
        })),
        gpu
    };
}
