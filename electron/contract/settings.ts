/**
 * What a client chooses for a load: the GPU budget and the runtime settings, with the one set of defaults the UI, the
 * CLI, the planner and the runtime all start from.
 */

/** Budget for the GPU: free VRAM minus a margin, a fixed size, or a share of the model's weights. */
export type Budget = {kind: "auto"} | {kind: "mib"; mib: number} | {kind: "percent"; percent: number};

/** A budget a benchmark can compare (`auto` depends on the moment's free VRAM, so a run compares fixed budgets). */
export type FixedBudget = Exclude<Budget, {kind: "auto"}>;

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
};

/** The defaults of every load: a 2048-token context and a 512-token micro-batch; threads and mmap left to the engine. */
export const DEFAULT_RUNTIME_SETTINGS: Readonly<RuntimeSettings> = Object.freeze({
    contextSize: 2048,
    batchSize: 512,
    threads: null,
    useMmap: null
});

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

/** `settings` over the defaults; absent fields keep {@link DEFAULT_RUNTIME_SETTINGS}. */
export function withDefaultSettings(settings: Partial<RuntimeSettings> = {}): RuntimeSettings {
    return {
        contextSize: settings.contextSize ?? DEFAULT_RUNTIME_SETTINGS.contextSize,
        batchSize: settings.batchSize ?? DEFAULT_RUNTIME_SETTINGS.batchSize,
        threads: settings.threads !== undefined ? settings.threads : DEFAULT_RUNTIME_SETTINGS.threads,
        useMmap: settings.useMmap !== undefined ? settings.useMmap : DEFAULT_RUNTIME_SETTINGS.useMmap
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
    return {
        contextSize: settings.contextSize ?? defaultContextSize(engine.trainedContextSize),
        batchSize: chosen.batchSize,
        threads: chosen.threads ?? engine.maxThreads,
        useMmap: chosen.useMmap ?? !engine.partlyOnGpu
    };
}
