import {createHash} from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {machineCacheFacts, type MachineCacheFacts} from "../cache/machineCacheFacts.js";
import {writeCacheFile} from "../cache/writeCacheFile.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {NativeProfileRequest} from "../native/tensorwiseBindings.js";
import {contentionBetween, cpuSnapshot, isContended, otherProgramsBusy, withContention} from "./cpuContention.js";
import {calibrateDecodeOverhead, OVERHEAD_TIME_LIMIT_MS, SWITCH_TIME_LIMIT_MS, type DecodeOverhead, type SwitchProbe} from "./calibrateDecodeOverhead.js";
import type {AttentionShape, ExpertOperatorShape, MachineProfile, OperatorShape} from "./MachineProfile.js";
import {devicesWithoutPrefill} from "./MachineProfile.js";
import {passBoundary, passLabel, passProgress, type ProfilePass} from "./profilePasses.js";

/**
 * Prefill micro-batch sizes timed on GPUs by default (llama.cpp offloads host-weight ops from 32 tokens up). Larger
 * micro-batches (2048) are extrapolated linearly from 512, where a GPU matmul is compute-bound. Between two sizes
 * the time is interpolated, so every power of two is timed: a GPU matmul's time is not linear in the tokens between
 * 32 and 128 (its shaders work in tiles of tokens).
 */
export const DEFAULT_GPU_BATCH_SIZES = [1, 32, 64, 128, 256, 512] as const;
/**
 * Batch sizes timed on the CPU: decode, a speculative verification (a draft of a few tokens and the last one), a small
 * prompt micro-batch and a large one (a GEMM's time per token changes with the batch — cache blocking, repacked kernels
 * — so one small size scaled up mispriced the CPU's prompts); sizes between are interpolated, larger ones scaled from
 * the largest. Batch 8 is there for speculative decoding (speculative/speculativeCost.ts): between 1 and 32 the CPU's
 * time rises fastest at first (an F16 model's verification of 5 tokens measured about 3.3× one token, where the line
 * from 1 to 32 said 2.2×: bench/results/2026-11-29-speculative-epyc2c). It is timed when the time limit allows
 * (TensorwiseProfiler.cpp: decode and the first micro-batch of 32 or more always are).
 */
export const DEFAULT_CPU_BATCH_SIZES = [1, 8, 32, 512] as const;
/**
 * The matmul phase of a profile stops after this long; missing points are extrapolated. Every device's link is timed
 * first, outside this limit, so a short limit never leaves a device (an rpc-server's) without the link its plan needs.
 */
export const DEFAULT_PROFILE_TIME_LIMIT_MS = 20_000;
/** Timed runs per point; a point stops repeating once its runs add up to {@link MAX_MS_PER_POINT}. */
export const DEFAULT_REPEATS = 5;
/** Repeats of one point stop after this much time (one run longer than this is a sample of one). */
export const MAX_MS_PER_POINT = 120;
/**
 * A batch size whose time, extrapolated from the op's previous batch, exceeds this is not run under the default time
 * limit (the cost model extrapolates it: MachineProfile.ts matmulUs): on llvmpipe one 1024×2816 matmul at 2048 tokens
 * took 10 s, at 512 1.7 s. A longer time limit raises it ({@link maxEstimatedMsPerPoint}).
 */
export const MAX_ESTIMATED_MS_PER_POINT = 1000;

/**
 * The per-point bound for a profile of `timeLimitMs`: {@link MAX_ESTIMATED_MS_PER_POINT}, or a twentieth of a longer
 * limit. With the default limit a slow device's prefill sizes are skipped (a 1 GiB model's ops on llvmpipe take
 * 50–620 ms at one token and 0.5–6.9 s at 32); a user who gives the profile ten minutes gets them measured. (Such long
 * points once crashed Mesa's lavapipe; the native profiler now gives each GPU point its own backend context, see
 * `pointBackend` in native/src/TensorwiseProfiler.cpp.)
 */
