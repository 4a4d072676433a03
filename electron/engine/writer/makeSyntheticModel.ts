import {GgufWriter, ggufValue, type GgufMetadataValue, type GgufTensorSpec} from "./GgufWriter.js";
import {qkBlockSize, type EncodableType} from "./quantize.js";
import {makeOnesF32, makeWeightPool, mixSeed, replayPool} from "./syntheticTensorData.js";
import {buildSyntheticVocab, syntheticChatTemplate} from "./syntheticVocab.js";

/** Type of the matmul weights of a synthetic model; norms are always F32. */
export type SyntheticWeightType = EncodableType;

/** Hyperparameters of a synthetic llama-architecture model. */
export type SyntheticModelShape = {
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
};

/** Names of {@link syntheticModelPresets}. */
export type SyntheticModelPresetName = "tiny" | "small" | "llama3-8b";

const shapeDefaults = {contextLength: 4096, ropeFreqBase: 10000, rmsEps: 1e-5} as const;

/** Ready-made shapes: `tiny` (~1 MB, for tests), `small` (~200 MB at F16) and Llama-3-8B's real shapes. */
export const syntheticModelPresets: Readonly<Record<SyntheticModelPresetName, SyntheticModelShape>> = {
    tiny: {...shapeDefaults, layers: 2, embd: 128, ff: 384, heads: 4, kvHeads: 2, vocab: 1024},
    small: {...shapeDefaults, layers: 8, embd: 1024, ff: 2816, heads: 16, kvHeads: 4, vocab: 4096},
    "llama3-8b": {
        layers: 32, embd: 4096, ff: 14336, heads: 32, kvHeads: 8, vocab: 128256,
        contextLength: 8192, ropeFreqBase: 500000, rmsEps: 1e-5
    }
};

