import {
    DraftSequenceTokenPredictor, InputLookupTokenPredictor, LlamaChatSession, resolveChatWrapper, type ChatWrapper, type LlamaContext, type LlamaContextSequence,
    type LlamaModel, type Token, type TokenPredictor
} from "node-llama-cpp";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {checkContextSize} from "./checkContextSize.js";
import {toMemoryReport} from "./memoryReport.js";
import type {MemoryReport} from "../../contract/memory.js";
import {defaultContextSize, resolveSettings, type KvCacheType, type ResolvedSettings} from "../../contract/settings.js";
import {runNativeGeneration, type NativeGenerationResult} from "./runNativeGeneration.js";
import type {NativeGenerateRequest} from "../native/tensorwiseBindings.js";
import {DEFAULT_DRAFT_MAX, DRAFT_MAX_LIMIT, LLAMA_SPECULATIVE_TYPE, type SpeculativeKind, type SpeculativeStats} from "../../contract/speculative.js";

/** Options of {@link PlacedModel.generate}. */
export type NativeGenerateOptions = {
    maxTokens: number;
    /** Defaults to `true`. */
    stopAtEog?: boolean;
    /** Defaults to 0 (greedy). */
    temperature?: number;
    /** Defaults to a random seed. */
    seed?: number;
    /** Defaults to 40 (node-llama-cpp's default), used when temperature > 0. */
    topK?: number;
    /** Defaults to 0.95 (node-llama-cpp's default), used when temperature > 0. */
    topP?: number;
    /** Defaults to 0 (off), used when temperature > 0. */
    minP?: number;
    /** Penalty on the last 64 generated tokens (newlines excepted, as node-llama-cpp's chat); 1 = off. Defaults to 1. */
    repeatPenalty?: number;
    /** See the native request's `promptChunkTargetMs` (electron/engine/native/tensorwiseBindings.ts). Defaults to 0 (off). */
    promptChunkTargetMs?: number;
    /** Reuse the prompt prefix still in the KV cache from the previous native generation. Defaults to `true`. */
    reusePrefix?: boolean;
    /** `false`: this generation without the speculative decoding the model was loaded with. Defaults to `true`. */
    speculative?: boolean;
    signal?: AbortSignal;
    /** Tokens as they come, in batches, with when each was sampled (`performance.now()` clock); `false` stops. */
    onTokens?: (tokens: readonly Token[], times: readonly number[]) => boolean | void;
    /**
     * Prompt progress after each micro-batch: tokens decoded by this call, and how many the KV cache already held.
     */
    onPromptProgress?: (progress: {decoded: number; reused: number; total: number}) => void;
};

/** {@link PlacedModelOptions} with the settings `PlacedModel.load` resolved (resolveSettings, electron/contract/settings.ts). */
export type ResolvedPlacedModelOptions = PlacedModelOptions & Omit<ResolvedSettings, "threads">;

/** The load options that carry a plan's settings (every knob of {@link ResolvedSettings}). */
export function settingsLoadOptions(settings: ResolvedSettings): Pick<PlacedModelOptions, keyof ResolvedSettings> {
    const {contextSize, batchSize, threads, useMmap, useGpu, opOffload, kvOffload, flashAttention, kvCacheType} = settings;
    return {contextSize, batchSize, threads, useMmap, useGpu, opOffload, kvOffload, flashAttention, kvCacheType};
}

/** node-llama-cpp's names of the KV cache types (its `GgmlType` keys). */
const KV_CACHE_GGML_TYPE: Readonly<Record<KvCacheType, "F16" | "Q8_0" | "Q4_0">> = {f16: "F16", q8_0: "Q8_0", q4_0: "Q4_0"};

/** A native generation, with how many prompt tokens the KV cache already held, and what speculation did. */
export type PlacedGeneration = NativeGenerationResult & {readonly reused: number; readonly speculative: SpeculativeStats | null};

