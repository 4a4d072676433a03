import {GgufWriter, ggufValue, type GgufMetadataValue, type GgufTensorSpec} from "./GgufWriter.js";
import {qkBlockSize, type EncodableType} from "./quantize.js";
import {makeOnesF32, makeWeightPool, mixSeed, replayPool} from "./syntheticTensorData.js";
import {buildSyntheticVocab, syntheticChatTemplate} from "./syntheticVocab.js";

/** Type of the matmul weights of a synthetic model; norms are always F32. */
export type SyntheticWeightType = EncodableType;

/** Architectures the writer can produce: dense or Mixtral-style MoE `llama`, and `qwen3moe`. */
export type SyntheticArchitecture = "llama" | "qwen3moe";

/** Hyperparameters of a synthetic model (llama.cpp's names in brackets; `<arch>` is the architecture). */
export type SyntheticModelShape = {
    /** `general.architecture`. Defaults to `"llama"`. */
    readonly arch?: SyntheticArchitecture;
    /** Transformer blocks (`llama.block_count`). */
    readonly layers: number;
    /** `n_embd` (`llama.embedding_length`). */
    readonly embd: number;
    /** `n_ff` (`llama.feed_forward_length`). */
    readonly ff: number;
    /** Attention heads (`llama.attention.head_count`). */
    readonly heads: number;
    /** KV heads (`llama.attention.head_count_kv`); fewer than `heads` means grouped-query attention. */
    readonly kvHeads: number;
    /** Tokens in the vocabulary. */
    readonly vocab: number;
    /** Training context (`llama.context_length`). Defaults to `4096`. */
    readonly contextLength: number;
    /** `llama.rope.freq_base`. Defaults to `10000`. */
    readonly ropeFreqBase: number;
    /** `llama.attention.layer_norm_rms_epsilon`. Defaults to `1e-5`. */
    readonly rmsEps: number;
    /** Per-head size (`<arch>.attention.key_length` = `value_length`). Defaults to `embd / heads`. */
    readonly headDim?: number;
    /** Routed experts per layer (`<arch>.expert_count`); 0 or absent: a dense FFN. */
    readonly experts?: number;
    /** Experts each token uses (`<arch>.expert_used_count`, top-k). Required with `experts`. */
    readonly expertsUsed?: number;
    /**
     * Hidden width of one expert (`<arch>.expert_feed_forward_length`, qwen3moe only: a Mixtral-style `llama` model's
     * experts are `ff` wide, source: `load_arch_tensors` in src/models/llama.cpp). Defaults to `ff / expertsUsed`.
     */
    readonly expertFf?: number;
};

/** Names of {@link syntheticModelPresets}. */
export type SyntheticModelPresetName = "tiny" | "small" | "llama3.2-3b" | "llama3-8b" | "mixtral-mini" | "qwen3-30b-a3b";

const shapeDefaults = {contextLength: 4096, ropeFreqBase: 10000, rmsEps: 1e-5} as const;

/**
 * Ready-made shapes: `tiny` (~1 MB, for tests), `small` (~200 MB at F16), Llama-3.2-3B's real shapes (with a separate
 * output matrix instead of tied embeddings; ~6.7 GB at F16), Llama-3-8B's real shapes, `mixtral-mini` (a
 * Mixtral-style `llama` MoE, 8 experts of which 2 are used, ~27 MiB at F16, for tests) and `qwen3-30b-a3b` (the shapes
 * of Qwen3-30B-A3B: 48 layers, 128 experts of width 768, 8 used, head size 128; ~57 GiB at F16).
 */
