/**
 * Every quant of a repository, planned on this machine before anything is downloaded: each model's header is fetched
 * over HTTP Range (fetchRemoteHeader.ts) and planned by autoPlan on the sparse copy (the same planner, this machine's
 * cached profile, llama.cpp's no-alloc simulation; no weights read, no model loaded). Sorted fastest that fits first.
 */
import {predictionDeviceKind, predictionRange, readPredictionErrors} from "../planner/predictionErrors.js";
import {defaultProfileCacheDir} from "../profiler/profileMachine.js";
import {isContended} from "../profiler/cpuContention.js";
import {mkdtemp, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {HubQuantPlacement, HubQuantPlan} from "../../contract/hub.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {autoPlan} from "../planner/autoPlan.js";
import {DEFAULT_WORKLOAD} from "../planner/types.js";
import {ProfileNotCachedError, type ProfileMachineOptions} from "../profiler/profileMachine.js";
import {fetchRemoteHeader} from "./fetchRemoteHeader.js";
import type {GgufQuant} from "./ggufQuants.js";
import type {HubAccess} from "./hubAccess.js";
import {HubError} from "./HubError.js";
import {resolveUrl} from "./listRepoFiles.js";

/** A quant's plan on this machine, for the typical chat request ({@link DEFAULT_WORKLOAD}). */
export type QuantPlan = HubQuantPlan;

/** One quant and its plan, or why it has none. */
export type QuantListing = {
    readonly quant: GgufQuant;
    readonly plan: QuantPlan | null;
    /** Why there is no plan (`plan` is `null`): a sentence. */
    readonly notPlanned: string | null;
    /** `true` when the only reason is that this machine has no profile for its operators. */
    readonly needsProfile: boolean;
    /** Header bytes fetched. */
    readonly headerBytes: number;
};

/** Options of {@link planRemoteQuants}. */
export type PlanRemoteQuantsOptions = {
    readonly access: HubAccess;
    readonly repo: string;
    readonly revision: string;
    /** Measure this machine where no profile is cached (slow: one profile per quant type); defaults to `false`. */
    readonly profile?: boolean;
    readonly profileOptions?: Omit<ProfileMachineOptions, "signal" | "onProgress" | "cacheOnly">;
    readonly stallMs?: number;
    readonly signal?: AbortSignal;
    readonly onProgress?: (message: string) => void;
    /** System memory free now; defaults to `os.freemem()`. */
    readonly freeRamBytes?: number;
};

/** Plans each quant; the list is sorted: planned and fitting first, fastest request first, then the rest by size. */
export async function planRemoteQuants(engine: EngineLlama, quants: readonly GgufQuant[], options: PlanRemoteQuantsOptions): Promise<QuantListing[]> {
    const dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-header-"));
    const listings: QuantListing[] = [];
    try {
        for (const quant of quants)
            listings.push(await planOne(engine, quant, dir, options));
    } finally {
        await rm(dir, {recursive: true, force: true});
    }
    return listings.sort(byFastestThatFits);
}

async function planOne(engine: EngineLlama, quant: GgufQuant, dir: string, options: PlanRemoteQuantsOptions): Promise<QuantListing> {
    const none = (notPlanned: string, headerBytes = 0, needsProfile = false): QuantListing => ({quant, plan: null, notPlanned, needsProfile, headerBytes});
    if (quant.files.length > 1)
        return none(`a split model (${quant.files.length} parts): planning before a download reads one file's tensor table, and each part holds only some tensors`);
    const file = quant.files[0]!;
    const what = `${options.repo}: ${file.path}`;
    options.onProgress?.(`${quant.name}: reading the header of ${file.path}`);
    const sparse = path.join(dir, `${quant.name.replace(/[^A-Za-z0-9_.-]/g, "_")}.gguf`);
    let headerBytes = 0;
    try {
        const header = await fetchRemoteHeader({
            url: resolveUrl(options.access.endpoint, options.repo, options.revision, file.path), access: options.access, what,
            bytes: file.bytes, outPath: sparse, stallMs: options.stallMs, signal: options.signal
        });
        headerBytes = header.fetchedBytes;
        const planned = await autoPlan(engine, sparse, {
            workload: DEFAULT_WORKLOAD, signal: options.signal,
            profile: {...options.profileOptions, cacheOnly: options.profile !== true},
            onProgress: options.onProgress == null ? undefined : (message) => options.onProgress!(`${quant.name}: ${message}`)
        });
        const {result, profile} = planned;
        const p = result.prediction;
        const tensors = planned.model.tensors.length;
        const onGpu = result.resolved.onGpu.size;
        const placement: HubQuantPlacement = result.settings.useGpu === false || onGpu === 0 ? "CPU" : onGpu >= tensors ? "GPU" : "mixed";
        const hostBytes = p.hostWeightBytes + p.hostKvBytes + (p.hostScratchBytes ?? 0);
        const errors = readPredictionErrors(options.profileOptions?.cacheDir ?? defaultProfileCacheDir());
        const range = (figure: "ttft" | "tpot", predictedMs: number) => predictionRange(errors, {figure, predictedMs, modelKey: null,
            deviceKind: predictionDeviceKind(planned.cost.gpuDevice, result.settings.useGpu && onGpu > 0),
            contended: profile.cpuContention != null && isContended(profile.cpuContention)});
        return {quant, headerBytes, notPlanned: null, needsProfile: false, plan: {
            placement, ttftMs: p.ttftMs, tpotMs: p.tpotMs, tokensPerSecond: p.tpotMs > 0 ? 1000 / p.tpotMs : 0, requestMs: p.requestMs,
            gpuBytes: p.vram.total, hostBytes, fitsRam: hostBytes <= (options.freeRamBytes ?? os.freemem()),
            gpuName: result.settings.useGpu === false ? null : planned.cost.gpuDevice, profileReused: profile.cachedFile != null,
            ranges: {ttft: range("ttft", p.ttftMs), tpot: range("tpot", p.tpotMs)}
        }};
    } catch (error) {
        if (options.signal?.aborted === true) throw error;
        if (error instanceof ProfileNotCachedError)
            return none("this machine has no cached profile for this quant's operators (add --profile to measure them)", headerBytes, true);
        if (error instanceof HubError) return none(error.message, headerBytes);
        return none(`cannot be planned: ${error instanceof Error ? error.message : String(error)}`, headerBytes);
    } finally {
        await rm(sparse, {force: true});
    }
}

function byFastestThatFits(a: QuantListing, b: QuantListing): number {
    const rank = (l: QuantListing): number => l.plan == null ? 2 : l.plan.fitsRam ? 0 : 1;
    if (rank(a) !== rank(b)) return rank(a) - rank(b);
    if (a.plan != null && b.plan != null) return a.plan.requestMs - b.plan.requestMs;
    return a.quant.bytes - b.quant.bytes;
}