/** Speculative decoding a model's generations run with (contract/speculative.ts). */
export type SpeculativeLoad = {
    readonly kind: SpeculativeKind;
    /** Most tokens a draft holds. Defaults to {@link DEFAULT_DRAFT_MAX}. */
    readonly nMax?: number;
    /** Fewest tokens a draft model's draft is used with (shorter ones are dropped). Defaults to 0. */
    readonly nMin?: number;
    /** The draft model (kind `"draft"`): its file and its placement, as the target's options name them. */
    readonly draft?: Pick<PlacedModelOptions, "modelPath" | "gpuLayers" | "overrides" | "useMmap">;
    /**
     * Overrides the speculation's own weights need, tried before the plan's (first match wins): an MTP head's block kept
     * where the planner priced it (speculative/mtpStep.ts). Defaults to none.
     */
    readonly overrides?: readonly TensorBufferOverride[];
    /**
     * n-gram lookup (kind `"ngram"`): the n-gram looked up and the most tokens drafted after it (llama.cpp's
     * `--spec-ngram-map-k-size-n` / `-size-m`). Default to llama.cpp's (12 and 48).
     */
    readonly ngramSizeN?: number;
    readonly ngramSizeM?: number;
};

/**
 * The draft a speculation runs on: a `"draft"` speculation's own model and context, or an `"mtp"` speculation's MTP
 * context of the target model itself (`model` null: not this runtime's to dispose).
 */
type DraftRuntime = {readonly model: LlamaModel | null; readonly context: LlamaContext};

/** One llama.cpp `--override-tensor` entry: tensors whose name matches `pattern` go to `bufferType`. */
export type TensorBufferOverride = {pattern: string; bufferType: string};

/** How to load a model: the placement (layers + per-tensor overrides) and the runtime settings. */
export type PlacedModelOptions = {
    /** The file llama.cpp loads. */
    modelPath: string;
    /**
     * The model's path as the user named it, where {@link modelPath} is that file pinned for the load (pinModelFile.ts):
     * what caches kept per model are keyed by. Defaults to `modelPath`.
     */
    sourcePath?: string;
    /**
     * Layers offloaded to the GPU before overrides apply. Per-tensor plans use `"max"` (every layer on the GPU) and move
     * tensors back to the host with overrides. Defaults to `"max"` when the llama has a GPU, else 0.
     */
    gpuLayers?: number | "max";
    /** Per-tensor buffer types, first match wins (llama.cpp `tensor_buft_overrides`). Defaults to none. */
    overrides?: readonly TensorBufferOverride[];
    /**
     * mmap the file. Defaults to `false` when part of the model is on a GPU (host tensors then live in pinned memory,
     * which llama.cpp copies to the GPU much faster: llama.cpp's ggml_backend_cuda_host_buffer_type / ggml_backend_vk_host_buffer_type), `true` for CPU-only loads.
     */
    useMmap?: boolean;
    /**
     * Context size in tokens. Defaults to DEFAULT_RUNTIME_SETTINGS.contextSize, or the model's trained context where
     * that is smaller (defaultContextSize, electron/contract/settings.ts).
     */
    contextSize?: number;
    /** Batch size = micro-batch (node-llama-cpp sets n_ubatch = n_batch). Defaults to DEFAULT_RUNTIME_SETTINGS.batchSize. */
    batchSize?: number;
    /** CPU threads. Defaults to the llama instance's maxThreads. */
    threads?: number;
    /**
     * Parallel sequences in the context, each with its own `contextSize` cells of KV cache; node-llama-cpp evaluates
     * the sequences that have work in one decode batch. Defaults to 1.
     */
    sequences?: number;
    /** Defaults to `false` (flash attention off, the same as our CUDA build with GGML_CUDA_FA=OFF); `true` when the KV cache is quantized. */
    flashAttention?: boolean;
    /**
     * Use the engine's GPU at all. `false` loads with llama.cpp's `--device none` (no GPU backend: nothing offloaded, no
     * GPU memory, CPU weights repacked where the CPU has faster kernels); `gpuLayers` must then be 0 and the overrides
     * name no GPU buffer type. Defaults to `true`.
     */
    useGpu?: boolean;
    /** llama.cpp's op offload (`--no-op-offload` = `false`). Defaults to `true` (llama.cpp's default). */
    opOffload?: boolean;
    /** KV cache and attention of GPU layers on the GPU (`--no-kv-offload` = `false`). Defaults to `true`. */
    kvOffload?: boolean;
    /** K and V cache element type (`-ctk`/`-ctv`). Defaults to `"f16"`. */
    kvCacheType?: KvCacheType;
    /** Speculative decoding for every generation. Defaults to none. */
    speculative?: SpeculativeLoad;
    /** Load progress, 0..1. */
    onProgress?: (progress: number) => void;
    signal?: AbortSignal;
};

