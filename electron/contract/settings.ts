/**
 * What a client chooses for a load: the GPU budget and the runtime settings, with the one set of defaults the UI, the
 * CLI, the planner and the runtime all start from.
 */

/** Budget for the GPU: free VRAM minus a margin, a fixed size, or a share of the model's weights. */
export type Budget = {kind: "auto"} | {kind: "mib"; mib: number} | {kind: "percent"; percent: number};

/** A budget a benchmark can compare (`auto` depends on the moment's free VRAM, so a run compares fixed budgets). */
export type FixedBudget = Exclude<Budget, {kind: "auto"}>;

/**
 * Element types of the KV cache tensorwise offers (llama.cpp's `-ctk` / `-ctv`): F16 (llama.cpp's default) and the two
 * quantized types every backend runs. A quantized cache halves or quarters the KV memory and its decode reads, but
 * changes the model's outputs slightly, so it is only used when chosen.
 */
export const KV_CACHE_TYPES = ["f16", "q8_0", "q4_0"] as const;

export type KvCacheType = (typeof KV_CACHE_TYPES)[number];

export function isKvCacheType(value: unknown): value is KvCacheType {
    return typeof value === "string" && (KV_CACHE_TYPES as readonly string[]).includes(value);
}

/** Settings of a loaded model's context. */
export type RuntimeSettings = {
    /** Context size in tokens. */
    contextSize: number;
    /** Micro-batch in tokens (node-llama-cpp sets n_ubatch = n_batch). */
    batchSize: number;
    /** CPU threads; `null`: the engine's own count. */
    threads: number | null;
    /** Memory-map the weights; `null`: the planner decides (off for mixed placements, so host weights are pinned). */
    useMmap: boolean | null;
    /**
     * Use the GPU at all; `false` is llama.cpp's `--device none`: no GPU backend, so nothing is offloaded, nothing is
     * reserved on the GPU, and the CPU's weights may be repacked for its faster kernels. `null`: the planner decides
     * (a manual load uses the GPU).
     */
    useGpu: boolean | null;
    /**
     * llama.cpp's op offload (`--no-op-offload` turns it off): a GPU runs every prompt op of a micro-batch of 32 tokens
     * or more, copying host weights over per micro-batch. `null`: the planner decides (llama.cpp's `true` elsewhere).
     */
    opOffload: boolean | null;
    /**
     * The KV cache (and attention) of GPU layers on the GPU (`--no-kv-offload` turns it off). `null`: the planner
     * decides (llama.cpp's `true` elsewhere).
     */
    kvOffload: boolean | null;
    /** Flash attention (`-fa on`). `null`: the planner decides (off elsewhere, as llama.cpp's CPU default). */
    flashAttention: boolean | null;
    /**
     * Element type of the K and V caches (`-ctk`/`-ctv`). Quantized types need flash attention (llama.cpp refuses a
     * quantized V cache without it). Defaults to `"f16"`: a quantized cache is opt-in.
     */
    kvCacheType: KvCacheType;
};

/**
 * The defaults of every load: a 2048-token context, a 512-token micro-batch and an F16 KV cache; threads, mmap, GPU use,
 * op offload, KV offload and flash attention left to the engine and the planner.
 */
export const DEFAULT_RUNTIME_SETTINGS: Readonly<RuntimeSettings> = Object.freeze({
    contextSize: 2048,
    batchSize: 512,
    threads: null,
    useMmap: null,
    useGpu: null,
    opOffload: null,
    kvOffload: null,
    flashAttention: null,
    kvCacheType: "f16"
});

/** The knobs the planner chooses when the client left them `null`. */
export const PLANNED_KNOBS = ["useGpu", "opOffload", "kvOffload", "flashAttention"] as const satisfies readonly (keyof RuntimeSettings)[];

/**
 * The context size of a load whose client chose none: {@link DEFAULT_RUNTIME_SETTINGS}' 2048 tokens, or the model's
 * trained context (`<arch>.context_length`) where that is smaller, as llama.cpp takes the trained context for n_ctx 0
 * (source: llama_context ctor, `cparams.n_ctx = params.n_ctx == 0 ? hparams.n_ctx_train : params.n_ctx`). A context
 * the client chose is kept, larger or not (the runtime refuses one too far past the trained context, checkContextSize.ts).
 */
