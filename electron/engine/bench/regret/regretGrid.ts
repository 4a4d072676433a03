/**
 * The configurations a user could type, per cell: placements (GPU hidden, `-ngl` 0 … all, FFN or experts → CPU with
 * every layer offloaded) × micro-batch × op offload × KV cache types × flash attention × KV offload × threads × mmap,
 * less the combinations that cannot differ in speed from one already in the grid or that llama.cpp refuses:
 * - `-ub` above the prompt is the prompt (one micro-batch either way), so micro-batches are clamped to it and
 *   deduplicated; a decode cell runs one micro-batch (decode's graph has one token whatever `-ub` is; the smallest
 *   reserves the least memory);
 * - op offload (`-nopo`) only where it can happen: a GPU in use, weights in host memory, a prompt cell and a micro-batch
 *   of at least the offload threshold (32, `GGML_OP_OFFLOAD_MIN_BATCH`; source: ggml-backend.cpp
 *   ggml_backend_sched_backend_id_from_cur, op_offload_min_batch_size);
 * - mmap only where weights stay in host memory; KV offload only where a GPU is in use;
 * - a quantized V cache only with flash attention (llama.cpp: "V cache quantization requires flash_attn", context
 *   creation fails; checked with llama-bench on this llama.cpp, CPU and Vulkan).
 */
import {ALL_GPU_LAYERS, keepsWeightsOnHost, normaliseConfig, configKey, type KvCacheType, type RegretCell, type RegretConfig} from "./regretConfig.js";

/** What the grid needs to know about the model. */
export type RegretModelFacts = {
    /** Repeating layers (llama.cpp's `-ngl` counts one more: the output layer). */
    readonly layerCount: number;
    /** The model has expert (`_exps`) weights: experts → CPU placements instead of FFN → CPU. */
    readonly moe: boolean;
};

/** One placement of the grid, with a short label for tables. */
export type RegretPlacement = {
    readonly label: string;
    readonly config: Pick<RegretConfig, "hideGpu" | "gpuLayers" | "overrides" | "cpuMoeLayers">;
};

/** The grid's dimensions. Every list is tried in full where it can matter (see the file comment). */
export type RegretGridOptions = {
    /** `-ngl` values besides 0 and all; defaults to {@link defaultLayerSplits}. */
    readonly gpuLayerSplits?: readonly number[];
    /** Placements to include: `hidden`, `layers`, `ffn-cpu` (dense), `experts-cpu` (MoE). Defaults to all four. */
    readonly placements?: readonly ("hidden" | "layers" | "ffn-cpu" | "experts-cpu")[];
    /** Defaults to {@link DEFAULT_UBATCHES}. */
    readonly ubatches?: readonly number[];
    /** Defaults to `[true, false]`. */
    readonly opOffload?: readonly boolean[];
    /** K cache types; defaults to `["f16", "q8_0"]`. */
    readonly typesK?: readonly KvCacheType[];
    /** V cache types; defaults to `["f16", "q8_0"]`. */
    readonly typesV?: readonly KvCacheType[];
    /** Defaults to `[false, true]`. */
    readonly flashAttention?: readonly boolean[];
    /** Defaults to `[true]` (`-nkvo 0` only). */
    readonly kvOffload?: readonly boolean[];
    /** Defaults to {@link defaultThreadCounts} of the machine's cores. */
    readonly threads: readonly number[];
    /** Defaults to `[false, true]`. */
    readonly mmap?: readonly boolean[];
    /** The op-offload threshold; defaults to 32. */
    readonly offloadMinBatch?: number;
};

/** Micro-batches to sweep: one below the 32-token op-offload threshold, and llama.cpp's usual sizes. */
export const DEFAULT_UBATCHES = [16, 128, 512, 2048] as const;

/** FFN weights of every layer (dense models): what users type to keep the FFN in host memory with `-ngl` all. */
export const FFN_CPU_PATTERN = "blk\\.[0-9]+\\.ffn_(up|down|gate)";

/** `-ngl` splits between 0 and all: a quarter, half and three quarters of the layers (deduplicated, 0 < n < layers + 1). */
export function defaultLayerSplits(layerCount: number): number[] {
    return [...new Set([0.25, 0.5, 0.75].map((share) => Math.round(layerCount * share)))].filter((n) => n > 0 && n <= layerCount);
}

/** Every count 1 … cores on up to 4 cores; beyond that 1, a quarter, half and all of them (a 16-core grid would be 16 wide). */
export function defaultThreadCounts(cores: number): number[] {
    if (!Number.isSafeInteger(cores) || cores < 1) throw new RangeError(`cores must be a positive integer, got ${cores}`);
    if (cores <= 4) return Array.from({length: cores}, (_, i) => i + 1);
    return [...new Set([1, Math.round(cores / 4), Math.round(cores / 2), cores])];
}

