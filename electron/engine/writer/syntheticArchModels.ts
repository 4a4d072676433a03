/**
 * Small models of the architectures whose memory is not plain attention over a whole-context KV cache, written by our
 * own writer (random weights, llama.cpp's tensor names and shapes; F16 matmul weights, F32 norms, SSM parameters and
 * the MLA per-head weights): DeepSeek-V2's MLA with an MTP layer, Mamba's SSM,
 * LFM2's hybrid of short convolutions and sliding-window attention, Gemma-2's interleaved sliding window. Each has
 * no `output.weight` where its architecture ties the output to token_embd (LFM2, Gemma-2), so that path is exercised
 * too. For tests of the planner's memory and cost model against llama.cpp.
 */
import {ggufValue, type GgufMetadataValue} from "./GgufWriter.js";
import {syntheticTokenizerMetadata, writeSyntheticGguf, type SyntheticTensorSpec} from "./makeSyntheticModel.js";

/** The architecture shapes {@link makeSyntheticArchModel} writes. */
export type SyntheticArchModelName = "deepseek2-mla" | "mamba" | "lfm2-hybrid" | "gemma2-swa";

/** What {@link makeSyntheticArchModel} wrote: the file and the shape's facts a test checks against. */
export type SyntheticArchModel = {
    readonly path: string;
    readonly architecture: string;
    readonly layers: number;
    /** MTP layers (`nextn_predict_layers`) at the end of the blocks. */
    readonly nextnLayers: number;
    /** The sliding window, where some layers use one. */
    readonly slidingWindow: number | null;
};

type Shape = {readonly metadata: Record<string, number | number[]>; readonly tensors: SyntheticTensorSpec[]; readonly window: number | null; readonly nextn: number; readonly layers: number};

const VOCAB = 1024;
const CONTEXT = 4096;

const f16 = (name: string, ...shape: number[]): SyntheticTensorSpec => ({name, shape: shape.map(BigInt), type: "f16"});
const f32 = (name: string, ...shape: number[]): SyntheticTensorSpec => ({name, shape: shape.map(BigInt), type: "f32"});

/** source: llama_model_deepseek2::load_arch_tensors (src/models/deepseek2.cpp), MLA with q_lora; every FFN dense. */
function deepseek2(): Shape {
    const embd = 256, heads = 4, qLora = 64, kvLora = 64, rope = 32, nope = 32, vHead = 32, ff = 512, trunk = 3, nextn = 1;
    const layers = trunk + nextn;
    const tensors = [f16("token_embd.weight", embd, VOCAB)];
    for (let i = 0; i < layers; i++) {
        const b = `blk.${i}`;
        tensors.push(
            f32(`${b}.attn_norm.weight`, embd), f32(`${b}.attn_q_a_norm.weight`, qLora), f32(`${b}.attn_kv_a_norm.weight`, kvLora),
            f16(`${b}.attn_q_a.weight`, embd, qLora), f16(`${b}.attn_q_b.weight`, qLora, heads * (nope + rope)),
            f16(`${b}.attn_kv_a_mqa.weight`, embd, kvLora + rope),
            // F32: an F16 3-D weight lands in the CPU's AMX buffer, whose backend then cannot run its batched matmul
            // (ggml-backend.cpp: GGML_ASSERT(*cur_backend_id != -1), seen on this session's AMX Xeon)
            f32(`${b}.attn_k_b.weight`, nope, kvLora, heads), f32(`${b}.attn_v_b.weight`, kvLora, vHead, heads),
            f16(`${b}.attn_output.weight`, heads * vHead, embd),
            f32(`${b}.ffn_norm.weight`, embd),
            f16(`${b}.ffn_gate.weight`, embd, ff), f16(`${b}.ffn_down.weight`, ff, embd), f16(`${b}.ffn_up.weight`, embd, ff)
        );
        if (i >= trunk) tensors.push(f16(`${b}.nextn.eh_proj.weight`, 2 * embd, embd), f32(`${b}.nextn.enorm.weight`, embd), f32(`${b}.nextn.hnorm.weight`, embd));
    }
    tensors.push(f32("output_norm.weight", embd), f16("output.weight", embd, VOCAB));
    return {
        layers, nextn, window: null, tensors,
        metadata: {
            embedding_length: embd, block_count: layers, feed_forward_length: ff, "attention.head_count": heads, "attention.head_count_kv": 1,
            // the latent cache row: kv_lora_rank + the RoPE part (what the MLA converters write as key/value_length)
            "attention.key_length": kvLora + rope, "attention.value_length": kvLora,
            "attention.key_length_mla": nope + rope, "attention.value_length_mla": vHead,
            "attention.q_lora_rank": qLora, "attention.kv_lora_rank": kvLora, "rope.dimension_count": rope,
            leading_dense_block_count: layers, expert_feed_forward_length: ff, expert_shared_count: 0, nextn_predict_layers: nextn
        }
    };
}

