import {LlamaChatSession, type LlamaContext, type LlamaContextSequence, type LlamaModel} from "node-llama-cpp";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {checkContextSize} from "./checkContextSize.js";
import {toMemoryReport} from "./memoryReport.js";
import type {MemoryReport} from "../../contract/memory.js";
import {DEFAULT_RUNTIME_SETTINGS} from "../../contract/settings.js";

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
    /** Context size in tokens. Defaults to DEFAULT_RUNTIME_SETTINGS.contextSize (electron/contract/settings.ts). */
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

    private constructor(
        readonly engine: EngineLlama,
        readonly model: LlamaModel,
        readonly context: LlamaContext,
        readonly options: Readonly<PlacedModelOptions>,
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
        const useMmap = options.useMmap ?? !partlyOnGpu;
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
            const contextSize = options.contextSize ?? DEFAULT_RUNTIME_SETTINGS.contextSize;
            const batchSize = options.batchSize ?? DEFAULT_RUNTIME_SETTINGS.batchSize;
            const flashAttention = options.flashAttention ?? false;
            const sequences = options.sequences ?? 1;
            await checkContextSize(model, {contextSize, batchSize, flashAttention, useMmap, sequences});
            const context = await model.createContext({
                contextSize,
                sequences,
                batchSize,
                threads: options.threads,
                flashAttention,
                ignoreMemorySafetyChecks: true,
                createSignal: options.signal
            });
            return new PlacedModel(engine, model, context, options, performance.now() - started);
        } catch (error) {
            await model.dispose();
            throw error;
        }
    }

    /** The context's one sequence, shared by chat and raw generation. */
    get sequence(): LlamaContextSequence {
        this.sequenceInstance ??= this.context.getSequence();
        return this.sequenceInstance;
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
        this.chatSessionInstance?.dispose();
        await this.context.dispose();
        await this.model.dispose();
    }
}
