import {createHash} from "node:crypto";
import {missingByteToken} from "./validate/checkVocabulary.js";
import {llamaFileTypeName} from "./llamaFileType.js";
import {llamaMemoryLayout, type MemoryLayout} from "./llamaMemoryLayout.js";
import {metadataArrayLength, metadataNumber, metadataNumberOrNumbers, metadataString} from "./metadataValue.js";
import {parseTensorName} from "./tensorRole.js";
import type {TensorRole} from "./tensorRole.js";
import type {ValidatedGguf} from "./types/ValidatedGguf.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";

/**
 * One row of the tensor table. Counts are numbers: exact for any tensor that fits in a file (< 2^53 bytes).
 */
export type InspectedTensor = {
    readonly name: string;
    /** `N` of a `blk.N.` name, else `null`. */
    readonly layer: number | null;
    readonly role: TensorRole;
    /** ggml type name, e.g. `"q4_K"`. */
    readonly type: string;
    /** Elements per dimension, `ne` order (`shape[0]` is the row length). */
    readonly shape: number[];
    readonly elements: number;
    readonly bytes: number;
};

/** Tensors of one ggml type. */
export type QuantMixEntry = {
    readonly type: string;
    readonly tensorCount: number;
    readonly elements: number;
    readonly bytes: number;
};

/**
 * What a GGUF file holds, summarised for display: JSON-serialisable (no bigints, Maps or `undefined`), so it can go
 * over IPC as is. Hyperparameters come from `<architecture>.*` metadata and are `null` when absent.
 */
export type InspectedModel = {
    readonly ggufVersion: number;
    readonly fileSize: number;
    /** `general.architecture`, e.g. `"llama"`. */
    readonly architecture: string | null;
    /** `general.name`. */
    readonly name: string | null;
    /** `general.file_type` and its llama.cpp name (e.g. `{id: 15, name: "Q4_K_M"}`; name `null` if unknown). */
    readonly fileType: {readonly id: number; readonly name: string | null} | null;
    /** Sum of all tensors' elements. */
    readonly parameterCount: number;
    /** Sum of all tensors' data bytes. */
    readonly tensorBytes: number;
    /** Bytes and tensors per ggml type, most bytes first. */
    readonly quantMix: QuantMixEntry[];
    /** `<arch>.block_count`. */
    readonly layerCount: number | null;
    readonly contextLength: number | null;
    readonly embeddingLength: number | null;
    /** `<arch>.feed_forward_length`; an array when it varies per layer. */
    readonly feedForwardLength: number | number[] | null;
    /** `<arch>.attention.head_count`; an array when it varies per layer. */
    readonly headCount: number | number[] | null;
    /** `<arch>.attention.head_count_kv`; an array when it varies per layer. */
    readonly headCountKv: number | number[] | null;
    /** `<arch>.expert_count` (MoE models). */
    readonly expertCount: number | null;
    /** `<arch>.expert_used_count` (MoE models). */
    readonly expertUsedCount: number | null;
    /** Length of `tokenizer.ggml.tokens`, else `<arch>.vocab_size`. */
    readonly vocabSize: number | null;
    /**
     * A byte (`"0x0A"`) the vocabulary has no token for, which llama.cpp cannot tokenize without ending the process;
     * `null` when every byte has one. Such a model can be inspected but not loaded.
     */
    readonly missingByteToken: string | null;
    /**
     * What llama.cpp keeps per layer between tokens (KV cache rows, sliding window, recurrent state) and which layers
     * it loads at all (MTP layers are skipped), from the metadata; `null` without an architecture or block count.
     */
    readonly memory: MemoryLayout | null;
    /** Tensors in file order. */
    readonly tensors: InspectedTensor[];
    /**
     * The tokenizer as far as two models must agree to share tokens (a draft model and its target): the tokenizer kind
     * (`tokenizer.ggml.model`), BOS and EOS ids, and a digest of every token's text in order; absent in older callers.
     */
    readonly tokenizer?: TokenizerIdentity;
};

/** See {@link InspectedModel.tokenizer}. */
export type TokenizerIdentity = {
    readonly model: string | null;
    readonly bos: number | null;
    readonly eos: number | null;
    /** SHA-256 of the tokens' texts, each followed by a NUL; `null` without `tokenizer.ggml.tokens`. */
    readonly tokensDigest: string | null;
};

