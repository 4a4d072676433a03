/** Measured costs of this machine's devices, as the operator profiler records them (JSON-serialisable, cached). */
import type {CpuContention} from "./cpuContention.js";

/** One weight operator: a matrix multiplication by a weight of this ggml type and shape. */
export type OperatorShape = {
    /** ggml type name, e.g. `"q4_K"`, `"f16"`. */
    readonly type: string;
    /** Output features (`ne[1]` of the weight). */
    readonly rows: number;
    /** Input features (`ne[0]`, the row length). */
    readonly cols: number;
};

/** The time of `ggml_mul_mat(weight, activations[batch])` on one device. */
export type MatmulPoint = OperatorShape & {
    readonly device: string;
    readonly batch: number;
    readonly supported: boolean;
    /** Median of the timed runs, µs (-1 when unsupported). */
    readonly medianUs: number;
    readonly minUs: number;
    readonly samples: number;
    /**
     * The buffer type the weights were timed in: the device's own, or on a CPU-only load the CPU's extra buffer type
     * llama.cpp repacks that weight into (`"AMX"`, `"CPU_REPACK"`), whose kernels differ. Missing in profiles before version 4.
     */
    readonly weightBufferType?: string;
};

/** One expert weight: `count` experts of which a token uses `used`, each expert an {@link OperatorShape} matrix. */
export type ExpertOperatorShape = OperatorShape & {
    readonly count: number;
    readonly used: number;
};

/**
 * The time of `ggml_mul_mat_id(experts, activations[batch], ids)` on one device: each of `batch` tokens multiplied by
 * its `used` selected experts, `distinct` experts touched in all (uniform routing, fixed seed).
 */
export type ExpertMatmulPoint = ExpertOperatorShape & {
    readonly device: string;
    readonly batch: number;
    readonly distinct: number;
    readonly supported: boolean;
    /** Median of the timed runs (slope-timed like {@link MatmulPoint}), µs; -1 when unsupported. */
    readonly medianUs: number;
    readonly minUs: number;
    readonly samples: number;
    /** As {@link MatmulPoint}'s. */
    readonly weightBufferType?: string;
};

/**
 * Copy of the `distinct` experts a micro-batch of `batch` tokens uses, from the GPU's pinned host buffer to the GPU,
 * grouped into runs of consecutive experts as ggml_backend_sched_compute_splits copies them.
 */
export type ExpertCopyPoint = ExpertOperatorShape & {
    readonly device: string;
    readonly batch: number;
    readonly distinct: number;
    readonly bytes: number;
    readonly medianUs: number;
};

/** One layer's attention shape: what the attention timings are of. */
export type AttentionShape = {
    readonly headDim: number;
    readonly headDimV: number;
    readonly heads: number;
    readonly kvHeads: number;
};

/**
 * One layer's attention (llm_graph_context::build_attn_mha) for `tokens` new tokens over `keys` cached ones on one
 * device, with or without flash attention, K and V in `kvType`; slope-timed like {@link MatmulPoint}.
 */
export type AttentionPoint = {
    readonly device: string;
    readonly flash: boolean;
    /** ggml type name of the K and V caches (`"f16"`, `"q8_0"`, `"q4_0"`). */
    readonly kvType: string;
    readonly tokens: number;
    readonly keys: number;
    /** The device has no kernel for it (e.g. flash attention at this head size): llama.cpp would run it elsewhere. */
    readonly supported: boolean;
    readonly medianUs: number;
    readonly minUs: number;
    readonly samples: number;
};

/** Transfer costs between the host and one GPU device. */
export type TransferPoint = {
    readonly device: string;
    /** Host→device from the device's pinned host buffer type (CUDA_Host / Vulkan_Host). */
    readonly pinnedH2dBytesPerSec: number;
    /** Host→device from ordinary (pageable) memory, as for mmap'ed weights. */
    readonly pageableH2dBytesPerSec: number;
    readonly d2hBytesPerSec: number;
    /** One CPU↔GPU switch: a small activation copy + sync + one graph launch on the device, µs. */
    readonly switchUs: number;
    readonly copySmallUs: number;
    readonly launchUs: number;
};