export function maxEstimatedMsPerPoint(timeLimitMs: number): number {
    return Math.max(MAX_ESTIMATED_MS_PER_POINT, timeLimitMs / 20);
}
/** How often a running profile reports its progress and the time it may still take. */
export const PROGRESS_INTERVAL_MS = 500;
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
    /**
     * Time CPU weights as a load that uses no GPU (llama.cpp's `--device none`) lays them out — repacked into the CPU's
     * extra buffer types (AMX, CPU_REPACK) where they apply — even though this engine sees a GPU. Defaults to `false`:
     * as a load that uses the GPU lays them out (plain, in its pinned host buffer).
     */
    cpuOnlyLoad?: boolean;
    /**
     * The model's attention shape and the KV cache types to time it with (and the largest context, which bounds the
     * keys): one layer's attention timed with and without flash attention (what those knobs cost). Defaults to none.
     */
    attention?: AttentionShape & {readonly kvTypes: readonly string[]; readonly maxKeys: number};
    /** CPU threads, the same as inference uses. Defaults to the engine's `maxThreads`. */
    threads?: number;
    /** Defaults to {@link DEFAULT_GPU_BATCH_SIZES}. */
    batchSizes?: readonly number[];
    /** Defaults to {@link DEFAULT_CPU_BATCH_SIZES}. */
    cpuBatchSizes?: readonly number[];
    /**
     * A mixture-of-experts model's expert weights (operatorShapes.ts distinctExpertOperators), timed as GGML_OP_MUL_MAT_ID
     * at the same batch sizes, plus (on GPUs) the copy of the experts each micro-batch uses. Defaults to none.
     */
    expertOps?: readonly ExpertOperatorShape[];
    /** Defaults to {@link DEFAULT_PROFILE_TIME_LIMIT_MS}. */
    timeLimitMs?: number;
    /** Timed runs per point (after warm-up). Defaults to {@link DEFAULT_REPEATS}. */
    repeats?: number;
    /** Folder of the JSON cache; omitted = no caching. */
    cacheDir?: string;
    /** Measure again even when the cache holds a profile for this machine (a user's "Re-profile"). Defaults to `false`. */
    refresh?: boolean;
    /**
     * Only reuse a cached profile: with none for these operators, reject with {@link ProfileNotCachedError} instead of
     * measuring (a quick look, such as planning a model before it is downloaded). Defaults to `false`.
     */
    cacheOnly?: boolean;
    /** Also measure the fixed and per-layer decode costs on tiny generated models ({@link calibrateDecodeOverhead}). Defaults to `true`. */
    calibrateOverhead?: boolean;
    /**
     * With it, the calibration also times a CPU↔GPU switch in a decode step on the one GPU profiled (planner/switchProbe.ts
     * makes the switches). Defaults to none: the profile then has no `decodeSwitchUs`.
     */
    switchProbe?: SwitchProbe;
    /** Aborting stops the native profiler at its next measurement (and rejects). */
    signal?: AbortSignal;
    /**
     * Steps as sentences; while measuring, every {@link PROGRESS_INTERVAL_MS} with `fraction` (0..1) of the time the
     * profile is meant to take (its time limit plus the per-decode calibration), the detail saying how much is left.
     */
    onProgress?: (message: string, fraction?: number) => void;
    /** This profile's place among the passes of one plan: progress and time left run across all of them. */
    pass?: ProfilePass;
    /** What starts every progress message; `"profile: "` (the Profile step, electron/engineProcess/EngineService.ts) unless set. */
    progressPrefix?: string;
};

/** {@link profileMachine} with `cacheOnly`, where this machine has no cached profile for the operators asked for. */
export class ProfileNotCachedError extends Error {
    constructor(readonly operatorCount: number) {
        super(`this machine has no cached profile for these ${operatorCount} operators (their shapes and quant types): profile them to plan`);
        this.name = "ProfileNotCachedError";
    }
}

/** What a cached profile is valid for: the machine and llama.cpp build it was measured on, and what was measured. */
export type ProfileCacheFacts = MachineCacheFacts & {
    readonly request: Pick<NativeProfileRequest, "threads" | "batchSizes" | "cpuBatchSizes" | "expertOps" | "decodeWorkingSetBytes" | "devices" | "cpuOnlyLoad" | "attention">;
    readonly ops: readonly OperatorShape[];
    readonly calibrateOverhead: boolean;
    /** The calibration also timed the decode switch (ProfileMachineOptions.switchProbe). */
    readonly timesSwitches?: boolean;
};

