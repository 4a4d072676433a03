/**
 * The server's KV cost calibration (calibrateKvCost.ts), kept on disk so a server started again with the same model
 * and settings on the same machine reuses it instead of measuring for seconds to minutes before it answers.
 *
 * The key is everything the measurement depends on: the model file (path, size, modification time), every load
 * setting that changes how fast a prefill or a state save/load runs (context size, micro-batch, threads, mmap, GPU
 * use and layers, per-tensor overrides, op/KV offload, flash attention, KV cache type, parallel sequences), the
 * machine and llama.cpp build (machineCacheFacts.ts), and how the calibration measures ({@link calibrationMethod}). A
 * file replaced in place with the same size and mtime would reuse another model's numbers; unlike a validation
 * result (ValidatedFileCache.ts) that only mis-prices swap against recompute, and both give the same conversation.
 *
 * A cached file is trusted only as far as it checks out: its format and key must be this start's, its points must be
 * at exactly the prompt lengths this context is calibrated at, with finite non-negative numbers, and the cost model it
 * holds must be the one those points fit to. Anything else (not JSON, another version, hand-edited numbers) is
 * ignored, with the reason, and measured again.
 */
import {createHash} from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import {machineCacheFacts, type MachineCacheFacts} from "../../engine/cache/machineCacheFacts.js";
import {writeCacheFile} from "../../engine/cache/writeCacheFile.js";
import type {LlamaContextSequence} from "node-llama-cpp";
import type {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {
    calibrateKvCost, calibrationLengths, calibrationMethod, fitKvCostModel, KV_COST_FORMAT, type KvCalibration, type KvCalibrationPoint
} from "./calibrateKvCost.js";
import type {KvCostModel} from "./KvCostModel.js";

/** What a cached calibration is valid for. */
export type KvCostCacheFacts = {
    readonly machine: MachineCacheFacts;
    /** The model file; size and mtime (ns) as decimal strings (they exceed 2^53). */
    readonly model: {readonly path: string; readonly bytes: string; readonly mtimeNs: string};
    /** The load's settings that change prefill and state save/load times. */
    readonly load: Readonly<Record<string, unknown>>;
    readonly method: ReturnType<typeof calibrationMethod>;
};

/** One cached calibration, where it is kept and what it is valid for. */
export type KvCostCacheEntry = {readonly file: string; readonly key: string; readonly facts: KvCostCacheFacts; readonly lengths: readonly number[]};

/** A cache file read: the calibration it holds, or why it was not used (`null` when there was none). */
export type KvCostCacheRead = {calibration: KvCalibration} | {ignored: string} | null;

/** A kept calibration larger than this is not read. */
const MAX_CACHE_FILE_BYTES = 1024 * 1024;

/** The cache key of `facts`: any change gives another key (and another file). */
export function kvCostCacheKey(facts: KvCostCacheFacts): string {
    return createHash("sha256").update(JSON.stringify(facts)).digest("hex").slice(0, 20);
}

/** The facts of `placed` as loaded now (its context's sequences included), calibrated with `maxTokens`. */
export async function kvCostCacheFacts(placed: PlacedModel, maxTokens: number | undefined): Promise<KvCostCacheFacts> {
    const {options} = placed;
    const stat = await fs.stat(options.modelPath, {bigint: true});
    return {
        machine: await machineCacheFacts(placed.engine),
        model: {path: path.resolve(options.sourcePath ?? options.modelPath), bytes: String(stat.size), mtimeNs: String(stat.mtimeNs)},
        load: {
            contextSize: placed.context.contextSize, batchSize: options.batchSize, threads: options.threads ?? placed.engine.llama.maxThreads,
            useMmap: options.useMmap, useGpu: options.useGpu, gpuLayers: options.gpuLayers ?? null, overrides: options.overrides ?? [],
            opOffload: options.opOffload, kvOffload: options.kvOffload, flashAttention: options.flashAttention, kvCacheType: options.kvCacheType,
            sequences: placed.context.totalSequences
        },
        method: calibrationMethod(maxTokens)
    };
}

/** Where the calibration of `placed` is kept in `cacheDir`. */
export async function kvCostCacheEntry(placed: PlacedModel, cacheDir: string, maxTokens: number | undefined): Promise<KvCostCacheEntry> {
    const facts = await kvCostCacheFacts(placed, maxTokens);
    const key = kvCostCacheKey(facts);
    return {file: path.join(cacheDir, `kv-cost-${key}.json`), key, facts, lengths: calibrationLengths(placed.context.contextSize, maxTokens)};
}

/** Keeps `calibration` for `entry` (0600 in a 0700 folder, written whole or not at all). */
export async function writeCachedKvCost(entry: KvCostCacheEntry, calibration: KvCalibration): Promise<void> {
    const body = {format: KV_COST_FORMAT, key: entry.key, createdAt: new Date().toISOString(), facts: entry.facts, points: calibration.points, model: calibration.model};
    await writeCacheFile(entry.file, `${JSON.stringify(body, null, 1)}\n`);
}

/** The calibration kept for `entry`, if its file is there and checks out (see the file's comment). */
export async function readCachedKvCost(entry: KvCostCacheEntry): Promise<KvCostCacheRead> {
    let text: string;
    try {
        // bounded before it is read: a file this code wrote is a few KiB
        const {size} = await fs.stat(entry.file);
        if (size > MAX_CACHE_FILE_BYTES)
            return {ignored: `it is ${size} bytes, more than a calibration takes (${MAX_CACHE_FILE_BYTES})`};
        text = await fs.readFile(entry.file, "utf8");
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT")
            return null;
        return {ignored: `it cannot be read (${(error as Error).message})`};
    }
    let body: unknown;
    try {
        body = JSON.parse(text);
    } catch {
        return {ignored: "it is not JSON"};
    }
    const problem = checkCachedKvCost(body, entry);
    if (problem != null)
        return {ignored: problem};
    const points = (body as {points: KvCalibrationPoint[]}).points.map(({tokens, stateBytes, prefillMs, saveMs, loadMs}) => ({tokens, stateBytes, prefillMs, saveMs, loadMs}));
    return {calibration: {points, model: fitKvCostModel(points)}};
}

/** The numbers of a point, each finite and not negative. */
const POINT_FIELDS = ["tokens", "stateBytes", "prefillMs", "saveMs", "loadMs"] as const;

/**
 * Why `body` is not a calibration for `entry`, or `null` when it is. Hand-written rather than a schema library: the
 * checks that matter (points at this context's lengths, a model equal to the one they fit) are not shapes a schema says.
 */
export function checkCachedKvCost(body: unknown, entry: Pick<KvCostCacheEntry, "key" | "lengths">): string | null {
    if (typeof body !== "object" || body == null || Array.isArray(body))
        return "it is not a JSON object";
    const {format, key, points, model} = body as {format?: unknown; key?: unknown; points?: unknown; model?: unknown};
    if (format !== KV_COST_FORMAT)
        return `its format is ${JSON.stringify(format)?.slice(0, 20) ?? "missing"}, not ${KV_COST_FORMAT}`;
    if (key !== entry.key)
        return "it was measured for another model, setting or machine (its key differs)";
    if (!Array.isArray(points) || points.length !== entry.lengths.length)
        return `it does not hold ${entry.lengths.length} measured points`;
    for (const [index, point] of points.entries()) {
        if (typeof point !== "object" || point == null)
            return `point ${index + 1} is not an object`;
        for (const field of POINT_FIELDS) {
            const value = (point as Record<string, unknown>)[field];
            if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
                return `point ${index + 1}'s ${field} is not a finite number ≥ 0`;
        }
        if ((point as KvCalibrationPoint).tokens !== entry.lengths[index])
            return `point ${index + 1} is not at ${entry.lengths[index]} tokens`;
    }
    // the stored model must be the one its points fit to: a model edited apart from its points is not trusted
    const fitted = fitKvCostModel(points as KvCalibrationPoint[]);
    if (JSON.stringify(model) !== JSON.stringify(fitted))
        return "its cost model is not the one its points fit to";
    return null;
}

/**
 * The KV cost model for this start: kept from an earlier start with the same model, settings and machine when
 * `kv.cacheDir` holds one that checks out, else measured on `sequence` (and kept there). `onStartup` says when the
 * measurement begins and how far it is.
 */
export async function cachedOrMeasuredKvCost(placed: PlacedModel, sequence: LlamaContextSequence,
    kv: {cacheDir?: string; calibrationTokens?: number; dir?: string}, log: (line: string) => void,
    onStartup?: (step: "measuring-kv", fraction: number) => void): Promise<KvCostModel> {
    // a model file moved or deleted since it was loaded has no key: measured, as without a cache
    const entry = kv.cacheDir == null ? null : await kvCostCacheEntry(placed, kv.cacheDir, kv.calibrationTokens).catch((error: unknown) => {
        log(`kv costs are not kept this time: ${error instanceof Error ? error.message : String(error)}`);
        return null;
    });
    if (entry != null) {
        const read = await readCachedKvCost(entry);
        if (read != null && "calibration" in read)
            return {...read.calibration.model, source: `${read.calibration.model.source}, kept in ${entry.file}`};
        if (read != null)
            log(`kv costs kept in ${entry.file} are not used: ${read.ignored}; measuring again`);
    }
    onStartup?.("measuring-kv", 0);
    const calibration = await calibrateKvCost(sequence, {
        maxTokens: kv.calibrationTokens, dir: kv.dir, onProgress: (done, total) => onStartup?.("measuring-kv", done / total)
    });
    if (entry != null) {
        // a cache that cannot be written (a read-only or full disk) costs the next start this measurement, nothing more
        await writeCachedKvCost(entry, calibration).catch((error: unknown) =>
            log(`kv costs could not be kept in ${entry.file}: ${error instanceof Error ? error.message : String(error)}`));
    }
    return calibration.model;
}