/** A model loaded with a placement, with one context, and its measured memory. */
export class PlacedModel {
    private sequenceInstance: LlamaContextSequence | null = null;
    private chatSessionInstance: LlamaChatSession | null = null;
    /** Tokens the native loop left in the KV cache of sequence 0 (reused as a prefix by the next native generation). */
    private nativeTokens: Token[] = [];
    private chatWrapperInstance: ChatWrapper | null = null;
    /** The native generation in flight: one at a time per context. */
    private nativeRun: Promise<unknown> = Promise.resolve();

    private constructor(
        readonly engine: EngineLlama,
        readonly model: LlamaModel,
        readonly context: LlamaContext,
        readonly options: Readonly<ResolvedPlacedModelOptions>,
        readonly loadMs: number,
        /** The draft model and its context of a `"draft"` speculation (disposed before this model's context). */
        private readonly draft: DraftRuntime | null = null
    ) {}

    /** Loads the model and creates its context. Bad overrides are rejected before anything native is built. */
    static async load(engine: EngineLlama, options: PlacedModelOptions): Promise<PlacedModel> {
        const {llama, bindings} = engine;
        // a speculation's own overrides first: the first match wins
        const overrides = [...(options.speculative?.overrides ?? []), ...(options.overrides ?? [])];
        // Validate first: a clear error for an unknown buffer type or a pattern std::regex rejects.
        if (overrides.length > 0)
            bindings.tensorwiseValidateTensorBufferOverrides(overrides.map((entry) => [entry.pattern, entry.bufferType]));

        const useGpu = options.useGpu ?? true;
        const hasGpu = llama.gpu !== false && useGpu;
        const gpuLayers = options.gpuLayers ?? (hasGpu ? "max" : 0);
        if (!useGpu && gpuLayers !== 0)
            throw new Error(`a load without the GPU (--device none) cannot offload layers (gpuLayers ${gpuLayers})`);
        if (!useGpu) {
            const gpuBufferTypes = new Set(bindings.tensorwiseGetBufferTypes().filter((b) => b.deviceType !== "cpu" && b.device != null).map((b) => b.name));
            const onGpu = overrides.find((o) => gpuBufferTypes.has(o.bufferType));
            if (onGpu != null)
                throw new Error(`a load without the GPU (--device none) cannot place tensors on ${onGpu.bufferType} (override "${onGpu.pattern}")`);
        }
        const partlyOnGpu = hasGpu && gpuLayers !== 0;
        const started = performance.now();
        const resolved = resolveSettings({...options, useGpu, threads: options.threads ?? null}, {maxThreads: llama.maxThreads, partlyOnGpu});
        const {useMmap} = resolved;
        const model = await llama.loadModel({
            modelPath: options.modelPath,
            gpuLayers,
            useMmap,
            // an MTP speculation runs the model's multi-token-prediction layers, which llama.cpp skips otherwise
            ...(options.speculative?.kind === "mtp" ? {loadMtp: true} : {}),
            tensorBufferOverrides: overrides.length > 0 ? overrides : undefined,
            // llama.cpp's --device none: only when the GPU is not to be used (llama.cpp's own choice of devices otherwise)
            ...(useGpu ? {} : {devices: []}),
            // The plan, not node-llama-cpp's heuristics, decides what fits; the budget check happens in the planner.
            ignoreMemorySafetyChecks: true,
            onLoadProgress: options.onProgress,
            loadSignal: options.signal
        });
        try {
            const {threads: _resolvedThreads, ...knobs} = resolved;
            // no context chosen: the default, or the model's trained context where that is smaller (as llama.cpp's n_ctx 0)
            const loaded = {...options, ...knobs, contextSize: options.contextSize ?? defaultContextSize(model.trainContextSize)};
            checkSpeculative(options.speculative);
            const context = await PlacedModel.createContext(model, loaded);
            let draft: DraftRuntime | null = null;
            try {
                draft = options.speculative?.kind === "mtp"
                    ? {model: null, context: await PlacedModel.createContext(model, {...loaded, speculative: undefined}, context)}
                    : await PlacedModel.loadDraft(engine, loaded);
            } catch (error) {
                await context.dispose();
                throw error;
            }
            return new PlacedModel(engine, model, context, loaded, performance.now() - started, draft);
        } catch (error) {
            await model.dispose();
            throw error;
        }
    }

