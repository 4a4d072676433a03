import {LlamaChatSession, resolveChatWrapper, type ChatWrapper, type LlamaContext, type LlamaContextSequence, type LlamaModel, type Token} from "node-llama-cpp";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {checkContextSize} from "./checkContextSize.js";
import {toMemoryReport} from "./memoryReport.js";
import type {MemoryReport} from "../../contract/memory.js";
import {defaultContextSize, resolveSettings} from "../../contract/settings.js";
import {runNativeGeneration, type NativeGenerationResult} from "./runNativeGeneration.js";

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
    signal?: AbortSignal;
    /** Tokens as they come, in batches, with when each was sampled (`performance.now()` clock); `false` stops. */
    onTokens?: (tokens: readonly Token[], times: readonly number[]) => boolean | void;
    /**
     * Prompt progress after each micro-batch: tokens decoded by this call, and how many the KV cache already held.
     */
    onPromptProgress?: (progress: {decoded: number; reused: number; total: number}) => void;
};

/** {@link PlacedModelOptions} with the settings `PlacedModel.load` resolved (resolveSettings, electron/contract/settings.ts). */
export type ResolvedPlacedModelOptions = PlacedModelOptions & {readonly contextSize: number; readonly batchSize: number; readonly useMmap: boolean};

/** A native generation, with how many prompt tokens the KV cache already held. */
export type PlacedGeneration = NativeGenerationResult & {readonly reused: number};

/** One llama.cpp `--override-tensor` entry: tensors whose name matches `pattern` go to `bufferType`. */
export type TensorBufferOverride = {pattern: string; bufferType: string};

/** How to load a model: the placement (layers + per-tensor overrides) and the runtime settings. */
export type PlacedModelOptions = {
    modelPath: string;
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
    /** Defaults to `false` (flash attention off, the same as our CUDA build with GGML_CUDA_FA=OFF). */
    flashAttention?: boolean;
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
        readonly loadMs: number
    ) {}

    /** Loads the model and creates its context. Bad overrides are rejected before anything native is built. */
    static async load(engine: EngineLlama, options: PlacedModelOptions): Promise<PlacedModel> {
        const {llama, bindings} = engine;
        const overrides = options.overrides ?? [];
        // Validate first: a clear error for an unknown buffer type or a pattern std::regex rejects.
        if (overrides.length > 0)
            bindings.tensorwiseValidateTensorBufferOverrides(overrides.map((entry) => [entry.pattern, entry.bufferType]));

        const hasGpu = llama.gpu !== false;
        const gpuLayers = options.gpuLayers ?? (hasGpu ? "max" : 0);
        const partlyOnGpu = hasGpu && gpuLayers !== 0;
        const started = performance.now();
        const {useMmap, batchSize} = resolveSettings(options, {maxThreads: llama.maxThreads, partlyOnGpu});
        const model = await llama.loadModel({
            modelPath: options.modelPath,
            gpuLayers,
            useMmap,
            tensorBufferOverrides: overrides.length > 0 ? overrides : undefined,
            // The plan, not node-llama-cpp's heuristics, decides what fits; the budget check happens in the planner.
            ignoreMemorySafetyChecks: true,
            onLoadProgress: options.onProgress,
            loadSignal: options.signal
        });
        try {
            const contextSize = options.contextSize ?? defaultContextSize(model.trainContextSize);
            const resolved = {...options, useMmap, contextSize, batchSize};
            const context = await PlacedModel.createContext(model, resolved);
            return new PlacedModel(engine, model, context, resolved, performance.now() - started);
        } catch (error) {
            await model.dispose();
            throw error;
        }
    }

    /** The context for settings already resolved at load (`resolveSettings`, electron/contract/settings.ts). */
    private static async createContext(model: LlamaModel, options: ResolvedPlacedModelOptions): Promise<LlamaContext> {
        const {contextSize, batchSize, useMmap} = options;
        const flashAttention = options.flashAttention ?? false;
        const sequences = options.sequences ?? 1;
        await checkContextSize(model, {contextSize, batchSize, flashAttention, useMmap, sequences});
        return await model.createContext({
            contextSize,
            sequences,
            batchSize,
            threads: options.threads,
            flashAttention,
            ignoreMemorySafetyChecks: true,
            createSignal: options.signal
        });
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
        await this.context.dispose();
        const options = {...this.options, sequences, signal: undefined};
        const context = await PlacedModel.createContext(this.model, options);
        return new PlacedModel(this.engine, this.model, context, options, this.loadMs);
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
            signal: options.signal,
            onPromptProgress: options.onPromptProgress == null ? undefined
                : (decoded) => options.onPromptProgress?.({decoded, reused: keep, total: prompt.length}),
            onTokens: onTokens == null ? undefined : (tokens, times) => onTokens(tokens, times.map((t) => calledAt + t))
        });
        // what the KV cache holds follows the native loop's own end, also after an early result
        const finished = run.finished.then((final) => {
            this.nativeTokens = [...prompt, ...final.tokens].slice(0, final.end.decodedTokens);
        });
        const result = run.result.then((generation) => ({...generation, times: generation.times.map((t) => calledAt + t), reused: keep}));
        return {result, finished};
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
        await this.context.dispose();
        await this.model.dispose();
    }
}
