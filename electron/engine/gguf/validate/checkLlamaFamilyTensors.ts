import {GgufValidationError} from "../errors/GgufValidationError.js";
import type {GgufMetadataValue, ValidatedGgufTensor} from "../types/ValidatedGguf.js";
import type {ExpertHparams} from "./checkModelHparams.js";
import type {HparamReader} from "./HparamReader.js";
import {quoteFileText} from "./quoteFileText.js";

/**
 * Architectures whose tensors are created as in src/models/llama.cpp `llama_model_llama::load_arch_tensors`, checked
 * here against src/models/{llama,qwen2,qwen3,qwen3moe}.cpp. (Mistral models converted as `llama` are covered by it.)
 */
const llamaFamily: ReadonlySet<string> = new Set(["llama", "qwen2", "qwen3", "qwen3moe"]);
/** Architectures with per-head RMS norms on Q and K (`attn_q_norm`, `attn_k_norm`). */
const qkNormArchitectures: ReadonlySet<string> = new Set(["qwen3", "qwen3moe"]);
const tokensKey = "tokenizer.ggml.tokens";

/** Whether `checkLlamaFamilyTensors` knows the tensors of architecture `arch`. */
export function isLlamaFamily(arch: string): boolean {
    return llamaFamily.has(arch);
}

/** What `checkModelHparams` established before. */
export type LlamaFamilyContext = {
    readonly blockCount: number;
    readonly nextnLayers: number;
    readonly experts: ExpertHparams;
};

/** An expected shape (`ne` order); `undefined` where any size is accepted. */
type Shape = readonly (number | undefined)[];

/**
 * Checks a llama-family model's head and feed-forward hyper-parameters and every tensor llama.cpp creates for it:
 * head counts and feed-forward lengths positive in every layer (scalars or per-layer arrays), heads a multiple of KV
 * heads, a whole head size (`embedding_length / head_count` unless `attention.key_length`/`value_length` are given),
 * key and value head sizes equal to each other and to `rope.dimension_count` (the graph asserts this), every layer
 * below `block_count` present with its tensors, and each tensor's shape equal to the one `load_arch_tensors` asks for
 * (which uses layer 0's head and feed-forward counts for all layers). MoE models must have expert tensors.
 */
export function checkLlamaFamilyTensors(
    h: HparamReader, metadata: ReadonlyMap<string, GgufMetadataValue>, tensors: readonly ValidatedGgufTensor[],
    context: LlamaFamilyContext
): void {
    const {blockCount, nextnLayers, experts} = context;
    const arch = h.arch;
    const embd = h.count("embedding_length", true);
    const heads = h.perLayer("attention.head_count", blockCount, true);
    h.requirePositive("attention.head_count", heads);
    const kvHeads = h.perLayer("attention.head_count_kv", blockCount, false) ?? heads;
    h.requirePositive("attention.head_count_kv", kvHeads);
    heads.forEach((count, layer) => {
        const kv = kvHeads[layer] ?? count;
        if (count % kv !== 0)
            throw new GgufValidationError(
                "bad-hparam",
                `${h.label("attention.head_count")} (${count}) is not a multiple of ${h.label("attention.head_count_kv")} ` +
                    `(${kv}) in layer ${layer}`
            );
    });
    const ff = h.perLayer("feed_forward_length", blockCount, arch !== "qwen3moe");
    if (ff !== undefined)
        h.requirePositive("feed_forward_length", ff);

    const {headK, headV} = headSizes(h, embd, heads[0] ?? 0);
    const nHead = heads[0] ?? 0;
    const nHeadKv = kvHeads[0] ?? 0;
    const qDim = arch === "qwen2" ? embd : headK * nHead;
    const tokens = metadata.get(tokensKey);
    const vocab = tokens?.type === "array" ? tokens.value.length : undefined;

    const byName = new Map(tensors.map((tensor) => [tensor.name, tensor]));
    const expect = (name: string, shape: Shape, why: string, required = true): void => {
        const tensor = byName.get(name);
        if (tensor === undefined) {
            if (required)
                throw new GgufValidationError("missing-tensor", `the file has no tensor "${name}", which a ${quoteFileText(arch)} model needs`);
            return;
        }
        if (!sameShape(tensor.shape, shape))
            throw new GgufValidationError(
                "shape-mismatch",
                `tensor "${name}" is ${tensor.shape.join("×")}, but the hyper-parameters (${why}) make it ` +
                    `${shape.map((dim) => dim ?? "any").join("×")}`
            );
    };

    const embdWhy = "embedding length";
    const vocabWhy = "embedding length × vocabulary size";
    expect("token_embd.weight", [embd, vocab], vocabWhy);
    expect("output_norm.weight", [embd], embdWhy);
    expect("output.weight", [embd, vocab], vocabWhy, false);

    checkEveryLayerPresent(h, tensors, blockCount);
    const ffExperts = experts.expertCount > 0 ? expertFeedForward(h, blockCount, ff, experts) : 0;
    const isMoe = arch === "llama" || arch === "qwen3moe" ? experts.expertCount > 0 : false;
    if (experts.expertCount > 0 && !experts.hasExpertTensors)
        throw new GgufValidationError(
            "bad-experts",
            `${h.label("expert_count")} is ${experts.expertCount}, but the file has no expert tensors (blk.N.ffn_*_exps)`
        );
    if (arch === "qwen3moe" && experts.expertCount === 0)
        throw new GgufValidationError("bad-experts", `a "qwen3moe" model needs experts, but ${h.label("expert_count")} is 0 or missing`);

    const qWhy = "embedding length × heads × head size";
    const kvWhy = "embedding length × KV heads × head size";
    const ffWhy = "embedding length × feed-forward length";
    const expWhy = "embedding length × expert feed-forward length × experts";
    for (let i = 0; i < blockCount - nextnLayers; i++) {
        const t = (suffix: string): string => `blk.${i}.${suffix}.weight`;
        expect(t("attn_norm"), [embd], embdWhy);
        if (byName.has(t("attn_qkv")))
            expect(t("attn_qkv"), [embd, qDim + headK * nHeadKv + headV * nHeadKv], "embedding length × (heads + 2 KV heads) × head size");
        else {
            expect(t("attn_q"), [embd, qDim], qWhy);
            expect(t("attn_k"), [embd, headK * nHeadKv], kvWhy);
            expect(t("attn_v"), [embd, headV * nHeadKv], kvWhy);
        }
        expect(t("attn_output"), [qDim, embd], qWhy);
        if (qkNormArchitectures.has(arch)) {
            expect(t("attn_q_norm"), [headK], "head size");
            expect(t("attn_k_norm"), [headK], "head size");
        }
        expect(t("ffn_norm"), [embd], embdWhy);
        if (isMoe) {
            const e = experts.expertCount;
            expect(t("ffn_gate_inp"), [embd, e], "embedding length × experts");
            expect(t("ffn_gate_exps"), [embd, ffExperts, e], expWhy, arch === "qwen3moe");
            expect(t("ffn_up_exps"), [embd, ffExperts, e], expWhy);
            expect(t("ffn_down_exps"), [ffExperts, embd, e], expWhy);
        } else {
            const nFf = ff?.[0];
            expect(t("ffn_gate"), [embd, nFf], ffWhy);
            expect(t("ffn_up"), [embd, nFf], ffWhy);
            expect(t("ffn_down"), [nFf, embd], ffWhy);
        }
    }
}