    /**
     * The draft model of a `"draft"` speculation, placed as its options say, with a context as the target's: the same
     * cells, sequences and micro-batch (llama.cpp's draft decodes every batch the target decodes), KV cache and threads.
     */
    private static async loadDraft(engine: EngineLlama, options: ResolvedPlacedModelOptions): Promise<DraftRuntime | null> {
        const draft = options.speculative?.kind === "draft" ? options.speculative.draft : undefined;
        if (draft == null) return null;
        const overrides = draft.overrides ?? [];
        if (overrides.length > 0)
            engine.bindings.tensorwiseValidateTensorBufferOverrides(overrides.map((entry) => [entry.pattern, entry.bufferType]));
        const model = await engine.llama.loadModel({
            modelPath: draft.modelPath, gpuLayers: options.useGpu ? draft.gpuLayers ?? "max" : 0, useMmap: draft.useMmap ?? options.useMmap,
            tensorBufferOverrides: overrides.length > 0 ? overrides : undefined, ...(options.useGpu ? {} : {devices: []}),
            ignoreMemorySafetyChecks: true, loadSignal: options.signal
        });
        try {
            return {model, context: await PlacedModel.createContext(model, {...options, speculative: undefined})};
        } catch (error) {
            await model.dispose();
            throw error;
        }
    }

    /**
     * The context for settings already resolved at load (`resolveSettings`, electron/contract/settings.ts); with
     * `mtpOf`, the multi-token-prediction context beside that context of the same model.
     */
    private static async createContext(model: LlamaModel, options: ResolvedPlacedModelOptions, mtpOf?: LlamaContext): Promise<LlamaContext> {
        const {contextSize, batchSize, useMmap, flashAttention, opOffload, kvOffload, kvCacheType} = options;
        const sequences = options.sequences ?? 1;
        await checkContextSize(model, {contextSize, batchSize, flashAttention, useMmap, sequences});
        const context = await model.createContext({
            contextSize,
            sequences,
            batchSize,
            threads: options.threads,
            flashAttention,
            experimentalKvCacheKeyType: KV_CACHE_GGML_TYPE[kvCacheType],
            experimentalKvCacheValueType: KV_CACHE_GGML_TYPE[kvCacheType],
            opOffload,
            kvOffload,
            ...(mtpOf != null ? {mtpOf} : {}),
            ignoreMemorySafetyChecks: true,
            createSignal: options.signal
        });
        // node-llama-cpp forwards these two only when tensorwise's JS patch is in place: never run without them silently
        const forwarded = context as unknown as {_tensorwiseOpOffload?: boolean; _tensorwiseKvOffload?: boolean};
        if (forwarded._tensorwiseOpOffload !== opOffload || forwarded._tensorwiseKvOffload !== kvOffload) {
            await context.dispose();
            throw new Error("node-llama-cpp did not forward op offload / KV offload to llama.cpp (its tensorwise JS patch is missing); run `npm run native`");
        }
        return context;
    }

