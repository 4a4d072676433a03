/** Records the machine, software and model a benchmark runs on. */
import {execFileSync} from "node:child_process";
import fs from "node:fs";
import {createRequire} from "node:module";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import type {InspectedModel} from "../gguf/inspectGguf.js";
import type {MachineDescription} from "../../contract/machine.js";
import type {BenchEnvironment, BenchModel} from "../../contract/bench.js";

/** One NVIDIA GPU as `nvidia-smi` reports it. */
export type NvidiaSmiGpu = {name: string; driver: string; memoryTotal: string};

/**
 * Parses `nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv` output (header line first).
 * Returns one entry per GPU.
 */
export function parseNvidiaSmiCsv(text: string): NvidiaSmiGpu[] {
    return text.split("\n").slice(1).map((line) => line.trim()).filter((line) => line !== "").map((line) => {
        const [name = "", driver = "", memoryTotal = ""] = line.split(",").map((field) => field.trim());
        return {name, driver, memoryTotal};
    });
}

/** Runs `nvidia-smi` when present (5 s limit); `[]` when it is missing or fails. */
export function queryNvidiaSmi(): NvidiaSmiGpu[] {
    try {
        return parseNvidiaSmiCsv(execFileSync("nvidia-smi", ["--query-gpu=name,driver_version,memory.total", "--format=csv"],
            {encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "ignore"]}));
    } catch {
        return [];
    }
}

function readVersion(packageJson: string): string {
    try {
        return String((JSON.parse(fs.readFileSync(packageJson, "utf8")) as {version?: unknown}).version ?? "unknown");
    } catch {
        return "unknown";
    }
}

/** The installed node-llama-cpp version. */
export function nodeLlamaCppVersion(): string {
    try {
        const require = createRequire(import.meta.url);
        let dir = path.dirname(require.resolve("node-llama-cpp"));
        while (!fs.existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
        return readVersion(path.join(dir, "package.json"));
    } catch {
        return "unknown";
    }
}

/** tensorwise's own version (the nearest package.json named "tensorwise" above this module). */
export function tensorwiseVersion(): string {
    let dir = path.dirname(fileURLToPath(import.meta.url));
    while (path.dirname(dir) !== dir) {
        const file = path.join(dir, "package.json");
        if (fs.existsSync(file) && fs.readFileSync(file, "utf8").includes("\"name\": \"tensorwise\"")) return readVersion(file);
        dir = path.dirname(dir);
    }
    return "unknown";
}

/** The benchmark's environment record. */
export function benchEnvironment(machine: MachineDescription, cpuReadBytesPerSec: number | null): BenchEnvironment {
    const smi = machine.backend === "cuda" ? queryNvidiaSmi() : [];
    const gpu = machine.gpu;
    return {
        hostname: os.hostname(),
        os: `${os.type()} ${os.release()} ${os.arch()}`,
        cpu: machine.cpu,
        ramBytes: machine.ram.totalBytes,
        backend: machine.backend,
        gpu: gpu == null ? null : {
            name: smi[0]?.name ?? (gpu.description || gpu.name),
            driver: smi[0]?.driver ?? null,
            memoryTotal: smi[0]?.memoryTotal ?? `${(gpu.totalBytes / 2 ** 20).toFixed(0)} MiB`,
            freeBytes: gpu.freeBytes
        },
        llamaCppRelease: machine.llamaCpp.release,
        nodeLlamaCppVersion: nodeLlamaCppVersion(),
        nodeVersion: process.version,
        tensorwiseVersion: tensorwiseVersion(),
        cpuReadBytesPerSec
    };
}

/** The model record. */
export function benchModel(modelPath: string, model: InspectedModel): BenchModel {
    return {
        path: modelPath,
        fileBytes: model.fileSize,
        weightBytes: model.tensorBytes,
        fileType: model.fileType?.name ?? null,
        layerCount: model.layerCount,
        quantMix: model.quantMix.map((q) => ({type: q.type, bytes: q.bytes, tensors: q.tensorCount}))
    };
}