/** Everything the cost model needs to know about this machine for one model's operator set. */
export type MachineProfile = {
    readonly version: 1 | 2 | 3 | 4 | 5;
    /** Cache key: machine + llama.cpp release + build + threads + operator set + batch sizes. */
    readonly key: string;
    readonly createdAt: string;
    readonly llamaCppRelease: string;
    readonly backend: string;
    readonly threads: number;
    readonly devices: readonly {readonly name: string; readonly type: "cpu" | "gpu"}[];
    readonly operators: readonly OperatorShape[];
    readonly matmuls: readonly MatmulPoint[];
    /** MUL_MAT_ID timings of the model's expert weights; absent for dense models and in older profiles. */
    readonly expertMatmuls?: readonly ExpertMatmulPoint[];
    /** Copies of used experts to each GPU; absent for dense models, CPU-only machines and older profiles. */
    readonly expertCopies?: readonly ExpertCopyPoint[];
    /** One layer's attention per device, flash attention on and off, per KV cache type; absent in older profiles. */
    readonly attentions?: readonly AttentionPoint[];
    readonly transfers: readonly TransferPoint[];
    /** Multi-threaded scan of a large buffer with the inference thread count. */
    readonly cpuReadBytesPerSec: number;
    /**
     * One (almost) empty graph on the CPU backend with the inference threads, µs: every single-op timing includes it
     * once. Absent in older profiles (then op times are used as measured).
     */
    readonly cpuLaunchUs?: number;
    /**
     * `"slope"`: each matmul time is the slope between a graph of one and a graph of K matmuls over distinct weights,
     * so the per-graph launch is already excluded (profiles made before this carry launch-inclusive times).
     */
    readonly matmulTiming?: "slope";
    readonly elapsedMs: number;
    /**
     * Other programs' CPU use while this profile was measured (cpuContention.ts); absent in older profiles and ones
     * too short to tell. A busy machine makes every CPU timing slow, so the plan's explanation says so.
     */
    readonly cpuContention?: CpuContention;
    /**
     * Fixed cost of one llama_decode beyond its matmuls (graph build, scheduling, sampling, node-llama-cpp's JS), µs,
     * measured on a tiny model by calibrateDecodeOverhead.ts; absent in profiles taken without it.
     */
    readonly decodeOverheadUs?: number;
    /**
     * Cost of one layer's non-matmul nodes per decode step, µs: the TPOT slope between two tiny models that differ only
     * in layer count (calibrateDecodeOverhead.ts), whose weights stay in the cache; absent in profiles taken without it.
     */
    readonly decodePerLayerUs?: number;
    /**
     * Cost of one CPU↔GPU switch inside a decode step, µs, end to end (the activations' copy, the GPU's launch and sync,
     * the CPU threads woken for the next split): calibrateDecodeOverhead.ts times a tiny model whose every decode step
     * switches a known number of times. Absent in profiles taken without a GPU or before it was measured; the cost
     * model then uses the transfer's `switchUs`.
     */
    readonly decodeSwitchUs?: number;
    /** The time limit it was measured under, ms (absent in profiles cached before it was recorded: the default). */
    readonly timeLimitMs?: number;
    /** The time limit cut the profile short; missing points are extrapolated. */
    readonly truncated: boolean;
    /** Set (never stored) on a profile read back from the cache: the file it came from. */
    readonly cachedFile?: string;
};

/** Which statistic of the timed runs the cost model uses. */
export type ProfileStatistic = "median" | "min";

function pointUs(point: MatmulPoint, statistic: ProfileStatistic): number {
    return statistic === "min" ? point.minUs : point.medianUs;
}

function sameOp(a: OperatorShape, b: OperatorShape): boolean {
    return a.type === b.type && a.rows === b.rows && a.cols === b.cols;
}

/**
 * Devices of the profile with no matmul timed at a prefill batch (more than one token). The profiler measures every
 * device's first prefill micro-batch whatever its time limit (native/src/TensorwiseProfiler.cpp, Profiler::run); a
 * profile without one (cached by an older build, whose time limit could cut a GPU to decode only) would have its
 * prefill extrapolated from decode, which is off by orders of magnitude on a GPU (bench/results/2026-11-27-h100/README.md).
 */
export function devicesWithoutPrefill(profile: Pick<MachineProfile, "devices" | "matmuls">): string[] {
    return profile.devices.map((d) => d.name)
        .filter((name) => !profile.matmuls.some((p) => p.device === name && p.batch > 1 && p.supported && p.medianUs > 0));
}