    /**
     * The same weights with a new context of `sequences` parallel sequences (the KV cache grows with them): this
     * context is disposed first, so this object must not be used afterwards. The weights stay loaded; only the KV
     * cache and scratch are allocated again. Throws, keeping nothing usable, when the new context does not fit.
     */
    async withSequences(sequences: number): Promise<PlacedModel> {
        await this.nativeRun.catch(() => undefined);
        this.chatSessionInstance?.dispose();
        this.chatSessionInstance = null;
        this.sequenceInstance = null;
        this.nativeTokens = [];
        // the draft's context has as many sequences as this one's, and goes first (llama.cpp's speculators use both)
        await this.draft?.context.dispose();
        await this.context.dispose();
        const options = {...this.options, sequences, signal: undefined};
        const context = await PlacedModel.createContext(this.model, options);
        const draft = this.draft == null ? null : {model: this.draft.model,
            context: await PlacedModel.createContext(this.draft.model ?? this.model, {...options, speculative: undefined}, this.draft.model == null ? context : undefined)};
        return new PlacedModel(this.engine, this.model, context, options, this.loadMs, draft);
    }

    /**
     * A token predictor for one more of node-llama-cpp's sequences on this context (the server's slots generate through
     * node-llama-cpp, not the native loop), as the load's speculation asks: n-gram lookup as node-llama-cpp's
     * InputLookupTokenPredictor (the input's own tokens; not llama.cpp's ngram-map-k, so its drafts differ, while its
     * verified output is the same), a draft model as its DraftSequenceTokenPredictor on the draft context's next
     * sequence. `null` where there is no speculation; throws for an MTP head, which node-llama-cpp cannot drive.
     */
    servedTokenPredictor(): TokenPredictor | null {
        const spec = this.options.speculative;
        if (spec == null) return null;
        const nMax = spec.nMax ?? DEFAULT_DRAFT_MAX;
        if (spec.kind === "ngram")
            return new InputLookupTokenPredictor({patternLength: {min: 1, ...(spec.ngramSizeN != null ? {max: spec.ngramSizeN} : {})}, predictionLength: {max: nMax}});
        if (spec.kind === "draft" && this.draft != null)
            return new DraftSequenceTokenPredictor(this.draft.context.getSequence(), {minTokens: spec.nMin ?? 0, maxTokens: nMax});
        throw new Error("the server cannot speculate with an MTP head (its sequences generate through node-llama-cpp, which has no MTP predictor): " +
            "load the model with n-gram lookup or a draft model to serve it with speculation");
    }

    /** The context's one sequence, for node-llama-cpp's own evaluation (what the native loop cached is dropped first). */
    get sequence(): LlamaContextSequence {
        this.dropNativeCache();
        this.sequenceInstance ??= this.context.getSequence();
        return this.sequenceInstance;
    }

    private get addonContext(): {removeTokenCellsFromSequence(sequenceId: number, start: number, end: number): boolean} {
        return (this.context as unknown as {_ctx: {removeTokenCellsFromSequence(sequenceId: number, start: number, end: number): boolean}})._ctx;
    }

    private dropNativeCache(): void {
        if (this.nativeTokens.length === 0) return;
        this.addonContext.removeTokenCellsFromSequence(0, 0, -1);
        this.nativeTokens = [];
    }