/** The cache key of a profile: any change of machine, driver, llama.cpp build or measurement gives another key. */
export function profileCacheKey(facts: ProfileCacheFacts): string {
    const parts = [
        PROFILE_FORMAT, facts.host, facts.cpu, facts.ramBytes, facts.driver, facts.llamaCppRelease, facts.buildType, facts.backend,
        facts.devices.join(","), facts.request.threads, [...facts.ops].map((o) => `${o.type}:${o.rows}x${o.cols}`).sort().join(","),
        facts.request.batchSizes?.join(","), facts.request.cpuBatchSizes?.join(","), facts.calibrateOverhead,
        facts.request.decodeWorkingSetBytes, facts.request.devices?.join(","),
        // only a MoE model's key gains its expert operators, so dense models keep their cached profiles
        ...(facts.request.expertOps != null && facts.request.expertOps.length > 0
            ? [facts.request.expertOps.map((o) => `${o.type}:${o.rows}x${o.cols}x${o.count}/${o.used}`).sort().join(",")] : []),
        // likewise only a CPU-only-layout profile's key says so
        ...(facts.request.cpuOnlyLoad === true ? ["cpu-only-load"] : []),
        ...(facts.request.attention != null ? [JSON.stringify(facts.request.attention)] : []),
        // and only a profile that timed the decode switch says so (one cached before it is measured again, once)
        ...(facts.timesSwitches === true ? ["decode-switch"] : [])
    ];
    return createHash("sha256").update(parts.join("|")).digest("hex").slice(0, 20);
}

/** The {@link ProfileCacheFacts} of this machine and engine. */
async function cacheFacts(engine: EngineLlama, ops: readonly OperatorShape[], request: NativeProfileRequest, calibrateOverhead: boolean,
    timesSwitches: boolean): Promise<ProfileCacheFacts> {
    return {...await machineCacheFacts(engine), request, ops, calibrateOverhead, ...(timesSwitches ? {timesSwitches} : {})};
}

/**
 * Bumped when measurements change meaning (2: slope-timed matmuls, 3: decode timed over the model's working set, 4: CPU
 * weights timed in the buffer type llama.cpp loads them into, repacked on a CPU-only load; 5: with a GPU visible, in
 * its pinned host buffer, as llama.cpp loads them), so older cached profiles are re-measured.
 */
export const PROFILE_VERSION = 5;

/**
 * The cached profile for `key`, marked with the file it came from. A profile cut short by its time limit is reused
 * too: measuring again on the same machine cuts it again at a different point, and the plan's predictions would
 * change between two presses of the same button; the plan's explanation says it was cut (re-profile on request).
 */