/** Options of {@link makeSyntheticModel}; shape fields override the preset's. */
export type SyntheticModelOptions = Partial<SyntheticModelShape> & {
    /** Shape to start from. Defaults to `"tiny"`. */
    readonly preset?: SyntheticModelPresetName;
    /** Type of the matmul weights (token_embd too; `output` is q8_0 when this is q4_0). Defaults to `"f16"`. */
    readonly type?: SyntheticWeightType;
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

function checkShape(shape: SyntheticModelShape, type: SyntheticWeightType): void {
    for (const [key, value] of Object.entries(shape))
        if (!(typeof value === "number" && value > 0 && (Number.isInteger(value) || key === "ropeFreqBase" || key === "rmsEps")))
            throw new RangeError(`synthetic model: ${key} must be a positive integer, got ${String(value)}`);
    if (shape.embd % shape.heads !== 0)
        throw new RangeError(`synthetic model: embd ${shape.embd} is not a multiple of heads ${shape.heads}`);
    if (shape.heads % shape.kvHeads !== 0)
        throw new RangeError(`synthetic model: heads ${shape.heads} is not a multiple of kvHeads ${shape.kvHeads}`);
    if ((shape.embd / shape.heads) % 2 !== 0)
        throw new RangeError("synthetic model: the head size must be even for RoPE");
    const block = type === "q8_0" || type === "q4_0" ? qkBlockSize : 1;
    if (shape.embd % block !== 0 || shape.ff % block !== 0)
        throw new RangeError(`synthetic model: embd and ff must be multiples of ${block} for ${type}`);
}

type SyntheticTensorSpec = GgufTensorSpec & {readonly type: SyntheticWeightType};

/** Tensors in llama.cpp's order and shapes. source: src/models/llama.cpp `load_arch_tensors` */
function llamaTensors(shape: SyntheticModelShape, type: SyntheticWeightType): SyntheticTensorSpec[] {
    const {embd, ff, vocab} = shape;
    const kvDim = (embd / shape.heads) * shape.kvHeads;
    const outputType = type === "q4_0" ? "q8_0" : type;
    const tensors: SyntheticTensorSpec[] = [{name: "token_embd.weight", shape: [embd, vocab], type}];
    for (let i = 0; i < shape.layers; i++) {
        tensors.push(
            {name: `blk.${i}.attn_norm.weight`, shape: [embd], type: "f32"},
            {name: `blk.${i}.attn_q.weight`, shape: [embd, embd], type},
            {name: `blk.${i}.attn_k.weight`, shape: [embd, kvDim], type},
            {name: `blk.${i}.attn_v.weight`, shape: [embd, kvDim], type},
            {name: `blk.${i}.attn_output.weight`, shape: [embd, embd], type},
            {name: `blk.${i}.ffn_norm.weight`, shape: [embd], type: "f32"},
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
function llamaMetadata(shape: SyntheticModelShape, type: SyntheticWeightType, name: string): Record<string, GgufMetadataValue> {
    const vocab = buildSyntheticVocab(shape.vocab);
    return {
        "general.architecture": ggufValue.string("llama"),
        "general.name": ggufValue.string(name),
        "general.file_type": ggufValue.uint32(fileTypes[type]),
        "general.quantization_version": ggufValue.uint32(2),
        "llama.vocab_size": ggufValue.uint32(shape.vocab),
        "llama.context_length": ggufValue.uint32(shape.contextLength),
        "llama.embedding_length": ggufValue.uint32(shape.embd),
        "llama.block_count": ggufValue.uint32(shape.layers),
        "llama.feed_forward_length": ggufValue.uint32(shape.ff),
        "llama.attention.head_count": ggufValue.uint32(shape.heads),
        "llama.attention.head_count_kv": ggufValue.uint32(shape.kvHeads),
        "llama.attention.layer_norm_rms_epsilon": ggufValue.float32(shape.rmsEps),
        "llama.rope.freq_base": ggufValue.float32(shape.ropeFreqBase),
        "llama.rope.dimension_count": ggufValue.uint32(shape.embd / shape.heads),
        "tokenizer.ggml.model": ggufValue.string("llama"),
        "tokenizer.ggml.tokens": ggufValue.array("string", vocab.tokens),
        "tokenizer.ggml.scores": ggufValue.array("float32", vocab.scores),
        "tokenizer.ggml.token_type": ggufValue.array("int32", vocab.tokenTypes),
        "tokenizer.ggml.bos_token_id": ggufValue.uint32(vocab.bosId),
        "tokenizer.ggml.eos_token_id": ggufValue.uint32(vocab.eosId),
        "tokenizer.ggml.unknown_token_id": ggufValue.uint32(vocab.unkId),
        "tokenizer.ggml.add_bos_token": ggufValue.bool(true),
        "tokenizer.ggml.add_eos_token": ggufValue.bool(false),
        "tokenizer.chat_template": ggufValue.string(syntheticChatTemplate)
    };
}

/**
 * Writes a llama-architecture GGUF model with random weights (values ~N(0, 0.02), norms 1.0), a SentencePiece-style
 * vocabulary and a ChatML chat template, streaming its data in chunks of at most a few MiB.
 */
export async function makeSyntheticModel(outPath: string, options: SyntheticModelOptions = {}): Promise<SyntheticModelResult> {
    const {preset = "tiny", type = "f16", seed = 0, onProgress, signal} = options;
    const base = syntheticModelPresets[preset];
    const shape: SyntheticModelShape = {
        layers: options.layers ?? base.layers,
        embd: options.embd ?? base.embd,
        ff: options.ff ?? base.ff,
        heads: options.heads ?? base.heads,
        kvHeads: options.kvHeads ?? base.kvHeads,
        vocab: options.vocab ?? base.vocab,
        contextLength: options.contextLength ?? base.contextLength,
        ropeFreqBase: options.ropeFreqBase ?? base.ropeFreqBase,
        rmsEps: options.rmsEps ?? base.rmsEps
    };
    checkShape(shape, type);
    signal?.throwIfAborted();

    const tensors = llamaTensors(shape, type);
    const writer = await GgufWriter.create(outPath, {
        metadata: llamaMetadata(shape, type, options.name ?? `synthetic-${preset}-${type}`),
        tensors
    });
    try {
        const largest = Math.max(...writer.tensors.map((tensor) => Number(tensor.shape.reduce((a, b) => a * b, 1n))));
        const pools = new Map<string, Uint8Array>();
        const ones = makeOnesF32(shape.embd);
        for (const [index, tensor] of writer.tensors.entries()) {
            const weightType = tensors[index]?.type ?? type;
            const isNorm = tensor.shape.length === 1;
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
    return {path: outPath, totalBytes: writer.totalBytes, tensorCount: tensors.length, shape, type};
}