/** The placements of the grid for a model. */
export function regretPlacements(model: RegretModelFacts, options: Pick<RegretGridOptions, "gpuLayerSplits" | "placements"> = {}): RegretPlacement[] {
    const wanted = new Set(options.placements ?? ["hidden", "layers", "ffn-cpu", "experts-cpu"]);
    const none = {overrides: [], cpuMoeLayers: 0} as const;
    const out: RegretPlacement[] = [];
    if (wanted.has("hidden")) out.push({label: "GPU hidden", config: {hideGpu: true, gpuLayers: 0, ...none}});
    if (wanted.has("layers")) {
        const splits = options.gpuLayerSplits ?? defaultLayerSplits(model.layerCount);
        for (const n of [...new Set([0, ...splits.filter((s) => s > 0 && s <= model.layerCount), ALL_GPU_LAYERS])].sort((a, b) => a - b))
            out.push({label: n === ALL_GPU_LAYERS ? "-ngl all" : `-ngl ${n}`, config: {hideGpu: false, gpuLayers: n, ...none}});
    }
    if (wanted.has("ffn-cpu") && !model.moe)
        out.push({label: "-ngl all, FFN → CPU", config: {hideGpu: false, gpuLayers: ALL_GPU_LAYERS, overrides: [[FFN_CPU_PATTERN, "CPU"]], cpuMoeLayers: 0}});
    if (wanted.has("experts-cpu") && model.moe)
        for (const n of [...new Set([Math.ceil(model.layerCount / 2), model.layerCount])])
            out.push({label: n === model.layerCount ? "-ngl all, experts → CPU" : `-ngl all, experts of ${n} layers → CPU`,
                config: {hideGpu: false, gpuLayers: ALL_GPU_LAYERS, overrides: [], cpuMoeLayers: n}});
    return out;
}

/** The micro-batches a cell tries: clamped to the prompt (ttft), the smallest one (tpot). Deduplicated, ascending. */
export function cellUbatches(cell: RegretCell, ubatches: readonly number[]): number[] {
    if (ubatches.length === 0) throw new Error("the grid needs at least one micro-batch");
    if (cell.kind === "tpot") return [Math.min(...ubatches)];
    return [...new Set(ubatches.map((u) => Math.min(u, cell.tokens)))].sort((a, b) => a - b);
}

/** The (K type, V type, flash attention) triples llama.cpp accepts: a quantized V cache needs flash attention. */
export function kvCombinations(typesK: readonly KvCacheType[], typesV: readonly KvCacheType[], flashAttention: readonly boolean[]): {typeK: KvCacheType; typeV: KvCacheType; flashAttention: boolean}[] {
    const out: {typeK: KvCacheType; typeV: KvCacheType; flashAttention: boolean}[] = [];
    for (const fa of flashAttention)
        for (const typeK of typesK)
            for (const typeV of typesV)
                if (fa || !isQuantizedKvType(typeV)) out.push({typeK, typeV, flashAttention: fa});
    return out;
}

/** Block-quantized KV types (not f16/bf16/f32). */
export function isQuantizedKvType(type: KvCacheType): boolean {
    return type !== "f16" && type !== "bf16" && type !== "f32";
}

/** Every configuration of the grid for one cell, each once (by {@link configKey}), placements in {@link regretPlacements} order. */
export function enumerateRegretGrid(model: RegretModelFacts, cell: RegretCell, options: RegretGridOptions): RegretConfig[] {
    const minBatch = options.offloadMinBatch ?? 32;
    const kv = kvCombinations(options.typesK ?? ["f16", "q8_0"], options.typesV ?? ["f16", "q8_0"], options.flashAttention ?? [false, true]);
    if (options.threads.length === 0) throw new Error("the grid needs at least one thread count");
    const seen = new Map<string, RegretConfig>();
    for (const placement of regretPlacements(model, options)) {
        const base = {...placement.config, ubatch: 0, opOffload: true, typeK: "f16", typeV: "f16", flashAttention: false, kvOffload: true, threads: 1, mmap: false} satisfies RegretConfig;
        const host = keepsWeightsOnHost(base);
        const gpu = !base.hideGpu;
        for (const ubatch of cellUbatches(cell, options.ubatches ?? DEFAULT_UBATCHES)) {
            const offloadMatters = gpu && host && cell.kind === "ttft" && ubatch >= minBatch;
            for (const opOffload of offloadMatters ? options.opOffload ?? [true, false] : [true])
                for (const k of kv)
                    for (const kvOffload of gpu ? options.kvOffload ?? [true] : [true])
                        for (const threads of options.threads)
                            for (const mmap of host ? options.mmap ?? [false, true] : [false]) {
                                const config = normaliseConfig({...base, ubatch, opOffload, ...k, kvOffload, threads, mmap}, model.layerCount);
                                const key = configKey(config);
                                if (!seen.has(key)) seen.set(key, config);
                            }
        }
    }
    return [...seen.values()];
}

/** The label of a configuration's placement (as {@link regretPlacements} names it), for tables. */
export function placementLabel(config: RegretConfig): string {
    if (config.hideGpu) return "GPU hidden";
    const layers = config.gpuLayers === ALL_GPU_LAYERS ? "-ngl all" : `-ngl ${config.gpuLayers}`;
    const parts = [layers];
    if (config.overrides.length > 0) parts.push(config.overrides.map(([p, b]) => `-ot ${p}=${b}`).join(";"));
    if (config.cpuMoeLayers > 0) parts.push(`-ncmoe ${config.cpuMoeLayers}`);
    return parts.join(" ");
}