/**
 * Time of one weight matmul on `device` at `batch` tokens, µs. Between measured batch sizes it interpolates linearly;
 * below the smallest it takes the smallest. Above the largest it grows as another operator of the device (the same
 * type first) grew between those batch sizes where one was measured that far ({@link batchGrowth}), else linearly with
 * the batch. An operator the profile lacks (a truncated profile) is scaled from the measured one of the same type
 * with the nearest size, by weight elements. Throws when the device has no usable point at all.
 */
export function matmulUs(profile: MachineProfile, device: string, op: OperatorShape, batch: number,
    statistic: ProfileStatistic = "median"): number {
    const onDevice = profile.matmuls.filter((p) => p.device === device && p.supported && p.medianUs > 0);
    let points = onDevice.filter((p) => sameOp(p, op));
    let scale = 1;
    if (points.length === 0) {
        const elements = op.rows * op.cols;
        const sameType = onDevice.filter((p) => p.type === op.type);
        const pool = sameType.length > 0 ? sameType : onDevice;
        const nearest = pool.reduce<MatmulPoint | null>((best, p) =>
            best == null || Math.abs(Math.log(p.rows * p.cols / elements)) < Math.abs(Math.log(best.rows * best.cols / elements)) ? p : best, null);
        if (nearest == null)
            throw new Error(`the profile has no matmul timing on ${device}`);
        points = onDevice.filter((p) => sameOp(p, nearest));
        scale = elements / (nearest.rows * nearest.cols);
    }
    const sorted = [...points].sort((a, b) => a.batch - b.batch);
    const first = sorted[0]!;
    const last = sorted[sorted.length - 1]!;
    if (batch <= first.batch) return pointUs(first, statistic) * scale;
    if (batch >= last.batch) return pointUs(last, statistic) * batchGrowth(onDevice, last, batch, statistic) * scale;
    return interpolate(sorted.map((p) => ({batch: p.batch, us: pointUs(p, statistic)})), batch) * scale;
}

/**
 * How much an operator measured up to `last.batch` slows down from there to `batch`. A profile skips the large
 * batches of slow operators (profileMachine.ts maxEstimatedMsPerPoint), and scaling a batch-1 or batch-32 time
 * linearly prices a 64-token prompt on Mesa's llvmpipe several times too slow: a single token's matmul there is
 * mostly fixed cost (1024×1024 F16: 12.7 ms at 1 token, 123 ms at 32, 233 ms at 128 — not 32× and 4×). So the growth
 * is taken from an operator of the same device (the same type first, then the nearest size) measured beyond
 * `last.batch`, between the same two batch sizes; linear where none was. Never below 1 or above linear.
 */
function batchGrowth(onDevice: readonly MatmulPoint[], last: MatmulPoint, batch: number, statistic: ProfileStatistic): number {
    const linear = batch / last.batch;
    const beyond = onDevice.filter((p) => p.batch > last.batch && !sameOp(p, last));
    if (beyond.length === 0) return linear;
    // the same type first, then the nearest size (as TensorwiseProfiler.cpp batchGrowth ranks them)
    const elements = last.rows * last.cols;
    const rank = (p: MatmulPoint) => (p.type === last.type ? 0 : 1000) + Math.abs(Math.log(p.rows * p.cols / elements));
    const reference = beyond.reduce((best, p) => rank(p) < rank(best) ? p : best);
    const curve = onDevice.filter((p) => sameOp(p, reference)).sort((a, b) => a.batch - b.batch)
        .map((p) => ({batch: p.batch, us: pointUs(p, statistic)}));
    const from = interpolate(curve, last.batch);
    if (from <= 0) return linear;
    return Math.min(linear, Math.max(1, interpolate(curve, batch) / from));
}

/** Transfer costs for `device`; throws when the profile has none (a CPU-only profile). */
export function transfersOf(profile: MachineProfile, device: string): TransferPoint {
    const found = profile.transfers.find((t) => t.device === device);
    if (found == null) throw new Error(`the profile has no transfer costs for ${device}`);
    return found;
}

function sameExpertOp(a: ExpertOperatorShape, b: ExpertOperatorShape): boolean {
    return sameOp(a, b) && a.count === b.count && a.used === b.used;
}

/** Linear interpolation of `(batch, µs)` points sorted by batch; linear in the batch above the last, flat below the first. */
function interpolate(points: readonly {batch: number; us: number}[], batch: number): number {
    const first = points[0]!;
    const last = points[points.length - 1]!;
    if (batch <= first.batch) return first.us;
    if (batch >= last.batch) return last.us * batch / last.batch;
    for (let i = 1; i < points.length; i++) {
        const hi = points[i]!;
        const lo = points[i - 1]!;
        if (batch <= hi.batch) {
            const f = (batch - lo.batch) / (hi.batch - lo.batch);
            return lo.us * (1 - f) + hi.us * f;
        }
    }
    return last.us;
}