export const syntheticModelPresets: Readonly<Record<SyntheticModelPresetName, SyntheticModelShape>> = {
    tiny: {...shapeDefaults, layers: 2, embd: 128, ff: 384, heads: 4, kvHeads: 2, vocab: 1024},
    small: {...shapeDefaults, layers: 8, embd: 1024, ff: 2816, heads: 16, kvHeads: 4, vocab: 4096},
    "llama3.2-3b": {
        layers: 28, embd: 3072, ff: 8192, heads: 24, kvHeads: 8, vocab: 128256,
        contextLength: 8192, ropeFreqBase: 500000, rmsEps: 1e-5
    },
    "llama3-8b": {
        layers: 32, embd: 4096, ff: 14336, heads: 32, kvHeads: 8, vocab: 128256,
        contextLength: 8192, ropeFreqBase: 500000, rmsEps: 1e-5
    },
    "mixtral-mini": {...shapeDefaults, layers: 4, embd: 256, ff: 512, heads: 8, kvHeads: 2, vocab: 1024, experts: 8, expertsUsed: 2},
    "qwen3-30b-a3b": {
        arch: "qwen3moe", layers: 48, embd: 2048, ff: 6144, heads: 32, kvHeads: 4, headDim: 128, vocab: 151936,
        experts: 128, expertsUsed: 8, expertFf: 768, contextLength: 40960, ropeFreqBase: 1000000, rmsEps: 1e-6
    }
};

/** Options of {@link makeSyntheticModel}; shape fields override the preset's. */
export type SyntheticModelOptions = Partial<SyntheticModelShape> & {
    /** Shape to start from. Defaults to `"tiny"`. */
    readonly preset?: SyntheticModelPresetName;
    /** Type of the matmul weights (token_embd too; `output` is q8_0 when this is q4_0). Defaults to `"f16"`. */
    readonly type?: SyntheticWeightType;
    /**
     * `tokenizer.chat_template`: e.g. a real model's template (llama.cpp's models/templates/*.jinja) so that the chat
     * layer formats and parses tool calls as for that model. Defaults to a minimal ChatML template.
     */
    readonly chatTemplate?: string;
    /**
     * `tokenizer.ggml.add_space_prefix`: whether the SentencePiece tokenizer puts "▁" before text, also after a special
     * token (so `<|im_start|>assistant` tokenizes as `<|im_start|>`, `▁assistant`). A real template's tool-call grammar
     * starts with the generation prompt as written, which such a tokenization does not reproduce. Defaults to `true`.
     */
    readonly addSpacePrefix?: boolean;
    /** Seed of the random weights; the same options write byte-identical files. Defaults to `0`. */
    readonly seed?: number;
    /** `general.name`. Defaults to `synthetic-<preset>-<type>`. */
    readonly name?: string;
    /** Called after each chunk written, with bytes of the whole file. */
    readonly onProgress?: (bytesWritten: number, totalBytes: number) => void;
    /** Aborting stops writing and deletes the partial file. */
    readonly signal?: AbortSignal;
};

/** What {@link makeSyntheticModel} wrote. */
export type SyntheticModelResult = {
    readonly path: string;
    readonly totalBytes: number;
    readonly tensorCount: number;
    readonly shape: SyntheticModelShape;
    readonly type: SyntheticWeightType;
};

/** source: llama.h `enum llama_ftype` */
const fileTypes: Readonly<Record<SyntheticWeightType, number>> = {f32: 0, f16: 1, q4_0: 2, q8_0: 7, bf16: 32};

const positiveFields = ["layers", "embd", "ff", "heads", "kvHeads", "vocab", "contextLength", "headDim", "expertFf"] as const;