/** source: llama_model_mamba::load_arch_tensors (src/models/mamba.cpp): d_inner = 2 × n_embd. */
function mamba(): Shape {
    const embd = 128, dInner = 256, dConv = 4, dState = 16, dtRank = 8, layers = 3;
    const tensors = [f16("token_embd.weight", embd, VOCAB)];
    for (let i = 0; i < layers; i++) {
        const b = `blk.${i}`;
        tensors.push(
            f32(`${b}.attn_norm.weight`, embd), f16(`${b}.ssm_in.weight`, embd, 2 * dInner),
            f32(`${b}.ssm_conv1d.weight`, dConv, dInner), f32(`${b}.ssm_conv1d.bias`, dInner),
            f16(`${b}.ssm_x.weight`, dInner, dtRank + 2 * dState), f16(`${b}.ssm_dt.weight`, dtRank, dInner), f32(`${b}.ssm_dt.bias`, dInner),
            f32(`${b}.ssm_a`, dState, dInner), f32(`${b}.ssm_d`, dInner), f16(`${b}.ssm_out.weight`, dInner, embd)
        );
    }
    tensors.push(f32("output_norm.weight", embd), f16("output.weight", embd, VOCAB));
    return {
        layers, nextn: 0, window: null, tensors,
        metadata: {
            embedding_length: embd, block_count: layers, "ssm.conv_kernel": dConv, "ssm.inner_size": dInner, "ssm.state_size": dState,
            "ssm.time_step_rank": dtRank
        }
    };
}

/**
 * source: llama_model_lfm2::load_arch_tensors (src/models/lfm2.cpp): a layer is a short convolution where
 * head_count_kv is 0, else attention, sliding-window attention when `attention.sliding_window` is set.
 */
function lfm2(): Shape {
    const embd = 256, heads = 4, kvHeads = 2, headDim = 64, ff = 512, lCache = 3, window = 64;
    const kvHeadsPerLayer = [0, kvHeads, 0, 0, kvHeads];
    const layers = kvHeadsPerLayer.length;
    const tensors = [f16("token_embd.weight", embd, VOCAB)];
    for (let i = 0; i < layers; i++) {
        const b = `blk.${i}`;
        tensors.push(f32(`${b}.ffn_norm.weight`, embd), f16(`${b}.ffn_gate.weight`, embd, ff), f16(`${b}.ffn_down.weight`, ff, embd),
            f16(`${b}.ffn_up.weight`, embd, ff), f32(`${b}.attn_norm.weight`, embd));
        if (kvHeadsPerLayer[i] === 0)
            tensors.push(f32(`${b}.shortconv.conv.weight`, lCache, embd), f16(`${b}.shortconv.in_proj.weight`, embd, 3 * embd),
                f16(`${b}.shortconv.out_proj.weight`, embd, embd));
        else
            tensors.push(f32(`${b}.attn_q_norm.weight`, headDim), f32(`${b}.attn_k_norm.weight`, headDim), f16(`${b}.attn_q.weight`, embd, embd),
                f16(`${b}.attn_k.weight`, embd, kvHeads * headDim), f16(`${b}.attn_v.weight`, embd, kvHeads * headDim), f16(`${b}.attn_output.weight`, embd, embd));
    }
    tensors.push(f32("token_embd_norm.weight", embd));
    return {
        layers, nextn: 0, window, tensors,
        metadata: {
            embedding_length: embd, block_count: layers, feed_forward_length: ff, "attention.head_count": heads,
            "attention.head_count_kv": kvHeadsPerLayer, "shortconv.l_cache": lCache, "attention.sliding_window": window
        }
    };
}

