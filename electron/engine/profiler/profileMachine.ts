import {createHash} from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {NativeProfileRequest} from "../native/tensorwiseBindings.js";
import {calibrateDecodeOverhead, type DecodeOverhead} from "./calibrateDecodeOverhead.js";
import type {MachineProfile, OperatorShape} from "./MachineProfile.js";

/**
 * Prefill micro-batch sizes timed on GPUs by default (llama.cpp offloads host-weight ops from 32 tokens up). Larger
 * micro-batches (2048) are extrapolated linearly from 512, where a GPU matmul is compute-bound.
 */
export const DEFAULT_GPU_BATCH_SIZES = [1, 32, 128, 512] as const;
/** Batch sizes timed on the CPU: decode, and one prefill size that larger ones are scaled from. */
export const DEFAULT_CPU_BATCH_SIZES = [1, 32] as const;
/** A whole profile stops after this long; missing points are extrapolated. */
export const DEFAULT_PROFILE_TIME_LIMIT_MS = 20_000;
/** Timed runs per point; a point stops repeating once its runs add up to {@link MAX_MS_PER_POINT}. */
export const DEFAULT_REPEATS = 5;
/** Repeats of one point stop after this much time (one run longer than this is a sample of one). */
export const MAX_MS_PER_POINT = 120;
/**
 * A batch size whose time, extrapolated linearly from the op's previous batch, exceeds this is not run (the cost model
 * extrapolates it): on llvmpipe one 1024×2816 matmul at 2048 tokens took 10 s, at 512 1.7 s.
 */
export const MAX_ESTIMATED_MS_PER_POINT = 1000;
/** Bytes copied per H2D/D2H bandwidth sample (16 MiB is past the latency-dominated sizes on PCIe). */
export const TRANSFER_BYTES = 16 * 1024 * 1024;
/** Bytes scanned per CPU read-bandwidth sample (well past the last-level cache). */
export const CPU_SCAN_BYTES = 96 * 1024 * 1024;
/**
 * Largest decode working set the profiler streams per batch-1 timing: far past any last-level cache, so a larger model
 * times the same, and bounded in memory and time.
 */
export const MAX_DECODE_WORKING_SET_BYTES = 256 * 1024 * 1024;
const PROFILE_FORMAT = 4;

/** Options of {@link profileMachine}. */
export type ProfileMachineOptions = {
    /**
     * Weight bytes a decode step of the model streams (its weights' total): batch-1 matmuls are timed over that many
     * bytes of distinct weights (capped at {@link MAX_DECODE_WORKING_SET_BYTES}) so the cache holds no more of them than
     * in a real decode. Defaults to 0 (each op timed over a handful of copies, which a large cache may hold).
     */
    decodeWorkingSetBytes?: number;
    /** Device names to time (`["CPU"]`: the CPU alone). Defaults to every CPU and GPU device. */
    devices?: readonly string[];
    /** CPU threads, the same as inference uses. Defaults to the engine's `maxThreads`. */
    threads?: number;
    /** Defaults to {@link DEFAULT_GPU_BATCH_SIZES}. */
    batchSizes?: readonly number[];
    /** Defaults to {@link DEFAULT_CPU_BATCH_SIZES}. */
    cpuBatchSizes?: readonly number[];
    /** Defaults to {@link DEFAULT_PROFILE_TIME_LIMIT_MS}. */
    timeLimitMs?: number;
    /** Timed runs per point (after warm-up). Defaults to {@link DEFAULT_REPEATS}. */
    repeats?: number;
    /** Folder of the JSON cache; omitted = no caching. */
    cacheDir?: string;
    /** Ignore a cached profile. Defaults to `false`. */
    refresh?: boolean;
    /** Also measure the fixed and per-layer decode costs on tiny generated models ({@link calibrateDecodeOverhead}). Defaults to `true`. */
    calibrateOverhead?: boolean;
    /** Aborting stops the native profiler at its next measurement (and rejects). */
    signal?: AbortSignal;
    onProgress?: (message: string) => void;
};

function cacheKey(engine: EngineLlama, ops: readonly OperatorShape[], request: NativeProfileRequest, overhead: boolean): string {
    const devices = engine.bindings.tensorwiseGetDevices().map((d) => `${d.name}:${d.description}:${d.totalBytes}`);
    const cpu = os.cpus()[0]?.model ?? "cpu";
    const parts = [
        PROFILE_FORMAT, os.hostname(), cpu, os.totalmem(), engine.llama.llamaCppRelease.release, engine.llama.buildType,
        engine.llama.gpu === false ? "cpu" : engine.llama.gpu, devices.join(","), request.threads,
        [...ops].map((o) => `${o.type}:${o.rows}x${o.cols}`).sort().join(","), request.batchSizes?.join(","), request.cpuBatchSizes?.join(","), overhead,
        request.decodeWorkingSetBytes, request.devices?.join(",")
    ];
    return createHash("sha256").update(parts.join("|")).digest("hex").slice(0, 20);
}

/** Bumped when measurements change meaning (2: slope-timed matmuls, 3: decode timed over the model's working set), so older cached profiles are re-measured. */
const PROFILE_VERSION = 3;