/**
 * Key and value head sizes. source: `llama_model_base::load_hparams` (`n_embd / n_head()` unless
 * `attention.key_length` / `value_length` are given; llama throws unless `rope.dimension_count` equals the key head
 * size) and the `GGML_ASSERT`s at the top of each family member's graph (value head size == key head size == n_rot).
 */
function headSizes(h: HparamReader, embd: number, heads: number): {headK: number; headV: number} {
    const keyLength = h.count("attention.key_length", false);
    const valueLength = h.count("attention.value_length", false);
    if ((keyLength === undefined || valueLength === undefined) && embd % heads !== 0)
        throw new GgufValidationError(
            "bad-hparam",
            `${h.label("embedding_length")} (${embd}) is not a multiple of ${h.label("attention.head_count")} (${heads}), ` +
                `and no ${h.label("attention.key_length")} and ${h.label("attention.value_length")} give the head size`
        );
    const headK = keyLength ?? embd / heads;
    const headV = valueLength ?? embd / heads;
    if (headK === 0 || headV !== headK)
        throw new GgufValidationError(
            "bad-hparam",
            `the key head size (${headK}) and value head size (${headV}) must be equal and positive for a ${quoteFileText(h.arch)} model`
        );
    const rot = h.count("rope.dimension_count", false);
    if (rot !== undefined && rot !== headK)
        throw new GgufValidationError(
            "bad-hparam",
            `${h.label("rope.dimension_count")} is ${rot}, but a ${quoteFileText(h.arch)} model needs it equal to the head size ${headK}`
        );
    return {headK, headV};
}

/**
 * Expert feed-forward width: `expert_feed_forward_length` (layer 0) or `feed_forward_length / expert_used_count` for
 * qwen3moe, `feed_forward_length` for llama. source: `load_arch_tensors` in src/models/{qwen3moe,llama}.cpp.
 */
function expertFeedForward(h: HparamReader, blockCount: number, ff: readonly number[] | undefined, experts: ExpertHparams): number {
    const nFf = ff?.[0] ?? 0;
    if (h.arch !== "qwen3moe")
        return nFf;
    const perExpert = h.perLayer("expert_feed_forward_length", blockCount, ff === undefined)?.[0] ?? 0;
    const width = perExpert > 0 ? perExpert : Math.floor(nFf / (experts.expertUsed[0] ?? 1));
    if (width === 0)
        throw new GgufValidationError(
            "bad-hparam",
            `${h.label("expert_feed_forward_length")} is 0 or missing and ${h.label("feed_forward_length")} is too small to derive it`
        );
    return width;
}

function checkEveryLayerPresent(h: HparamReader, tensors: readonly ValidatedGgufTensor[], blockCount: number): void {
    const present = new Uint8Array(blockCount);
    for (const tensor of tensors) {
        const layer = /^blk\.(\d+)\./.exec(tensor.name)?.[1];
        if (layer !== undefined)
            present[Number(layer)] = 1;
    }
    const missing = present.indexOf(0);
    if (missing !== -1)
        throw new GgufValidationError(
            "layer-mismatch",
            `${h.label("block_count")} declares ${blockCount} layers, but the file has no tensors for layer ${missing}`
        );
}

/** llama.cpp's `check_tensor_dims`: equal sizes, dimensions beyond the expected ones all 1. */
function sameShape(actual: readonly bigint[], expected: Shape): boolean {
    const dims = Math.max(actual.length, expected.length);
    for (let d = 0; d < dims; d++) {
        const want = d < expected.length ? expected[d] : 1;
        const have = actual[d] ?? 1n;
        if (want !== undefined && have !== BigInt(want))
            return false;
    }
    return true;
}
