/**
 * `POST /v1/embeddings` on the served model: node-llama-cpp's embedding context (`LlamaModel.createEmbeddingContext`,
 * `LlamaEmbeddingContext.getEmbeddingFor`), a second llama.cpp context with embeddings on, created on the first request
 * (most servers never get one) and kept until the server closes. Its vector is pooled as llama.cpp pools for that model
 * (the GGUF's pooling type; without one, the last token's hidden state, as node-llama-cpp reads it), then scaled to
 * unit length as llama-server answers `/v1/embeddings` (`common_embd_normalize` with its default `embd_normalize` 2).
 * What the context takes (KV cache and scratch) is measured once it exists and logged; a context that cannot be made
 * (memory, an encoder-decoder model) is a 503 or 400 that says why, and the next request tries again.
 */
import type {LlamaEmbeddingContext, Token} from "node-llama-cpp";
import type {MemoryReport} from "../../../contract/memory.js";
import type {PlacedModel} from "../../../engine/runtime/PlacedModel.js";
import {toMemoryReport} from "../../../engine/runtime/memoryReport.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import {parseEmbeddingRequest, type EmbeddingRequest} from "./parseEmbeddingRequest.js";
import {longestTokenBytes} from "../../generation/promptBound.js";

export type EmbeddingAnswer = {body: unknown; promptTokens: number};

export class ServedEmbeddings {
    private context: Promise<LlamaEmbeddingContext> | null = null;
    private memoryReport: MemoryReport | null = null;
    private readonly maxTokenBytes: number;

    /** `contextSize`: tokens of the embedding context, the longest input it takes (the served sequences' size). */
    constructor(private readonly placed: PlacedModel, private readonly contextSize: number, private readonly log: (line: string) => void) {
        this.maxTokenBytes = longestTokenBytes(placed.model);
    }

    /** The model's embedding size (`data[].embedding.length`). */
    get vectorSize(): number {
        return this.placed.model.embeddingVectorSize;
    }

    /** What the embedding context takes once made (KV cache and scratch per buffer type), else `null`. */
    get memory(): MemoryReport | null {
        return this.memoryReport;
    }

    /** Parses `body`, embeds each input in order (stopping when `signal` aborts), and returns OpenAI's answer. */
    async answer(body: unknown, modelId: string, signal: AbortSignal): Promise<EmbeddingAnswer> {
        const request = parseEmbeddingRequest(body, {vectorSize: this.vectorSize, vocabularySize: vocabularySize(this.placed)});
        const tokenLists = await this.tokenize(request);
        const context = await this.embeddingContext();
        const data: {object: "embedding"; index: number; embedding: number[] | string}[] = [];
        let promptTokens = 0;
        for (const [index, tokens] of tokenLists.entries()) {
            signal.throwIfAborted();
            const length = context.calculateInputLength(tokens);
            if (length >= this.contextSize)
                throw OpenAiError.badRequest(`${inputName(request, index)} is ${length} tokens long; this server embeds at most ${this.contextSize - 1} tokens per input.`,
                    inputName(request, index), "context_length_exceeded");
            const vector = normalized((await context.getEmbeddingFor(tokens)).vector);
            promptTokens += length;
            data.push({object: "embedding", index, embedding: request.encodingFormat === "base64" ? base64Floats(vector) : vector});
        }
        return {promptTokens, body: {object: "list", data, model: modelId, usage: {prompt_tokens: promptTokens, total_tokens: promptTokens}}};
    }

    async close(): Promise<void> {
        const context = await this.context?.catch(() => null);
        await context?.dispose();
    }

    /** Token ids of each input; a text is refused by its byte count alone when no tokenization could make it fit. */
    private async tokenize(request: EmbeddingRequest): Promise<Token[][]> {
        const lists: Token[][] = [];
        for (const [index, input] of request.inputs.entries()) {
            if (input.kind === "tokens") {
                lists.push(input.tokens as Token[]);
                continue;
            }
            const minimum = Math.ceil(Buffer.byteLength(input.text) / this.maxTokenBytes);
            if (minimum >= this.contextSize)
                throw OpenAiError.badRequest(`${inputName(request, index)} is at least ${minimum} tokens long; this server embeds at most ${this.contextSize - 1} tokens per input.`,
                    inputName(request, index), "context_length_exceeded");
            lists.push(this.placed.model.tokenize(input.text, false));
            // one input at a time, so streams on the same thread keep flowing between them
            await new Promise((resolve) => setImmediate(resolve));
        }
        return lists;
    }

    private embeddingContext(): Promise<LlamaEmbeddingContext> {
        this.context ??= this.createContext();
        const made = this.context;
        made.catch(() => {
            if (this.context === made)
                this.context = null;
        });
        return made;
    }

    private async createContext(): Promise<LlamaEmbeddingContext> {
        if (this.vectorSize <= 0)
            throw new OpenAiError(400, "This model has no embedding output, so this server cannot compute embeddings with it.", "invalid_request_error", "embeddings_unsupported");
        let context: LlamaEmbeddingContext;
        try {
            // the whole input in one batch: a pooled (non-causal) model needs it there (llama.cpp's n_ubatch >= n_tokens)
            context = await this.placed.model.createEmbeddingContext({contextSize: this.contextSize, batchSize: this.contextSize, threads: this.placed.options.threads});
        } catch (error) {
            const why = error instanceof Error ? error.message : String(error);
            if (/encoder-decoder/i.test(why))
                throw new OpenAiError(400, "This model (an encoder-decoder) cannot compute embeddings through llama.cpp.", "invalid_request_error", "embeddings_unsupported");
            throw new OpenAiError(503, `This server cannot compute embeddings now: a ${this.contextSize}-token embedding context does not fit (${why.slice(0, 200)}).`,
                "server_error", "embeddings_unavailable");
        }
        // source: LlamaEmbeddingContext keeps its LlamaContext as `_llamaContext` (node-llama-cpp 3.22.1), whose addon context llama.cpp accounts
        const addonContext = (context as unknown as {_llamaContext: {_ctx: object}})._llamaContext._ctx;
        this.memoryReport = toMemoryReport(this.placed.engine.bindings.tensorwiseGetContextMemoryBreakdown(addonContext));
        const total = [...this.memoryReport.bufferTypes].reduce((sum, entry) => sum + entry.kvCacheBytes + entry.scratchBytes, 0);
        this.log(`embeddings: made an embedding context of ${this.contextSize} tokens (${(total / 1024 / 1024).toFixed(1)} MiB of KV cache and scratch)`);
        return context;
    }
}

/** The vocabulary's size, from the GGUF's token list (what every token id must be below). */
function vocabularySize(placed: PlacedModel): number {
    const metadata = placed.model.fileInfo.metadata as {tokenizer?: {ggml?: {tokens?: readonly unknown[]}}};
    return metadata.tokenizer?.ggml?.tokens?.length ?? 0;
}

function inputName(request: EmbeddingRequest, index: number): string {
    return request.inputs.length === 1 ? "`input`" : `input[${index}]`;
}

/** `vector` scaled to unit length (source: llama.cpp common/common.cpp common_embd_normalize, embd_norm = 2). */
function normalized(vector: readonly number[]): number[] {
    const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
    return norm > 0 ? vector.map((value) => value / norm) : [...vector];
}

/** OpenAI's `encoding_format: "base64"`: the vector as little-endian float32 bytes, base64. */
function base64Floats(vector: readonly number[]): string {
    const floats = Float32Array.from(vector);
    return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString("base64");
}