/**
 * Measured time of one MUL_MAT_ID of this expert weight over `batch` tokens on `device`, µs, interpolated between the
 * profiled batch sizes (linear in the batch above the largest, the smallest below it); `null` when the profile has no
 * timing for this exact expert shape on that device (dense profiles, older profiles): the caller then prices it from
 * dense matmuls.
 */
export function expertMatmulUs(profile: MachineProfile, device: string, op: ExpertOperatorShape, batch: number,
    statistic: ProfileStatistic = "median"): number | null {
    const points = (profile.expertMatmuls ?? [])
        .filter((p) => p.device === device && p.supported && p.medianUs > 0 && sameExpertOp(p, op))
        .sort((a, b) => a.batch - b.batch)
        .map((p) => ({batch: p.batch, us: statistic === "min" && p.minUs > 0 ? p.minUs : p.medianUs}));
    return points.length === 0 ? null : interpolate(points, batch);
}

/**
 * Measured time to copy `experts` of this expert weight's experts from pinned host memory to `device`, µs,
 * interpolated over the copies profiled (each micro-batch size copied the `distinct` experts it used); `null` without
 * a measurement for this shape.
 */
export function expertCopyUs(profile: MachineProfile, device: string, op: ExpertOperatorShape, experts: number): number | null {
    const points = (profile.expertCopies ?? [])
        .filter((p) => p.device === device && p.medianUs > 0 && p.distinct > 0 && sameExpertOp(p, op))
        .sort((a, b) => a.distinct - b.distinct)
        .map((p) => ({batch: p.distinct, us: p.medianUs}));
    // fewer experts than the smallest measured copy: proportionally less (a line through no copy at all)
    return points.length === 0 ? null : interpolate([{batch: 0, us: 0}, ...points], experts);
}

/**
 * One layer's measured attention on `device` for `tokens` new tokens over `keys` cached ones, µs, or `null` where the
 * profile has no supported point for this device, flash setting and cache type. Decode (one token) is piecewise linear
 * in the keys between (and beyond) the measured decode points; a micro-batch scales the nearest measured prefill point by
 * tokens × keys (the KQ and KQV products).
 */
export function attentionUs(profile: MachineProfile, device: string, flash: boolean, kvType: string, tokens: number, keys: number,
    statistic: ProfileStatistic = "median"): number | null {
    const points = (profile.attentions ?? []).filter((p) => p.device === device && p.flash === flash && p.kvType === kvType && p.supported && p.medianUs > 0);
    const value = (p: AttentionPoint): number => statistic === "min" && p.minUs > 0 ? p.minUs : p.medianUs;
    if (tokens === 1) {
        const decode = points.filter((p) => p.tokens === 1).sort((a, b) => a.keys - b.keys);
        if (decode.length === 0) return null;
        if (decode.length === 1) return value(decode[0]!) * keys / decode[0]!.keys;
        // piecewise linear between the measured key counts (the shortest carries the fixed cost of the op's nodes), the
        // outer segments extended
        let i = 0;
        while (i < decode.length - 2 && keys > decode[i + 1]!.keys) i++;
        const lo = decode[i]!, hi = decode[i + 1]!;
        const slope = (value(hi) - value(lo)) / (hi.keys - lo.keys);
        return Math.max(value(decode[0]!) * 0.5, value(lo) + slope * (keys - lo.keys));
    }
    const prefill = points.filter((p) => p.tokens > 1);
    if (prefill.length === 0) return null;
    const nearest = prefill.reduce((a, b) => Math.abs(Math.log(b.tokens * b.keys / (tokens * keys))) < Math.abs(Math.log(a.tokens * a.keys / (tokens * keys))) ? b : a);
    return value(nearest) * (tokens * keys) / (nearest.tokens * nearest.keys);
}

/** Whether the profile timed attention on `device` with this flash setting and cache type and found no kernel for it. */
export function attentionUnsupported(profile: MachineProfile, device: string, flash: boolean, kvType: string): boolean {
    const points = (profile.attentions ?? []).filter((p) => p.device === device && p.flash === flash && p.kvType === kvType);
    return points.length > 0 && points.every((p) => !p.supported);
}