/** source: llama_model_gemma2::load_arch_tensors (src/models/gemma2.cpp): every other layer SWA, output tied to token_embd. */
function gemma2(): Shape {
    const embd = 256, heads = 4, kvHeads = 2, headDim = 64, ff = 512, layers = 4, window = 128;
    const tensors = [f16("token_embd.weight", embd, VOCAB)];
    for (let i = 0; i < layers; i++) {
        const b = `blk.${i}`;
        tensors.push(
            f32(`${b}.attn_norm.weight`, embd), f16(`${b}.attn_q.weight`, embd, heads * headDim), f16(`${b}.attn_k.weight`, embd, kvHeads * headDim),
            f16(`${b}.attn_v.weight`, embd, kvHeads * headDim), f16(`${b}.attn_output.weight`, heads * headDim, embd),
            f32(`${b}.post_attention_norm.weight`, embd), f32(`${b}.ffn_norm.weight`, embd),
            f16(`${b}.ffn_gate.weight`, embd, ff), f16(`${b}.ffn_up.weight`, embd, ff), f16(`${b}.ffn_down.weight`, ff, embd),
            f32(`${b}.post_ffw_norm.weight`, embd)
        );
    }
    tensors.push(f32("output_norm.weight", embd));
    return {
        layers, nextn: 0, window, tensors,
        metadata: {
            embedding_length: embd, block_count: layers, feed_forward_length: ff, "attention.head_count": heads,
            "attention.head_count_kv": kvHeads, "attention.key_length": headDim, "attention.value_length": headDim,
            "attention.sliding_window": window
        }
    };
}

const SHAPES: Readonly<Record<SyntheticArchModelName, {readonly architecture: string; readonly shape: () => Shape}>> = {
    "deepseek2-mla": {architecture: "deepseek2", shape: deepseek2},
    mamba: {architecture: "mamba", shape: mamba},
    "lfm2-hybrid": {architecture: "lfm2", shape: lfm2},
    "gemma2-swa": {architecture: "gemma2", shape: gemma2}
};

/** Writes the named architecture's small model to `outPath`. */
export async function makeSyntheticArchModel(outPath: string, name: SyntheticArchModelName, options: {readonly seed?: number} = {}): Promise<SyntheticArchModel> {
    const {architecture, shape} = SHAPES[name];
    const {metadata, tensors, window, nextn, layers} = shape();
    const archKeys: Record<string, GgufMetadataValue> = {
        context_length: ggufValue.uint32(CONTEXT), vocab_size: ggufValue.uint32(VOCAB),
        "attention.layer_norm_rms_epsilon": ggufValue.float32(1e-5)
    };
    for (const [key, value] of Object.entries(metadata))
        archKeys[key] = Array.isArray(value) ? ggufValue.array("uint32", Uint32Array.from(value)) : ggufValue.uint32(value);
    await writeSyntheticGguf(outPath, {
        "general.architecture": ggufValue.string(architecture),
        "general.name": ggufValue.string(`synthetic-${name}`),
        "general.file_type": ggufValue.uint32(1),
        ...Object.fromEntries(Object.entries(archKeys).map(([key, value]) => [`${architecture}.${key}`, value])),
        ...syntheticTokenizerMetadata(VOCAB)
    }, tensors, {seed: options.seed ?? 0});
    return {path: outPath, architecture, layers, nextnLayers: nextn, slidingWindow: window};
}