/** Summarises a validated GGUF file: architecture, sizes, quantization mix and a tensor table with roles. */
export function inspectGguf(gguf: ValidatedGguf): InspectedModel {
    const {metadata} = gguf;
    const architecture = metadataString(metadata, "general.architecture") ?? null;
    const archNumber = (key: string): number | null =>
        architecture === null ? null : metadataNumber(metadata, `${architecture}.${key}`) ?? null;
    const archNumbers = (key: string): number | number[] | null =>
        architecture === null ? null : metadataNumberOrNumbers(metadata, `${architecture}.${key}`) ?? null;
    const fileTypeId = metadataNumber(metadata, "general.file_type");

    const tensors = gguf.tensors.map((tensor): InspectedTensor => ({
        name: tensor.name,
        ...parseTensorName(tensor.name),
        type: tensor.type.name,
        shape: tensor.shape.map(Number),
        elements: Number(tensor.elements),
        bytes: Number(tensor.bytes)
    }));

    return {
        ggufVersion: gguf.version,
        fileSize: Number(gguf.fileSize),
        architecture,
        name: metadataString(metadata, "general.name") ?? null,
        fileType: fileTypeId === undefined ? null : {id: fileTypeId, name: llamaFileTypeName(fileTypeId) ?? null},
        parameterCount: sum(tensors.map((tensor) => tensor.elements)),
        tensorBytes: sum(tensors.map((tensor) => tensor.bytes)),
        quantMix: quantMix(tensors),
        layerCount: archNumber("block_count"),
        contextLength: archNumber("context_length"),
        embeddingLength: archNumber("embedding_length"),
        feedForwardLength: archNumbers("feed_forward_length"),
        headCount: archNumbers("attention.head_count"),
        headCountKv: archNumbers("attention.head_count_kv"),
        expertCount: archNumber("expert_count"),
        expertUsedCount: archNumber("expert_used_count"),
        vocabSize: metadataArrayLength(metadata, "tokenizer.ggml.tokens") ?? archNumber("vocab_size"),
        missingByteToken: missingByteToken(metadata),
        memory: llamaMemoryLayout(metadata, architecture),
        tensors,
        tokenizer: tokenizerIdentity(metadata)
    };
}

/** See {@link TokenizerIdentity}. */
function tokenizerIdentity(metadata: ValidatedGguf["metadata"]): TokenizerIdentity {
    const tokens = metadata.get("tokenizer.ggml.tokens");
    let tokensDigest: string | null = null;
    if (tokens?.type === "array" && tokens.elementType === "string") {
        const hash = createHash("sha256");
        for (const text of tokens.value as readonly string[]) hash.update(text).update("\0");
        tokensDigest = hash.digest("hex");
    }
    return {
        model: metadataString(metadata, "tokenizer.ggml.model") ?? null,
        bos: metadataNumber(metadata, "tokenizer.ggml.bos_token_id") ?? null,
        eos: metadataNumber(metadata, "tokenizer.ggml.eos_token_id") ?? null,
        tokensDigest
    };
}

function quantMix(tensors: readonly InspectedTensor[]): QuantMixEntry[] {
    const byType = new Map<string, QuantMixEntry>();
    for (const tensor of tensors) {
        const entry = byType.get(tensor.type) ?? {type: tensor.type, tensorCount: 0, elements: 0, bytes: 0};
        byType.set(tensor.type, {
            type: tensor.type,
            tensorCount: entry.tensorCount + 1,
            elements: entry.elements + tensor.elements,
            bytes: entry.bytes + tensor.bytes
        });
    }
    return [...byType.values()].sort((a, b) => b.bytes - a.bytes || a.type.localeCompare(b.type));
}

function sum(values: readonly number[]): number {
    return values.reduce((total, value) => total + value, 0);
}

/** Throws a clear error where llama.cpp could load `model` but would end the process on the first text it reads. */
export function assertLoadable(model: InspectedModel): void {
    if (model.missingByteToken != null)
        throw new TensorwiseError("bad-vocab", `This model's vocabulary has no token for the byte ${model.missingByteToken}, so llama.cpp ` +
            "would stop the whole program on the first text that contains it: the file is broken or was converted wrongly.");
}