export function defaultContextSize(trainedContextSize?: number | null): number {
    const fallback = DEFAULT_RUNTIME_SETTINGS.contextSize;
    return trainedContextSize != null && trainedContextSize > 0 && trainedContextSize < fallback ? trainedContextSize : fallback;
}

/**
 * Settings with every choice made: what a plan chooses and what a loaded model runs with (threads and mmap decided).
 * The same fields as {@link RuntimeSettings}, so one type travels from the UI through the planner to the runtime.
 */
export type ResolvedSettings = {readonly [K in keyof RuntimeSettings]-?: NonNullable<RuntimeSettings[K]>};

/** The knobs of a plan beyond placement, context, micro-batch, threads and mmap. */
export type ContextKnobs = Pick<ResolvedSettings, "useGpu" | "opOffload" | "kvOffload" | "flashAttention" | "kvCacheType">;

/** The knobs of resolved settings. */
export function contextKnobs(settings: ContextKnobs): ContextKnobs {
    const {useGpu, opOffload, kvOffload, flashAttention, kvCacheType} = settings;
    return {useGpu, opOffload, kvOffload, flashAttention, kvCacheType};
}

/** `settings` over the defaults; absent fields keep {@link DEFAULT_RUNTIME_SETTINGS}. */
export function withDefaultSettings(settings: Partial<RuntimeSettings> = {}): RuntimeSettings {
    return {
        contextSize: settings.contextSize ?? DEFAULT_RUNTIME_SETTINGS.contextSize,
        batchSize: settings.batchSize ?? DEFAULT_RUNTIME_SETTINGS.batchSize,
        threads: settings.threads !== undefined ? settings.threads : DEFAULT_RUNTIME_SETTINGS.threads,
        useMmap: settings.useMmap !== undefined ? settings.useMmap : DEFAULT_RUNTIME_SETTINGS.useMmap,
        useGpu: settings.useGpu ?? DEFAULT_RUNTIME_SETTINGS.useGpu,
        opOffload: settings.opOffload ?? DEFAULT_RUNTIME_SETTINGS.opOffload,
        kvOffload: settings.kvOffload ?? DEFAULT_RUNTIME_SETTINGS.kvOffload,
        flashAttention: settings.flashAttention ?? DEFAULT_RUNTIME_SETTINGS.flashAttention,
        kvCacheType: settings.kvCacheType ?? DEFAULT_RUNTIME_SETTINGS.kvCacheType
    };
}

/**
 * `settings` over the defaults with what was left to the engine decided: its own thread count, mmap only when no
 * weight is on a GPU (a mixed placement loads without mmap, so its host weights sit in the GPU's pinned host buffer),
 * and a context that fits the model when none was chosen ({@link defaultContextSize} of `engine.trainedContextSize`).
 */
export function resolveSettings(settings: Partial<RuntimeSettings>, engine: {
    maxThreads: number; partlyOnGpu: boolean;
    /** The model's trained context (`<arch>.context_length`); `null` or absent: unknown. */
    trainedContextSize?: number | null;
}): ResolvedSettings {
    const chosen = withDefaultSettings(settings);
    const problem = settingsConflict(chosen);
    if (problem != null) throw new RangeError(problem);
    return {
        contextSize: settings.contextSize ?? defaultContextSize(engine.trainedContextSize),
        batchSize: chosen.batchSize,
        threads: chosen.threads ?? engine.maxThreads,
        useMmap: chosen.useMmap ?? !engine.partlyOnGpu,
        useGpu: chosen.useGpu ?? true,
        opOffload: chosen.opOffload ?? true,
        kvOffload: chosen.kvOffload ?? true,
        flashAttention: chosen.flashAttention ?? chosen.kvCacheType !== "f16",
        kvCacheType: chosen.kvCacheType
    };
}

/**
 * Why these settings cannot be loaded together, or `null`: a quantized KV cache with flash attention turned off
 * (source: llama_init_from_model refuses a quantized V cache without flash attention, src/llama-context.cpp).
 */
export function settingsConflict(settings: Pick<RuntimeSettings, "kvCacheType" | "flashAttention">): string | null {
    if (settings.kvCacheType !== "f16" && settings.flashAttention === false)
        return `a ${settings.kvCacheType} KV cache needs flash attention (llama.cpp refuses a quantized V cache without it); turn flash attention on or use an f16 KV cache`;
    return null;
}
