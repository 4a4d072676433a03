/**
 * The memory check of the planner-regret benchmark: what llama.cpp itself allocates for a configuration, read from its
 * log. A probe is one llama-bench process per placement, run with `-v --progress -r 0 --no-warmup` and the context
 * settings as comma lists: it loads the model once and creates one context per combination (which reserves the compute
 * buffers) without computing anything, and logs every buffer:
 *   load_tensors:      Vulkan0 model buffer size =    12.34 MiB
 *   llama_kv_cache:    Vulkan0 KV buffer size =     0.25 MiB
 *   sched_reserve:     Vulkan0 compute buffer size =     1.53 MiB
 * source: src/llama-model.cpp (load_tensors), src/llama-kv-cache.cpp, src/llama-context.cpp (sched_reserve) and
 * tools/llama-bench/llama-bench.cpp (`--progress` prints "benchmark i/N: starting" before each instance).
 */
import {isHostBufferType} from "../../../contract/memory.js";
import type {RegretConfig} from "./regretConfig.js";

const MiB = 1024 * 1024;

/** Bytes per buffer type and kind, as llama.cpp logged them (MiB with two decimals, so ±5 KiB a buffer). */
export type ProbedBuffers = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** One probed instance: its buffers and the GPU's share of them. */
export type ProbedMemory = {
    readonly buffers: ProbedBuffers;
    /** Bytes in device (non-host) buffer types: weights + KV cache + compute buffers on the GPU(s). */
    readonly gpuBytes: number;
};

const STARTING = /^llama-bench: benchmark (\d+)\/(\d+): starting$/;
const BUFFER = /^(\w+):\s+(\S+)\s+(.+?) buffer size =\s+([\d.]+) MiB$/;

/** Device bytes of a buffer map (host buffer types — CPU, CPU_Mapped, CPU_REPACK, *_Host — excluded). */
export function gpuBytesOf(buffers: ProbedBuffers): number {
    let total = 0;
    for (const [bufferType, kinds] of Object.entries(buffers))
        if (!isHostBufferType(bufferType))
            for (const bytes of Object.values(kinds)) total += bytes;
    return total;
}

/**
 * Splits a probe's stderr into its instances (in llama-bench's order) with the buffers each allocated. Model buffers
 * are logged once per load and carry over to the instances that reuse the loaded model.
 */
export function parseProbeLog(stderr: string): ProbedMemory[] {
    const instances: {own: Record<string, Record<string, number>>; model: Record<string, number>}[] = [];
    let model: Record<string, number> = {};
    let current: {own: Record<string, Record<string, number>>; model: Record<string, number>} | null = null;
    let loadedHere = false;
    for (const raw of stderr.split("\n")) {
        const line = raw.trimEnd();
        if (STARTING.test(line)) {
            current = {own: {}, model};
            instances.push(current);
            loadedHere = false;
            continue;
        }
        const match = BUFFER.exec(line);
        if (match == null || current == null) continue;
        const [, , bufferType, what, mib] = match as unknown as [string, string, string, string, string];
        const kind = /model/.test(what) ? "model" : /KV/.test(what) ? "kv" : /compute/.test(what) ? "compute" : what.trim();
        const bytes = Math.round(Number(mib) * MiB);
        if (kind === "model") {
            // a new load: its buffers replace the previous model's
            if (!loadedHere) current.model = model = {};
            loadedHere = true;
            model[bufferType] = (model[bufferType] ?? 0) + bytes;
            continue;
        }
        const byKind = (current.own[bufferType] ??= {});
        byKind[kind] = (byKind[kind] ?? 0) + bytes;
    }
    return instances.map(({own, model: loaded}) => {
        const buffers: Record<string, Record<string, number>> = {};
        for (const [bufferType, bytes] of Object.entries(loaded)) buffers[bufferType] = {model: bytes};
        for (const [bufferType, kinds] of Object.entries(own)) buffers[bufferType] = {...buffers[bufferType], ...kinds};
        return {buffers, gpuBytes: gpuBytesOf(buffers)};
    });
}

/** The context settings that tell a probe's instances apart, from a llama-bench JSON test entry or a configuration. */
export function contextKeyOfEntry(entry: Record<string, unknown>): string {
    return [entry.n_ubatch, entry.type_k, entry.type_v, Number(entry.flash_attn) === 1 ? 1 : 0, Number(entry.no_op_offload) === 1 ? 1 : 0,
        entry.no_kv_offload === true || Number(entry.no_kv_offload) === 1 ? 1 : 0].join("/");
}

/** See {@link contextKeyOfEntry}. */
export function contextKeyOfConfig(config: RegretConfig): string {
    return [config.ubatch, config.typeK, config.typeV, config.flashAttention ? 1 : 0, config.opOffload ? 0 : 1, config.kvOffload ? 0 : 1].join("/");
}

/** The comma-list flags that make one probe process cover every context setting of `configs` (same placement). */
export function probeContextFlags(configs: readonly RegretConfig[]): string[][] {
    // a quantized V cache fails context creation without flash attention, which ends the whole process: one group per
    // flash-attention value, so that a combination the grid never asks for is never created
    const groups = new Map<boolean, RegretConfig[]>();
    for (const c of configs) groups.set(c.flashAttention, [...(groups.get(c.flashAttention) ?? []), c]);
    return [...groups.entries()].map(([fa, group]) => {
        const list = <T>(pick: (c: RegretConfig) => T): string => [...new Set(group.map(pick))].map(String).join(",");
        const argv = ["-ub", list((c) => c.ubatch), "-ctk", list((c) => c.typeK), "-ctv", list((c) => c.typeV), "-fa", fa ? "1" : "0",
            "-nopo", list((c) => c.opOffload ? 0 : 1), "-nkvo", list((c) => c.kvOffload ? 0 : 1)];
        const maxUbatch = Math.max(...group.map((c) => c.ubatch));
        return maxUbatch > 2048 ? ["-b", String(maxUbatch), ...argv] : argv;
    });
}