function checkShape(shape: SyntheticModelShape, type: SyntheticWeightType): void {
    for (const key of positiveFields) {
        const value = shape[key];
        if (value !== undefined && !(Number.isInteger(value) && value > 0))
            throw new RangeError(`synthetic model: ${key} must be a positive integer, got ${String(value)}`);
    }
    for (const key of ["ropeFreqBase", "rmsEps"] as const)
        if (!(shape[key] > 0))
            throw new RangeError(`synthetic model: ${key} must be a positive number, got ${String(shape[key])}`);
    const experts = shape.experts ?? 0;
    const used = shape.expertsUsed ?? 0;
    if (!Number.isInteger(experts) || experts < 0 || !Number.isInteger(used) || used < 0)
        throw new RangeError("synthetic model: experts and expertsUsed must be non-negative integers");
    if (experts > 0 && (used < 1 || used > experts))
        throw new RangeError(`synthetic model: expertsUsed must be from 1 to the ${experts} experts, got ${used}`);
    if (experts === 0 && used > 0)
        throw new RangeError("synthetic model: expertsUsed needs experts");
    if (shape.arch === "qwen3moe" && experts === 0)
        throw new RangeError("synthetic model: a qwen3moe model needs experts (llama.cpp refuses one without)");
    if (shape.headDim === undefined && shape.embd % shape.heads !== 0)
        throw new RangeError(`synthetic model: embd ${shape.embd} is not a multiple of heads ${shape.heads}`);
    if (shape.heads % shape.kvHeads !== 0)
        throw new RangeError(`synthetic model: heads ${shape.heads} is not a multiple of kvHeads ${shape.kvHeads}`);
    if (headDimOf(shape) % 2 !== 0)
        throw new RangeError("synthetic model: the head size must be even for RoPE");
    const block = type === "q8_0" || type === "q4_0" ? qkBlockSize : 1;
    if (shape.embd % block !== 0 || shape.ff % block !== 0 || expertWidth(shape) % block !== 0 || headDimOf(shape) % block !== 0)
        throw new RangeError(`synthetic model: embd, ff, the expert width and the head size must be multiples of ${block} for ${type}`);
}

function headDimOf(shape: SyntheticModelShape): number {
    return shape.headDim ?? shape.embd / shape.heads;
}

/** Hidden width of one expert. source: `load_arch_tensors` in src/models/llama.cpp (n_ff) and src/models/qwen3moe.cpp. */
function expertWidth(shape: SyntheticModelShape): number {
    if ((shape.experts ?? 0) === 0) return 0;
    if ((shape.arch ?? "llama") === "llama") return shape.ff;
    return shape.expertFf ?? Math.floor(shape.ff / (shape.expertsUsed ?? 1));
}

/**
 * Every tensor of a synthetic model in llama.cpp's order and shapes (ggml order: `[ne0, ne1, ne2]`), without writing
 * anything: what a plan of a model too large to write here needs. source: `load_arch_tensors` in
 * src/models/llama.cpp and src/models/qwen3moe.cpp.
 */
export function syntheticTensorSpecs(shape: SyntheticModelShape, type: SyntheticWeightType): SyntheticTensorSpec[] {
    const {embd, ff, vocab} = shape;
    const headDim = headDimOf(shape);
    const qDim = headDim * shape.heads;
    const kvDim = headDim * shape.kvHeads;
    const experts = shape.experts ?? 0;
    const expFf = expertWidth(shape);
    const outputType = type === "q4_0" ? "q8_0" : type;
    const tensors: SyntheticTensorSpec[] = [{name: "token_embd.weight", shape: [embd, vocab], type}];
    for (let i = 0; i < shape.layers; i++) {
        tensors.push(
            {name: `blk.${i}.attn_norm.weight`, shape: [embd], type: "f32"},
            {name: `blk.${i}.attn_q.weight`, shape: [embd, qDim], type},
            {name: `blk.${i}.attn_k.weight`, shape: [embd, kvDim], type},
            {name: `blk.${i}.attn_v.weight`, shape: [embd, kvDim], type},
            {name: `blk.${i}.attn_output.weight`, shape: [qDim, embd], type}
        );
        if (shape.arch === "qwen3moe")
            tensors.push(
                {name: `blk.${i}.attn_k_norm.weight`, shape: [headDim], type: "f32"},
                {name: `blk.${i}.attn_q_norm.weight`, shape: [headDim], type: "f32"}
            );
        tensors.push({name: `blk.${i}.ffn_norm.weight`, shape: [embd], type: "f32"});
        if (experts > 0)
            tensors.push(
                // the router stays F32, as llama-quantize leaves it (tensor_allows_quantization, src/llama-quant.cpp)
                {name: `blk.${i}.ffn_gate_inp.weight`, shape: [embd, experts], type: "f32"},
                {name: `blk.${i}.ffn_gate_exps.weight`, shape: [embd, expFf, experts], type},
                {name: `blk.${i}.ffn_down_exps.weight`, shape: [expFf, embd, experts], type},
                {name: `blk.${i}.ffn_up_exps.weight`, shape: [embd, expFf, experts], type}
            );
        else
            tensors.push(
                {name: `blk.${i}.ffn_gate.weight`, shape: [embd, ff], type},
                {name: `blk.${i}.ffn_up.weight`, shape: [embd, ff], type},
                {name: `blk.${i}.ffn_down.weight`, shape: [ff, embd], type}
            );
    }
    tensors.push(
        {name: "output_norm.weight", shape: [embd], type: "f32"},
        {name: "output.weight", shape: [embd, vocab], type: outputType}
    );
    return tensors;
}