    /**
     * Decodes `prompt` and generates up to `maxTokens` on a native thread (decode + sampling in C++, a ggml threadpool
     * attached, tokens streamed in batches), on the context's first sequence. The longest prefix of `prompt` still in
     * the KV cache from the previous native generation is reused. Calls are serialised per context. The result's
     * `times` are when each token was sampled, on the `performance.now()` clock. When `signal` aborts, the result
     * comes at once with what was delivered (runNativeGeneration.ts); the next call still waits for the native loop.
     */
    generate(prompt: readonly Token[], options: NativeGenerateOptions): Promise<PlacedGeneration> {
        const started = this.nativeRun.catch(() => undefined).then(() => this.startGeneration(prompt, options));
        this.nativeRun = started.then((run) => run.finished);
        // a failure reaches the caller through the result; the next call only waits for this one
        this.nativeRun.catch(() => undefined);
        return started.then((run) => run.result);
    }

    private async startGeneration(prompt: readonly Token[], options: NativeGenerateOptions): Promise<{result: Promise<PlacedGeneration>; finished: Promise<void>}> {
        if (prompt.length === 0) throw new Error("the prompt is empty");
        if (this.sequenceInstance != null && this.sequenceInstance.contextTokens.length > 0)
            await this.sequenceInstance.clearHistory();
        // keep the common prefix, but always decode at least the last prompt token (its logits start the reply)
        let keep = 0;
        while (options.reusePrefix !== false && keep < this.nativeTokens.length && keep < prompt.length - 1 && this.nativeTokens[keep] === prompt[keep]) keep++;
        this.nativeTokens = [];
        const calledAt = performance.now();
        const onTokens = options.onTokens;
        const run = runNativeGeneration(this.engine.bindings, this.addonContext, {
            sequenceId: 0, startPosition: keep, prompt: prompt.slice(keep), maxTokens: options.maxTokens,
            stopAtEog: options.stopAtEog ?? true, temperature: options.temperature ?? 0,
            seed: options.seed ?? Math.floor(Math.random() * 2 ** 32), topK: options.topK ?? 40, topP: options.topP ?? 0.95,
            minP: options.minP ?? 0, repeatPenalty: options.repeatPenalty ?? 1, promptChunkTargetMs: options.promptChunkTargetMs ?? 0,
            ...(options.speculative !== false ? this.nativeSpeculative() : {}),
            signal: options.signal,
            onPromptProgress: options.onPromptProgress == null ? undefined
                : (decoded) => options.onPromptProgress?.({decoded, reused: keep, total: prompt.length}),
            onTokens: onTokens == null ? undefined : (tokens, times) => onTokens(tokens, times.map((t) => calledAt + t))
        });
        // what the KV cache holds follows the native loop's own end, also after an early result
        const finished = run.finished.then((final) => {
            this.nativeTokens = [...prompt, ...final.tokens].slice(0, final.end.decodedTokens);
        });
        const result = run.result.then((generation) => ({...generation, times: generation.times.map((t) => calledAt + t), reused: keep,
            speculative: speculativeStats(this.options.speculative, generation.end.speculative)}));
        return {result, finished};
    }

    /**
     * Runs `work`, which evaluates on {@link sequence} with node-llama-cpp's own generators, after the native generation
     * in flight and before the next one: two evaluations on one sequence at once would interleave their tokens.
     */
    exclusive<T>(work: () => Promise<T>): Promise<T> {
        const run = this.nativeRun.catch(() => undefined).then(work);
        this.nativeRun = run.catch(() => undefined);
        return run;
    }

    /** The native request's speculative decoding, as loaded. */
    private nativeSpeculative(): {speculative?: NonNullable<NativeGenerateRequest["speculative"]>} {
        const spec = this.options.speculative;
        if (spec == null) return {};
        const draftContext = this.draft == null ? undefined : (this.draft.context as unknown as {_ctx: object})._ctx;
        return {speculative: {type: LLAMA_SPECULATIVE_TYPE[spec.kind], nMax: spec.nMax ?? DEFAULT_DRAFT_MAX, nMin: spec.nMin ?? 0,
            ...(spec.ngramSizeN != null ? {ngramSizeN: spec.ngramSizeN} : {}), ...(spec.ngramSizeM != null ? {ngramSizeM: spec.ngramSizeM} : {}),
            ...(draftContext != null ? {draftContext} : {})}};
    }