export async function readCachedProfile(file: string, key: string): Promise<MachineProfile | null> {
    try {
        const cached = JSON.parse(await fs.readFile(file, "utf8")) as MachineProfile;
        return cached.version === PROFILE_VERSION && cached.key === key ? {...cached, cachedFile: file} : null;
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
/** The one GPU whose decode switches the calibration times: none for a CPU-only pass, or with no GPU or several profiled. */
function switchGpu(devices: readonly {name: string; type: string}[], request: NativeProfileRequest, probe: SwitchProbe | undefined): {device: string; probe: SwitchProbe} | null {
    if (probe == null || request.cpuOnlyLoad === true) return null;
    const gpus = devices.filter((d) => d.type !== "cpu" && (request.devices == null || request.devices.includes(d.name)));
    return gpus.length === 1 ? {device: gpus[0]!.name, probe} : null;
}

export async function profileMachine(engine: EngineLlama, ops: readonly OperatorShape[], options: ProfileMachineOptions = {}): Promise<MachineProfile> {
    const {bindings, llama} = engine;
    const prefix = options.progressPrefix ?? "profile: ";
    if (bindings.tensorwiseProfileOperators == null)
        throw new Error("this tensorwise native build has no operator profiler; run `npm run native`");
    const request: NativeProfileRequest = {
        ops: ops.map((o) => ({type: o.type, rows: o.rows, cols: o.cols})),
        expertOps: (options.expertOps ?? []).map((o) => ({type: o.type, rows: o.rows, cols: o.cols, count: o.count, used: o.used})),
        batchSizes: [...(options.batchSizes ?? DEFAULT_GPU_BATCH_SIZES)],
        cpuBatchSizes: [...(options.cpuBatchSizes ?? DEFAULT_CPU_BATCH_SIZES)],
        threads: options.threads ?? llama.maxThreads,
        ...(options.devices != null ? {devices: [...options.devices]} : {}),
        ...(options.cpuOnlyLoad === true ? {cpuOnlyLoad: true} : {}),
        ...(options.attention != null ? {attention: attentionRequest(options.attention)} : {}),
        repeats: options.repeats ?? DEFAULT_REPEATS,
        warmup: 1,
        maxMsPerPoint: MAX_MS_PER_POINT,
        maxEstimatedMsPerPoint: maxEstimatedMsPerPoint(options.timeLimitMs ?? DEFAULT_PROFILE_TIME_LIMIT_MS),
        transferBytes: TRANSFER_BYTES,
        cpuScanBytes: CPU_SCAN_BYTES,
        decodeWorkingSetBytes: Math.min(MAX_DECODE_WORKING_SET_BYTES, Math.max(0, options.decodeWorkingSetBytes ?? 0)),
        timeLimitMs: options.timeLimitMs ?? DEFAULT_PROFILE_TIME_LIMIT_MS
    };
    const gpuForSwitches = options.calibrateOverhead !== false ? switchGpu(bindings.tensorwiseGetDevices(), request, options.switchProbe) : null;
    const key = profileCacheKey(await cacheFacts(engine, ops, request, options.calibrateOverhead !== false, gpuForSwitches != null));
    const file = options.cacheDir == null ? null : path.join(options.cacheDir, `profile-${key}.json`);
    if (file != null && options.refresh !== true) {
        const cached = await readCachedProfile(file, key);
        // a profile taken under a shorter limit than asked for now may lack points this one would measure, and one
        // without a prefill timing on some device cannot price prompts there (devicesWithoutPrefill)
        const unpriced = cached == null ? [] : devicesWithoutPrefill(cached);
        if (unpriced.length > 0)
            options.onProgress?.(`${prefix}the saved profile has no prompt-sized timing on ${unpriced.join(", ")}; measuring again`, passBoundary(options.pass, false));
        if (cached != null && unpriced.length === 0 && (cached.timeLimitMs ?? DEFAULT_PROFILE_TIME_LIMIT_MS) >= request.timeLimitMs!) {
            options.onProgress?.(`${prefix}reusing this machine's profile of ${cached.createdAt.slice(0, 16).replace("T", " ")} UTC (${file})`, passBoundary(options.pass, true));
            return cached;
        }
    }
    if (options.cacheOnly === true)
        throw new ProfileNotCachedError(ops.length);
    options.signal?.throwIfAborted();
    const deviceCount = request.devices?.length ?? bindings.tensorwiseGetDevices().length;
    const what = `timing ${ops.length} operators${request.expertOps!.length > 0 ? ` and ${request.expertOps!.length} expert operators` : ""} on ` +
        `${deviceCount} device${deviceCount === 1 ? "" : "s"}${passLabel(options.pass)}`;
    options.onProgress?.(`${prefix}${what}`, passBoundary(options.pass, false));
    const onAbort = (): void => bindings.tensorwiseCancelProfiles?.();
    options.signal?.addEventListener("abort", onAbort, {once: true});
    // an abort before the listener was added fired no event: refuse here instead of measuring anyway
    if (options.signal?.aborted === true) {
        options.signal.removeEventListener("abort", onAbort);
        options.signal.throwIfAborted();
    }
    // the native profiler reports nothing until it ends, but it ends by its time limit: progress is time against that bound
    const started = performance.now();
    const boundMs = (request.timeLimitMs ?? DEFAULT_PROFILE_TIME_LIMIT_MS) + (options.calibrateOverhead !== false ? OVERHEAD_TIME_LIMIT_MS : 0)
        + (gpuForSwitches != null ? SWITCH_TIME_LIMIT_MS : 0);
    const ticker = options.onProgress == null ? null : setInterval(() => {
        const {fraction, leftMs} = passProgress(options.pass, performance.now() - started, boundMs);
        // a point already running when the limit passes still finishes: past the bound only that is said
        options.onProgress?.(`${prefix}${what} · ${leftMs > 0 ? `about ${Math.ceil(leftMs / 1000)} s left` : "finishing the last measurements"}`, fraction);
    }, PROGRESS_INTERVAL_MS);
    let result;
    let overhead: DecodeOverhead | undefined;
    // other programs' CPU use over every timing of this profile (cpuContention.ts)
    const cpuAtStart = cpuSnapshot();
    try {
        try {
            result = await bindings.tensorwiseProfileOperators(request);
        } finally {
            options.signal?.removeEventListener("abort", onAbort);
        }
        options.signal?.throwIfAborted();
        if (result.cancelled) throw new Error("the profile was cancelled");
        if (options.calibrateOverhead !== false) {
            try {
                overhead = await calibrateDecodeOverhead(engine, request.threads ?? 1, gpuForSwitches);
            } catch (error) {
                options.onProgress?.(`${prefix}per-decode overhead not measured (${error instanceof Error ? error.message : String(error)})`);
            }
            options.signal?.throwIfAborted();
        }
    } finally {
        if (ticker != null) clearInterval(ticker);
    }
    const contention = contentionBetween(cpuAtStart, cpuSnapshot(), request.threads ?? 1);
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
        ...(result.expertMatmuls != null && result.expertMatmuls.length > 0 ? {expertMatmuls: result.expertMatmuls} : {}),
        ...(result.expertCopies != null && result.expertCopies.length > 0 ? {expertCopies: result.expertCopies} : {}),
        ...(result.attentions != null && result.attentions.length > 0 ? {attentions: result.attentions} : {}),
        transfers: result.transfers,
        cpuReadBytesPerSec: result.cpuReadBytesPerSec,
        elapsedMs: result.elapsedMs,
        timeLimitMs: request.timeLimitMs!,
        ...(overhead != null ? {decodeOverheadUs: overhead.fixedUs, decodePerLayerUs: overhead.perLayerUs} : {}),
        ...(overhead?.switchUs != null ? {decodeSwitchUs: overhead.switchUs} : {}),
        ...(result.cpuLaunchUs != null && result.cpuLaunchUs > 0 ? {cpuLaunchUs: result.cpuLaunchUs} : {}),
        matmulTiming: "slope",
        truncated: result.truncated,
        ...withContention(contention ?? undefined)
    };
    if (file != null)
        await writeCacheFile(file, `${JSON.stringify(profile, null, 2)}\n`);
    const busy = contention != null && isContended(contention)
        ? ` (${otherProgramsBusy(contention)}: timings may be slow)` : "";
    options.onProgress?.(`${prefix}done in ${(result.elapsedMs / 1000).toFixed(1)} s${passLabel(options.pass)}` +
        `${result.truncated ? " (time limit hit; the rest is extrapolated)" : ""}${busy}`, passBoundary(options.pass, true));
    return profile;
}

/** The default profile cache folder: `$XDG_CACHE_HOME/tensorwise` or `~/.cache/tensorwise`. */
export function defaultProfileCacheDir(): string {
    return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "tensorwise");
}

/**
 * The attention points to time: decode (one token) over 64 keys, a short and a long cache, and a prompt micro-batch over each;
 * the cost model scales between them (MachineProfile.ts attentionUs). Keys stay within the context (at most 4096:
 * longer caches scale linearly from there).
 */
export function attentionRequest(attention: NonNullable<ProfileMachineOptions["attention"]>): NonNullable<NativeProfileRequest["attention"]> {
    const long = Math.max(64, Math.min(4096, attention.maxKeys));
    const short = Math.max(32, Math.min(512, Math.floor(long / 4)));
    return {
        headDim: attention.headDim, headDimV: attention.headDimV, heads: attention.heads, kvHeads: attention.kvHeads,
        // the shortest decode point carries the op's fixed cost (its nodes), which dominates short caches
        points: [...(short > 64 ? [{tokens: 1, keys: 64}] : []), {tokens: 1, keys: short}, {tokens: 1, keys: long},
            {tokens: Math.min(64, short), keys: short}, {tokens: Math.min(512, long), keys: long}],
        kvTypes: [...new Set(attention.kvTypes)]
    };
}