/** source: llama-arch.cpp `LLM_KV_NAMES` and gguf-py/gguf/constants.py `Keys` */
function modelMetadata(shape: SyntheticModelShape, type: SyntheticWeightType, name: string,
    tokenizer: Pick<SyntheticModelOptions, "chatTemplate" | "addSpacePrefix"> = {}): Record<string, GgufMetadataValue> {
    const arch = shape.arch ?? "llama";
    const headDim = headDimOf(shape);
    const experts = shape.experts ?? 0;
    const archKeys: Record<string, GgufMetadataValue> = {
        "vocab_size": ggufValue.uint32(shape.vocab),
        "context_length": ggufValue.uint32(shape.contextLength),
        "embedding_length": ggufValue.uint32(shape.embd),
        "block_count": ggufValue.uint32(shape.layers),
        "feed_forward_length": ggufValue.uint32(shape.ff),
        "attention.head_count": ggufValue.uint32(shape.heads),
        "attention.head_count_kv": ggufValue.uint32(shape.kvHeads),
        "attention.layer_norm_rms_epsilon": ggufValue.float32(shape.rmsEps),
        "rope.freq_base": ggufValue.float32(shape.ropeFreqBase),
        "rope.dimension_count": ggufValue.uint32(headDim)
    };
    if (headDim !== shape.embd / shape.heads) {
        archKeys["attention.key_length"] = ggufValue.uint32(headDim);
        archKeys["attention.value_length"] = ggufValue.uint32(headDim);
    }
    if (experts > 0) {
        archKeys["expert_count"] = ggufValue.uint32(experts);
        archKeys["expert_used_count"] = ggufValue.uint32(shape.expertsUsed ?? 1);
        if (arch === "qwen3moe") archKeys["expert_feed_forward_length"] = ggufValue.uint32(expertWidth(shape));
    }
    return {
        "general.architecture": ggufValue.string(arch),
        "general.name": ggufValue.string(name),
        "general.file_type": ggufValue.uint32(fileTypes[type]),
        "general.quantization_version": ggufValue.uint32(2),
        ...Object.fromEntries(Object.entries(archKeys).map(([key, value]) => [`${arch}.${key}`, value])),
        ...syntheticTokenizerMetadata(shape.vocab, tokenizer)
    };
}

/** A preset's shape with the given fields overridden (what {@link makeSyntheticModel} writes). */
export function resolveSyntheticShape(options: Partial<SyntheticModelShape> & {readonly preset?: SyntheticModelPresetName} = {}): SyntheticModelShape {
    const base = syntheticModelPresets[options.preset ?? "tiny"];
    const defined = Object.fromEntries(Object.entries(options).filter(([key, value]) => value !== undefined && key in shapeKeys));
    return {...base, ...defined};
}

const shapeKeys: Readonly<Record<keyof SyntheticModelShape, true>> = {
    arch: true, layers: true, embd: true, ff: true, heads: true, kvHeads: true, vocab: true, contextLength: true,
    ropeFreqBase: true, rmsEps: true, headDim: true, experts: true, expertsUsed: true, expertFf: true
};

/**
 * Writes a `llama` (dense or MoE) or `qwen3moe` GGUF model with random weights (values ~N(0, 0.02), norms 1.0), a SentencePiece-style
 * vocabulary and a ChatML chat template, streaming its data in chunks of at most a few MiB.
 */