    /** The model's chat template, as node-llama-cpp's LlamaChat resolves it (resolveChatWrapper), without touching the sequence. */
    get chatWrapper(): ChatWrapper {
        this.chatWrapperInstance ??= resolveChatWrapper(this.model);
        return this.chatWrapperInstance;
    }

    /** A chat session on the shared sequence (its history is replaced per request). */
    chatSession(): LlamaChatSession {
        this.chatSessionInstance ??= new LlamaChatSession({contextSequence: this.sequence, autoDisposeSequence: false});
        return this.chatSessionInstance;
    }

    /** Weights / KV cache / scratch per buffer type, as llama.cpp accounts them for this model and context. */
    memory(): MemoryReport {
        const addonContext = (this.context as unknown as {_ctx: object})._ctx;
        return toMemoryReport(this.engine.bindings.tensorwiseGetContextMemoryBreakdown(addonContext));
    }

    async dispose(): Promise<void> {
        await this.nativeRun.catch(() => undefined);
        this.chatSessionInstance?.dispose();
        // the draft before the target: llama.cpp's speculators use both until they are freed
        await this.draft?.context.dispose();
        await this.draft?.model?.dispose();
        await this.context.dispose();
        await this.model.dispose();
    }
}

/** Refuses speculative options that cannot run, by name, before anything loads. */
function checkSpeculative(spec: SpeculativeLoad | undefined): void {
    if (spec == null) return;
    if (!Object.hasOwn(LLAMA_SPECULATIVE_TYPE, spec.kind)) throw new Error(`unknown speculative kind "${String(spec.kind)}"`);
    const nMax = spec.nMax ?? DEFAULT_DRAFT_MAX;
    if (!Number.isInteger(nMax) || nMax < 1 || nMax > DRAFT_MAX_LIMIT)
        throw new RangeError(`the most tokens to draft (--spec-draft-n-max) must be an integer from 1 to ${DRAFT_MAX_LIMIT}, not ${nMax}`);
    const nMin = spec.nMin ?? 0;
    if (!Number.isInteger(nMin) || nMin < 0 || nMin > nMax)
        throw new RangeError(`the fewest tokens to draft (--spec-draft-n-min) must be an integer from 0 to the most (${nMax}), not ${nMin}`);
    for (const [name, flag] of [["ngramSizeN", "--spec-ngram-map-k-size-n"], ["ngramSizeM", "--spec-ngram-map-k-size-m"]] as const) {
        const value = spec[name];
        if (value == null) continue;
        if (spec.kind !== "ngram") throw new Error(`speculative decoding of kind ${spec.kind} takes no n-gram size (${flag})`);
        if (!Number.isInteger(value) || value < 1 || value > DRAFT_MAX_LIMIT)
            throw new RangeError(`the n-gram size (${flag}) must be an integer from 1 to ${DRAFT_MAX_LIMIT}, not ${value}`);
    }
    if (spec.kind === "draft" && spec.draft == null) throw new Error("speculative decoding with a draft model needs the draft model (--model-draft)");
    if (spec.kind !== "draft" && spec.draft != null) throw new Error(`speculative decoding of kind ${spec.kind} takes no draft model`);
}

/** A reply's speculation as the contract reports it. */
function speculativeStats(spec: SpeculativeLoad | undefined, native: NativeGenerationResult["end"]["speculative"]): SpeculativeStats | null {
    if (spec == null || native == null) return null;
    return {kind: spec.kind, steps: native.steps, fullyAccepted: native.fullyAccepted, drafted: native.drafted, accepted: native.accepted, note: native.note};
}