async function readCache(file: string, key: string): Promise<MachineProfile | null> {
    try {
        const cached = JSON.parse(await fs.readFile(file, "utf8")) as MachineProfile;
        return cached.version === PROFILE_VERSION && cached.key === key && !cached.truncated ? cached : null;
    } catch {
        return null;
    }
}

/**
 * Profiles this machine for a model's weight operators: each operator's matmul time on the CPU and every GPU at
 * decode and prefill batch sizes, host→GPU bandwidth (pinned and pageable), the cost of one CPU↔GPU switch and the
 * CPU's read bandwidth — measured through ggml on the real backends, in a native worker thread. Cached per machine,
 * llama.cpp release, build, thread count and operator set.
 */
export async function profileMachine(engine: EngineLlama, ops: readonly OperatorShape[], options: ProfileMachineOptions = {}): Promise<MachineProfile> {
    const {bindings, llama} = engine;
    if (bindings.tensorwiseProfileOperators == null)
        throw new Error("this tensorwise native build has no operator profiler; run `npm run native`");
    const request: NativeProfileRequest = {
        ops: ops.map((o) => ({type: o.type, rows: o.rows, cols: o.cols})),
        batchSizes: [...(options.batchSizes ?? DEFAULT_GPU_BATCH_SIZES)],
        cpuBatchSizes: [...(options.cpuBatchSizes ?? DEFAULT_CPU_BATCH_SIZES)],
        threads: options.threads ?? llama.maxThreads,
        ...(options.devices != null ? {devices: [...options.devices]} : {}),
        repeats: options.repeats ?? DEFAULT_REPEATS,
        warmup: 1,
        maxMsPerPoint: MAX_MS_PER_POINT,
        maxEstimatedMsPerPoint: MAX_ESTIMATED_MS_PER_POINT,
        transferBytes: TRANSFER_BYTES,
        cpuScanBytes: CPU_SCAN_BYTES,
        decodeWorkingSetBytes: Math.min(MAX_DECODE_WORKING_SET_BYTES, Math.max(0, options.decodeWorkingSetBytes ?? 0)),
        timeLimitMs: options.timeLimitMs ?? DEFAULT_PROFILE_TIME_LIMIT_MS
    };
    const key = cacheKey(engine, ops, request, options.calibrateOverhead !== false);
    const file = options.cacheDir == null ? null : path.join(options.cacheDir, `profile-${key}.json`);
    if (file != null && options.refresh !== true) {
        const cached = await readCache(file, key);
        if (cached != null) {
            options.onProgress?.(`profile: cached (${file})`);
            return cached;
        }
    }
    options.signal?.throwIfAborted();
    options.onProgress?.(`profile: timing ${ops.length} operators on ${bindings.tensorwiseGetDevices().length} devices`);
    const onAbort = (): void => bindings.tensorwiseCancelProfiles?.();
    options.signal?.addEventListener("abort", onAbort, {once: true});
    let result;
    try {
        result = await bindings.tensorwiseProfileOperators(request);
    } finally {
        options.signal?.removeEventListener("abort", onAbort);
    }
    options.signal?.throwIfAborted();
    if (result.cancelled) throw new Error("the profile was cancelled");
    let overhead: DecodeOverhead | undefined;
    if (options.calibrateOverhead !== false) {
        try {
            overhead = await calibrateDecodeOverhead(engine, request.threads ?? 1);
        } catch (error) {
            options.onProgress?.(`profile: per-decode overhead not measured (${error instanceof Error ? error.message : String(error)})`);
        }
    }
    const profile: MachineProfile = {
        version: PROFILE_VERSION,
        key,
        createdAt: new Date().toISOString(),
        llamaCppRelease: llama.llamaCppRelease.release,
        backend: llama.gpu === false ? "cpu" : llama.gpu,
        threads: request.threads ?? 1,
        devices: result.devices,
        operators: [...ops],
        matmuls: result.matmuls,
        transfers: result.transfers,
        cpuReadBytesPerSec: result.cpuReadBytesPerSec,
        elapsedMs: result.elapsedMs,
        ...(overhead != null ? {decodeOverheadUs: overhead.fixedUs, decodePerLayerUs: overhead.perLayerUs} : {}),
        ...(result.cpuLaunchUs != null && result.cpuLaunchUs > 0 ? {cpuLaunchUs: result.cpuLaunchUs} : {}),
        matmulTiming: "slope",
        truncated: result.truncated
    };
    if (file != null) {
        await fs.mkdir(path.dirname(file), {recursive: true});
        await fs.writeFile(file, `${JSON.stringify(profile, null, 2)}\n`);
    }
    options.onProgress?.(`profile: done in ${(result.elapsedMs / 1000).toFixed(1)} s${result.truncated ? " (time limit hit; the rest is extrapolated)" : ""}`);
    return profile;
}

/** The default profile cache folder: `$XDG_CACHE_HOME/tensorwise` or `~/.cache/tensorwise`. */
export function defaultProfileCacheDir(): string {
    return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "tensorwise");
}