export async function makeSyntheticModel(outPath: string, options: SyntheticModelOptions = {}): Promise<SyntheticModelResult> {
    const {preset = "tiny", type = "f16", seed = 0, onProgress, signal} = options;
    const shape = resolveSyntheticShape(options);
    checkShape(shape, type);
    signal?.throwIfAborted();

    const tensors = syntheticTensorSpecs(shape, type);
    const totalBytes = await writeSyntheticGguf(outPath, modelMetadata(shape, type, options.name ?? `synthetic-${preset}-${type}`, options), tensors,
        {seed, signal, onProgress});
    return {path: outPath, totalBytes, tensorCount: tensors.length, shape, type};
}

/** A tensor of {@link writeSyntheticGguf}: its name, ggml shape and type. */
export type SyntheticTensorSpec = GgufTensorSpec & {readonly type: SyntheticWeightType};

/**
 * Writes `tensors` (random weights ~N(0, 0.02) from one pool per type; 1-D F32 tensors, norms, are 1.0) under
 * `metadata`, streaming the data; returns the file's size. Used by {@link makeSyntheticModel} and the architecture
 * shapes of syntheticArchModels.ts.
 */
export async function writeSyntheticGguf(outPath: string, metadata: Record<string, GgufMetadataValue>, tensors: readonly SyntheticTensorSpec[],
    options: Pick<SyntheticModelOptions, "seed" | "signal" | "onProgress"> = {}): Promise<number> {
    const {seed = 0, signal, onProgress} = options;
    const writer = await GgufWriter.create(outPath, {metadata, tensors: [...tensors]});
    try {
        const largest = Math.max(...writer.tensors.map((tensor) => Number(tensor.shape.reduce((a, b) => a * b, 1n))));
        const pools = new Map<string, Uint8Array>();
        const ones = makeOnesF32(Math.max(...tensors.filter((t) => t.shape.length === 1).map((t) => Number(t.shape[0])), 1));
        for (const [index, tensor] of writer.tensors.entries()) {
            const weightType = tensors[index]?.type ?? "f32";
            const isNorm = tensor.shape.length === 1 && weightType === "f32";
            let pool = isNorm ? ones : pools.get(weightType);
            if (pool === undefined) {
                pool = makeWeightPool(weightType, seed, largest);
                pools.set(weightType, pool);
            }
            const blocks = pool.length / tensor.type.typeSize;
            const start = isNorm ? 0 : (mixSeed(seed, index) % blocks) * tensor.type.typeSize;
            for (const chunk of replayPool(pool, start, tensor.bytes)) {
                signal?.throwIfAborted();
                await writer.writeTensorData(chunk);
                onProgress?.(writer.bytesWritten, writer.totalBytes);
            }
        }
        await writer.close();
    } catch (error) {
        await writer.abort();
        throw error;
    }
    return writer.totalBytes;
}

/** The tokenizer and general keys every synthetic model carries (a SentencePiece-style vocabulary, a ChatML template). */
export function syntheticTokenizerMetadata(vocabSize: number, options: Pick<SyntheticModelOptions, "chatTemplate" | "addSpacePrefix"> = {}):
    Record<string, GgufMetadataValue> {
    const vocab = buildSyntheticVocab(vocabSize);
    return {
        "tokenizer.ggml.model": ggufValue.string("llama"),
        "tokenizer.ggml.tokens": ggufValue.array("string", vocab.tokens),
        "tokenizer.ggml.scores": ggufValue.array("float32", vocab.scores),
        "tokenizer.ggml.token_type": ggufValue.array("int32", vocab.tokenTypes),
        "tokenizer.ggml.bos_token_id": ggufValue.uint32(vocab.bosId),
        "tokenizer.ggml.eos_token_id": ggufValue.uint32(vocab.eosId),
        "tokenizer.ggml.unknown_token_id": ggufValue.uint32(vocab.unkId),
        "tokenizer.ggml.add_bos_token": ggufValue.bool(true),
        "tokenizer.ggml.add_eos_token": ggufValue.bool(false),
        "tokenizer.chat_template": ggufValue.string(options.chatTemplate ?? syntheticChatTemplate),
        ...(options.addSpacePrefix === false && {"tokenizer.ggml.add_space_prefix": ggufValue.bool(false)})
    };
}
