import {GgmlTypeId, kv} from "./tinyGguf.js";
import type {TinyGgufSpec, TinyKv, TinyTensor} from "./tinyGguf.js";

/** Shape of a `tinyModelSpec` model; every field has a small default. */
export type TinyModelOptions = {
    /** `general.architecture`: `llama` (default), `qwen2`, `qwen3`, `qwen3moe`, or any other name. */
    readonly arch?: string;
    /** Blocks written (`blk.0.` …). Defaults to 2. */
    readonly layers?: number;
    /** Defaults to 32. */
    readonly embd?: number;
    /** Defaults to 64. */
    readonly ff?: number;
    /** Defaults to 4. */
    readonly heads?: number;
    /** Defaults to 2. */
    readonly kvHeads?: number;
    /** Makes a MoE model: experts per layer, experts used per token, and (qwen3moe) the experts' feed-forward width. */
    readonly experts?: {readonly count: number; readonly used: number; readonly ff?: number};
    /**
     * Metadata under `<arch>.`, by the part after it (`"block_count"`): a replacement entry, or `null` to leave the
     * key out. Applied after the defaults; keys not among the defaults are appended.
     */
    readonly hparams?: Readonly<Record<string, TinyKv | null>>;
    /** Rewrites the tensor list (after it is built from the hyper-parameters). */
    readonly tensors?: (tensors: TinyTensor[]) => TinyTensor[];
};

const tokens = ["<unk>", "<s>", "</s>", "a", "b", "ab"];

/**
 * A well-formed model of a llama-family architecture whose tensors have exactly the shapes llama.cpp's
 * `load_arch_tensors` asks for (src/models/{llama,qwen2,qwen3,qwen3moe}.cpp), all F32; `hparams` and `tensors`
 * bend it into a hostile one. Unknown architectures get llama's tensors.
 */
export function tinyModelSpec(options: TinyModelOptions = {}): TinyGgufSpec {
    const {arch = "llama", layers = 2, embd = 32, ff = 64, heads = 4, kvHeads = 2, experts} = options;
    const headSize = embd / heads;
    const f32 = (name: string, shape: readonly number[]): TinyTensor => ({name, shape, typeId: GgmlTypeId.f32});
    const expertFf = experts?.ff ?? ff;

    const layerTensors = Array.from({length: layers}, (_, i): TinyTensor[] => {
        const t = (suffix: string, shape: readonly number[]): TinyTensor => f32(`blk.${i}.${suffix}.weight`, shape);
        const qkNorm = arch === "qwen3" || arch === "qwen3moe" ? [t("attn_q_norm", [headSize]), t("attn_k_norm", [headSize])] : [];
        const ffn = experts === undefined
            ? [t("ffn_gate", [embd, ff]), t("ffn_up", [embd, ff]), t("ffn_down", [ff, embd])]
            : [
                t("ffn_gate_inp", [embd, experts.count]),
                t("ffn_gate_exps", [embd, expertFf, experts.count]),
                t("ffn_up_exps", [embd, expertFf, experts.count]),
                t("ffn_down_exps", [expertFf, embd, experts.count])
            ];
        return [
            t("attn_norm", [embd]),
            t("attn_q", [embd, embd]),
            t("attn_k", [embd, headSize * kvHeads]),
            t("attn_v", [embd, headSize * kvHeads]),
            t("attn_output", [embd, embd]),
            ...qkNorm,
            t("ffn_norm", [embd]),
            ...ffn
        ];
    }).flat();
    const tensors = [f32("token_embd.weight", [embd, tokens.length]), ...layerTensors, f32("output_norm.weight", [embd])];

    const defaults: Record<string, TinyKv> = {
        block_count: kv.u32(`${arch}.block_count`, layers),
        context_length: kv.u32(`${arch}.context_length`, 256),
        embedding_length: kv.u32(`${arch}.embedding_length`, embd),
        feed_forward_length: kv.u32(`${arch}.feed_forward_length`, ff),
        "attention.head_count": kv.u32(`${arch}.attention.head_count`, heads),
        "attention.head_count_kv": kv.u32(`${arch}.attention.head_count_kv`, kvHeads),
        "attention.layer_norm_rms_epsilon": kv.f32(`${arch}.attention.layer_norm_rms_epsilon`, 1e-5),
        "rope.dimension_count": kv.u32(`${arch}.rope.dimension_count`, headSize),
        ...(experts === undefined ? {} : {
            expert_count: kv.u32(`${arch}.expert_count`, experts.count),
            expert_used_count: kv.u32(`${arch}.expert_used_count`, experts.used),
            ...(experts.ff === undefined ? {} : {expert_feed_forward_length: kv.u32(`${arch}.expert_feed_forward_length`, experts.ff)})
        })
    };
    const hparams = {...defaults, ...options.hparams};
    return {
        kvs: [
            kv.str("general.architecture", arch),
            kv.str("general.name", `tiny ${arch}`),
            ...Object.values(hparams).filter((entry): entry is TinyKv => entry !== null),
            kv.str("tokenizer.ggml.model", "llama"),
            kv.strings("tokenizer.ggml.tokens", tokens),
            kv.f32s("tokenizer.ggml.scores", tokens.map((_, i) => -i)),
            kv.i32s("tokenizer.ggml.token_type", tokens.map((_, i) => (i < 3 ? 3 : 1)))
        ],
        tensors: options.tensors?.(tensors) ?? tensors
    };
}
