/**
 * What a measurement cached on disk was measured on: this machine, its GPU driver and the llama.cpp build. A cache
 * keyed on these is measured again after a new CPU or GPU, a driver update or another build (the operator profile,
 * electron/engine/profiler/profileMachine.ts; the server's KV costs, electron/serve/kv/kvCostCache.ts).
 */
import fs from "node:fs/promises";
import os from "node:os";
import type {EngineLlama} from "../native/getEngineLlama.js";

export type MachineCacheFacts = {
    readonly host: string;
    readonly cpu: string;
    readonly ramBytes: number;
    /** The GPU kernel driver's version (`""` where none is readable). */
    readonly driver: string;
    readonly llamaCppRelease: string;
    readonly buildType: string;
    readonly backend: string;
    /** Every ggml device as `name:description:totalBytes`. */
    readonly devices: readonly string[];
};

/** The NVIDIA kernel driver's version line where one is installed (a driver update measures again), else `""`. */
async function driverVersion(): Promise<string> {
    try {
        return (await fs.readFile("/proc/driver/nvidia/version", "utf8")).split("\n")[0] ?? "";
    } catch {
        return "";
    }
}

/** The {@link MachineCacheFacts} of this machine and engine. */
export async function machineCacheFacts(engine: EngineLlama): Promise<MachineCacheFacts> {
    return {
        host: os.hostname(), cpu: os.cpus()[0]?.model ?? "cpu", ramBytes: os.totalmem(), driver: await driverVersion(),
        llamaCppRelease: engine.llama.llamaCppRelease.release, buildType: engine.llama.buildType,
        backend: engine.llama.gpu === false ? "cpu" : engine.llama.gpu,
        devices: engine.bindings.tensorwiseGetDevices().map((d) => `${d.name}:${d.description}:${d.totalBytes}`)
    };
}
