/**
 * Predicts TTFT, TPOT and VRAM of a placement + runtime settings from a machine profile. Every term names the
 * llama.cpp behaviour it models.
 */
import {isPinnedHostBufferType} from "../../contract/memory.js";
import type {KvCacheType, ResolvedSettings} from "../../contract/settings.js";
import {attentionUnsupported, attentionUs as profiledAttentionUs, expertCopyUs, expertMatmulUs, matmulUs, transfersOf, type AttentionShape,
    type ExpertOperatorShape, type MachineProfile, type ProfileStatistic} from "../profiler/MachineProfile.js";
import {expectedDistinctExperts} from "./expectedDistinctExperts.js";
import {attentionWork, hasSequenceMixer, layerAttention, layerMemoryBytes, recurrentWork, visibleKeys, type KvSettings} from "./layerMemory.js";
import {weightBaseName, type PlanPrediction, type PlannerModel, type PlannerTensor, type ResolvedPlacement, type VramNeed, type Workload} from "./types.js";

/**
 * Smallest batch for which a GPU backend runs an op whose weight is in host memory (copying the weight over first).
 * source: ggml_backend_cuda_device_offload_op / ggml_backend_vk_device_offload_op compare the op's batch (`ne[1]`,
 * `ne[2]` for MUL_MAT_ID) with the device's op_offload_min_batch_size: 32, or env GGML_OP_OFFLOAD_MIN_BATCH.
 */
export const OFFLOAD_MIN_BATCH = 32;
/**
 * Bytes per KV cache element of each cache type: F16, and the quantized blocks of 32 elements with one F16 scale
 * (source: ggml's type traits, ggml/src/ggml.c: block_q8_0 = 34 bytes, block_q4_0 = 18 bytes per 32).
 */
export const KV_ELEMENT_BYTES: Readonly<Record<KvCacheType, number>> = {f16: 2, q8_0: 34 / 32, q4_0: 18 / 32};
/** Activations are F32 in llama.cpp graphs. */
const ACTIVATION_BYTES = 4;

/** Machine facts the cost model reads. */
export type CostInputs = {
    readonly model: PlannerModel;
    readonly profile: MachineProfile;
    /** The GPU device name in the profile (`"CUDA0"`, `"Vulkan0"`), or `null` for a CPU-only machine. */
    readonly gpuDevice: string | null;
    /** Defaults to `"median"`. */
    readonly statistic?: ProfileStatistic;
    /**
     * Measured GPU compute buffer bytes per {@link scratchKey} of the settings (micro-batch, flash attention, op and KV
     * offload) at {@link scratchContextSize} (llama.cpp's no-alloc simulation, see simulateVram.ts). Missing settings
     * fall back to the {@link scratchBytes} formula.
     */
    readonly scratchByKey?: ReadonlyMap<string, number>;
    /** Context size the scratch measurements were taken at. */
    readonly scratchContextSize?: number;
    /**
     * Fixed cost of one llama_decode call beyond its matmuls, µs: graph build + scheduling, output/sampling and the
     * generation loop's per-token work. Defaults to the profile's `decodeOverheadUs` (measured by
     * calibrateDecodeOverhead.ts), else 0 (fake profiles).
     */
    readonly decodeOverheadUs?: number;
    /**
     * Cost of one layer's non-matmul graph nodes per llama_decode (norms, RoPE, softmax, adds, KV copies: one node
     * launch and thread barrier each), µs. Defaults to the profile's `decodePerLayerUs`, else 0.
     */
    readonly decodePerLayerUs?: number;
    /**
     * The GPU backend's op_offload_min_batch_size (env `GGML_OP_OFFLOAD_MIN_BATCH` where the process sets it).
     * Defaults to {@link OFFLOAD_MIN_BATCH}.
     */
    readonly offloadMinBatch?: number;
};

/**
 * One node of the per-layer execution order that matters for device switches: a weight matmul, a layer's attention
 * (or recurrent op), a node llama.cpp pins to its layer's device (see {@link PINNED_NORM_MAX_BATCH}), or another op that
 * reads a weight — a convolution kernel, an SSM's A and D, attention sinks — and so runs where that weight lives
 * (ggml_backend_sched assigns an op with a weight source to the weight's backend, and offloads it with the matmuls).
 */
export type SeqNode = {readonly kind: "op"; readonly tensor: PlannerTensor} | {readonly kind: "attn"; readonly layer: number}
    | {readonly kind: "pin"; readonly layer: number; readonly what: string} | {readonly kind: "weight"; readonly tensor: PlannerTensor};

/**
 * Micro-batches below this many tokens run every "norm" node of a layer (build_norm's output, before its weight is
 * applied) on that layer's device, and so do all micro-batches of a model with every layer and the output offloaded
 * (`-ngl` > n_layer). source: llama_context::graph_get_cb ("norm may be automatically assigned to the backend of the
 * previous layer, increasing data transfer between backends": `ubatch.n_tokens < 32 || full_offload`). So a layer
 * whose device is the GPU runs its norms there while a token is generated even when every weight of the layer is in
 * host memory: two CPU↔GPU switches per norm. Measured with llama.cpp's own count of decode graph splits (the
 * "graph … splits = pp / tg" line of llama_context's reserve) on an 8-layer llama with every matmul weight in host
 * memory on llvmpipe: 35 splits at `-ngl max`, 1 at `-ngl 0` (electron/engine/planner/graphSplits.vulkan.test.ts).
 */
export const PINNED_NORM_MAX_BATCH = 32;

/**
 * Where each norm weight's norm runs in its layer, by role, relative to the matmul roles of {@link ROLE_ORDER}: after
 * the projection it normalises, before the attention (`@attn`), or before/after an op; a norm role not listed is the
 * layer's input norm (before its first op). source: the build_norm calls of src/models/*.cpp.
 */
export const NORM_POSITIONS: Readonly<Record<string, readonly [role: string, offset: number]>> = {
    attn_q_a_norm: ["attn_q_a", 0.5], attn_kv_a_norm: ["attn_kv_a_mqa", 0.5],
    attn_q_norm: ["attn_q", 0.5], attn_k_norm: ["attn_k", 0.5], ssm_dt_norm: ["@attn", -0.5], ssm_b_norm: ["@attn", -0.5],
    ssm_c_norm: ["@attn", -0.5], "indexer.q_norm": ["@attn", -0.5], "indexer.k_norm": ["@attn", -0.5],
    attn_sub_norm: ["@attn", 0.5], ssm_norm: ["@attn", 0.5], time_mix_ln: ["@attn", 0.5],
    post_attention_norm: ["attn_output", 0.5], attn_output_norm: ["attn_output", 0.5],
    ffn_norm: ["hc_ffn_fn", -0.5], pre_ffw_norm_2: ["hc_ffn_fn", -0.5], hc_ffn_norm: ["hc_ffn_fn", -0.5],
    "enc.ffn_norm": ["hc_ffn_fn", -0.5], "dec.ffn_norm": ["hc_ffn_fn", -0.5], "dec.cross_attn_norm": ["dec.cross_attn_q", -0.5],
    ffn_sub_norm: ["ffn_down", -0.5],
    post_ffw_norm: ["ffn_down", 0.5], post_ffw_norm_1: ["ffn_down", 0.5], post_ffw_norm_2: ["ffn_down", 0.5],
    layer_output_norm: ["ffn_down", 0.5], post_norm: ["ffn_down", 0.5]
};

/**
 * Where an op on another per-layer weight runs in its layer (see {@link SeqNode}): a short convolution right after the
 * input projection it convolves; anything else beside the layer's attention or recurrent op.
 */
export const WEIGHT_POSITIONS: Readonly<Record<string, readonly [role: string, offset: number]>> = {
    ssm_conv1d: ["ssm_in", 0.5], "shortconv.conv": ["shortconv.in_proj", 0.5]
};


// Graph order of a layer (src/models/*.cpp), for counting device switches: input projections, the layer's attention
// node ("@attn": attention over the KV cache, or the recurrent op of an SSM / linear-attention / short-conv layer:
// ggml_ssm_scan, the delta net, ggml_ssm_conv), then output projections and the FFN.
// - llm_build_llama: Q, K, V, attention, output projection, FFN. A MoE layer (llm_graph_context::build_moe_ffn): the
//   router (ffn_gate_inp), then the selected experts' gate, up and down (MUL_MAT_ID); shared experts (`*_shexp`, dense
//   roles) run beside them.
// - MLA (build_attn_mla in src/models/deepseek2.cpp): attn_q_a → attn_q_b, attn_kv_a_mqa, then attn_k_b absorbs q_nope
//   before the attention; attn_v_b expands its output per head inside build_attn (v_mla), before attn_output. Sparse
//   attention's indexer (deepseek32, glm-dsa, deepseek4) and compressor project the layer input before it.
// - Mamba (src/models/mamba-base.cpp): ssm_in, ssm_x, ssm_dt, the scan, ssm_out; LFM2's short-conv: in_proj, the conv,
//   out_proj; Qwen3-Next's gated delta net: ssm_in / attn_qkv, ssm_ba, the delta net, ssm_out; Kimi's KDA: ssm_f_*,
//   ssm_beta, the delta net, then the output gate ssm_g_* and attn_output; RWKV's time mix, then its channel mix (FFN).
// - gemma3n: AltUp prediction and LAuReL before the attention, the AltUp correction and per-layer input after the FFN;
//   deepseek4's hyper-connections mix the residual streams around the attention and the FFN.
// Roles not listed go last in their layer.
export const ROLE_ORDER: readonly string[] = [
    "hc_attn_fn", "hc_attn_down", "hc_attn_up", "altup_router", "altup_predict_coef", "laurel_l", "laurel_r",
    "attn_qkv", "attn_q", "attn_q_a", "attn_q_b", "attn_k", "attn_v", "attn_kv", "attn_kv_a_mqa", "attn_kv_b", "attn_k_b", "attn_gate",
    "attn_compressor_kv", "attn_compressor_gate", "indexer.attn_q_b", "indexer.q_proj", "indexer.attn_k", "indexer.k_proj", "indexer.proj",
    "indexer_compressor_kv", "indexer_compressor_gate", "attn_conv_proj", "ple_key", "ple_value", "vis_attn_qkv",
    "ssm_in", "shortconv.in_proj", "ssm_x", "ssm_dt", "ssm_ba", "ssm_alpha", "ssm_beta", "ssm_f_a", "ssm_f_b",
    "time_mix_w1", "time_mix_w2", "time_mix_decay_w1", "time_mix_decay_w2", "time_mix_a1", "time_mix_a2", "time_mix_v1", "time_mix_v2",
    "time_mix_g1", "time_mix_g2", "time_mix_receptance", "time_mix_key", "time_mix_value", "time_mix_gate",
    "enc.attn_q", "enc.attn_k", "enc.attn_v", "dec.attn_q", "dec.attn_k", "dec.attn_v",
    "@attn",
    "attn_v_b", "ssm_g_a", "ssm_g_b", "ssm_g", "attn_output_a", "attn_output_b", "attn_output", "ssm_out", "shortconv.out_proj",
    "time_mix_output", "vis_attn_output", "enc.attn_o", "dec.attn_o", "dec.cross_attn_q", "dec.cross_attn_k", "dec.cross_attn_v",
    "dec.cross_attn_o", "hc_attn_inject",
    "hc_ffn_fn", "hc_ffn_down", "hc_ffn_up", "ffn_conv_proj",
    "ffn_gate_inp", "ffn_latent_down", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps", "ffn_latent_up", "ffn_routed_up", "ffn_routed_down",
    "ffn_gate", "ffn_up", "ffn_down", "channel_mix_receptance", "channel_mix_key", "channel_mix_value", "vis_gate", "vis_up", "vis_down",
    "enc.ffn_gate", "enc.ffn_up", "enc.ffn_down", "dec.ffn_gate", "dec.ffn_up", "dec.ffn_down",
    "hc_ffn_inject", "altup_correct_coef", "inp_gate", "proj", "nextn.eh_proj", "nextn.shared_head_head"
];

/**
 * Weight ops outside the layers that run before layer 0 (gemma3n's per-layer input projection and AltUp projection,
 * src/models/gemma3n.cpp); every other one (classifier heads, AltUp unembedding, hyper-connection head, …) runs after
 * the last layer, before `output`.
 */
const LEADING_GLOBAL_ROLES: readonly string[] = ["per_layer_model_proj", "altup_proj"];

/**
 * Weight matmuls in execution order, with an attention node per layer between the layer's input projections and its
 * output projection (see ROLE_ORDER), and the weight ops outside the layers before layer 0 or after the last one. With
 * `pins`, also the nodes llama.cpp runs on the layer's device whatever their weights ({@link PINNED_NORM_MAX_BATCH}):
 * each norm with a weight, and the RoPE of a model with `rope_freqs` (a copy per layer, in the layer's buffer type:
 * llama_model's TENSOR_DUPLICATED rope_freqs, and a ROPE op runs where that weight source lives).
 */
export function executionOrder(model: PlannerModel, options: {readonly pins?: boolean} = {}): SeqNode[] {
    const byLayer = new Map<number, PlannerTensor[]>();
    const normsByLayer = new Map<number, PlannerTensor[]>();
    const weightsByLayer = new Map<number, PlannerTensor[]>();
    const leading: PlannerTensor[] = [];
    const trailing: PlannerTensor[] = [];
    let output: PlannerTensor | null = null;
    // a bias or scale is applied right after its matmul, on the same device in every plan (perTensor): no node of its own
    const opBases = new Set(model.tensors.filter((t) => t.op != null).map((t) => weightBaseName(t.name)));
    for (const t of model.tensors) {
        if (t.op == null) {
            if (options.pins !== true || t.layer == null || opBases.has(weightBaseName(t.name))) continue;
            const into = /norm/.test(t.role) ? normsByLayer : weightsByLayer;
            into.set(t.layer, [...(into.get(t.layer) ?? []), t]);
            continue;
        }
        if (t.layer == null) {
            if (t.role === "output") output = t;
            else (LEADING_GLOBAL_ROLES.includes(t.role) ? leading : trailing).push(t);
            continue;
        }
        byLayer.set(t.layer, [...(byLayer.get(t.layer) ?? []), t]);
    }
    const rank = (role: string): number => {
        const i = ROLE_ORDER.indexOf(role);
        return i < 0 ? ROLE_ORDER.length : i;
    };
    const normRank = (role: string): number => {
        const at = NORM_POSITIONS[role];
        return at == null ? -1 : rank(at[0]) + at[1];
    };
    const rope = options.pins === true && model.tensors.some((t) => t.role === "rope_freqs");
    const nodes: SeqNode[] = leading.map((tensor) => ({kind: "op", tensor}));
    for (let layer = 0; layer < model.layerCount; layer++) {
        // a layer without attention or recurrence (an FFN-only layer, an MTP layer llama.cpp skips) has no such node
        const mixer = hasSequenceMixer(model, layer);
        const ranked: {node: SeqNode; rank: number}[] = [
            ...(byLayer.get(layer) ?? []).map((tensor) => ({node: {kind: "op", tensor} as SeqNode, rank: rank(tensor.role)})),
            ...(mixer ? [{node: {kind: "attn", layer} as SeqNode, rank: rank("@attn")}] : []),
            ...(rope && mixer ? [{node: {kind: "pin", layer, what: "rope"} as SeqNode, rank: rank("@attn") - 0.25}] : []),
            ...(normsByLayer.get(layer) ?? []).map((t) => ({node: {kind: "pin", layer, what: t.role} as SeqNode, rank: normRank(t.role)})),
            ...(weightsByLayer.get(layer) ?? []).map((tensor) => {
                const at = WEIGHT_POSITIONS[tensor.role];
                return {node: {kind: "weight", tensor} as SeqNode, rank: at == null ? rank("@attn") - 0.1 : rank(at[0]) + at[1]};
            })
        ];
        // stable: ops of one rank keep the model's order, and the attention goes before the ops ranked after it
        ranked.sort((a, b) => a.rank - b.rank);
        for (const {node} of ranked) nodes.push(node);
    }
    for (const tensor of trailing) nodes.push({kind: "op", tensor});
    if (output != null) nodes.push({kind: "op", tensor: output});
    return nodes;
}

/**
 * Bytes one layer keeps between tokens: its KV cache (context or sliding-window cells of its K and V rows, MLA's one
 * latent row, in the cache's element type) and its recurrent state (layerMemory.ts; source: llama_kv_cache and
 * llama_memory_recurrent ctors).
 */
export function kvBytesOfLayer(model: PlannerModel, layer: number, settings: KvSettings): number {
    return layerMemoryBytes(model, layer, settings, KV_ELEMENT_BYTES[settings.kvCacheType]);
}

/** {@link kvBytesOfLayer} summed over the layers `where` selects (every layer by default). */
export function kvBytesTotal(model: PlannerModel, settings: KvSettings, where: (layer: number) => boolean = () => true): number {
    let total = 0;
    for (let layer = 0; layer < model.layerCount; layer++) if (where(layer)) total += kvBytesOfLayer(model, layer, settings);
    return total;
}

/**
 * Fallback estimate of the GPU compute buffer (scratch) of the worst-case micro-batch graph llama.cpp reserves
 * (llama_context::graph_reserve, no flash attention), used only where no measurement exists (fake profiles in tests):
 * one F32 KQ score matrix (ggml-alloc reuses the softmax input's memory), the FFN intermediates and residual stream
 * that are live beside it, the logits, plus one host weight copied in for an offloaded op (ggml_backend_sched starts a
 * new split per host weight, "so the memory of previously offloaded weights can be reused"). Checked against
 * llama.cpp's no-alloc simulation on llvmpipe (small model, 4 layers, ctx 2048, micro-batch 512: 75–83.5 MiB measured,
 * 87 MiB here; the old formula gave 158 MiB). {@link CostInputs.scratchByKey} replaces it with measured numbers.
 */
export function scratchBytes(model: PlannerModel, settings: ScratchSettings, maxHostWeightBytes: number): number {
    const u = Math.min(settings.batchSize, settings.contextSize);
    // flash attention never materialises the KQ matrix (ggml_flash_attn_ext works on tiles of it)
    const kq = settings.flashAttention ? 0 : model.headCount * u * settings.contextSize * ACTIVATION_BYTES;
    const live = u * (2 * model.ff + 2 * model.embd) * ACTIVATION_BYTES;
    const logits = model.vocab * u * ACTIVATION_BYTES;
    const copies = settings.opOffload && u >= OFFLOAD_MIN_BATCH ? maxHostWeightBytes : 0;
    return kq + live + logits + copies;
}

/** The settings a compute buffer depends on. */
export type ScratchSettings = Pick<ResolvedSettings, "batchSize" | "contextSize" | "flashAttention" | "opOffload" | "kvOffload" | "kvCacheType">;

/** The key of a scratch measurement: every setting that changes llama.cpp's compute buffers (context size apart). */
export function scratchKey(settings: ScratchSettings): string {
    return [Math.min(settings.batchSize, settings.contextSize), settings.flashAttention ? "fa" : "nofa", settings.opOffload ? "po" : "nopo",
        settings.kvOffload ? "kvo" : "nokvo", settings.kvCacheType].join(":");
}

/**
 * The GPU scratch for these settings: measured (no-alloc simulation, see simulateVram.ts) when the inputs carry a
 * measurement for this micro-batch, else {@link scratchBytes}. The measurement is the worst of all-on-GPU and
 * all-on-host placements, so it already includes the copy of a host weight.
 */
export function scratchFor(inputs: CostInputs, settings: ScratchSettings, maxHostWeightBytes: number): number {
    return measuredScratch(inputs, settings) ?? scratchBytes(inputs.model, settings, maxHostWeightBytes);
}

/** The measured scratch for these settings, or `null` when the inputs carry none for them. */
export function measuredScratch(inputs: CostInputs, settings: ScratchSettings): number | null {
    if (inputs.scratchContextSize !== settings.contextSize) return null;
    return inputs.scratchByKey?.get(scratchKey(settings)) ?? null;
}

/** Precomputed rates for one profile + settings. */
export type CostContext = {
    readonly inputs: CostInputs;
    /**
     * The GPU this plan uses: the inputs' GPU, or `null` when there is none or the settings do not use it
     * (`useGpu` false: llama.cpp's `--device none`, so no op is offloaded either).
     */
    readonly gpuDevice: string | null;
    /** Prompt micro-batches ≥ {@link offloadMinBatch} run host-weight ops on the GPU (a GPU is used and op offload is on). */
    readonly opOffload: boolean;
    readonly settings: ResolvedSettings;
    readonly workload: Workload;
    readonly order: readonly SeqNode[];
    /** Micro-batch sizes the prompt is split into (source: llama_batch_allocr::split_simple, n_ubatch). */
    readonly ubatches: readonly number[];
    readonly h2dBytesPerUs: number;
    readonly switchUs: number;
    readonly launchUs: number;
    readonly gpuReadBytesPerUs: number;
    readonly cpuReadBytesPerUs: number;
    readonly gpuFlopsPerUs: number;
    readonly cpuFlopsPerUs: number;
    /** See {@link CostInputs.offloadMinBatch}. */
    readonly offloadMinBatch: number;
};

/** Bytes of the matrix one multiplication streams: the whole weight, or one expert's slice of an expert weight. */
export function opBytes(t: PlannerTensor): number {
    return t.experts == null ? t.bytes : t.bytes / t.experts.count;
}

function peak(profile: MachineProfile, device: string, minBatch: number, perPoint: (rows: number, cols: number, batch: number, type: string) => number): number {
    let best = 0;
    for (const p of profile.matmuls) {
        if (p.device !== device || !p.supported || p.medianUs <= 0 || p.batch < minBatch) continue;
        best = Math.max(best, perPoint(p.rows, p.cols, p.batch, p.type) / p.medianUs);
    }
    return best;
}

/** Builds the rates the cost model uses for these settings and workload. */
export function costContext(inputs: CostInputs, settings: ResolvedSettings, workload: Workload): CostContext {
    const {profile, model} = inputs;
    const gpuDevice = settings.useGpu ? inputs.gpuDevice : null;
    const u = Math.max(1, Math.min(settings.batchSize, settings.contextSize));
    const ubatches: number[] = [];
    for (let left = workload.promptTokens; left > 0; left -= u) ubatches.push(Math.min(u, left));
    const transfer = gpuDevice == null ? null : transfersOf(profile, gpuDevice);
    // bytes per element of a weight: from the op shape and the tensor's bytes, for bandwidth estimates
    const bytesOf = new Map<string, number>();
    for (const t of model.tensors) if (t.op != null) bytesOf.set(`${t.type}:${t.op.rows}x${t.op.cols}`, opBytes(t));
    const weightBytes = (rows: number, cols: number, _b: number, type: string): number => bytesOf.get(`${type}:${rows}x${cols}`) ?? rows * cols * 2;
    const flops = (rows: number, cols: number, batch: number): number => 2 * rows * cols * batch;
    const cpuFlops = peak(profile, "CPU", OFFLOAD_MIN_BATCH, flops) || peak(profile, "CPU", 1, flops);
    return {
        inputs, gpuDevice, opOffload: gpuDevice != null && settings.opOffload, settings, workload, ubatches, order: executionOrder(model, {pins: true}),
        // pinned host buffer when mmap is off, pageable (mmap'ed file pages) when on (ggml_backend_sched copies host weights per micro-batch)
        h2dBytesPerUs: transfer == null ? 0 : (settings.useMmap ? transfer.pageableH2dBytesPerSec : transfer.pinnedH2dBytesPerSec) / 1e6,
        // the end-to-end decode switch where it was calibrated (it includes the CPU's side the transfer timing leaves out)
        switchUs: transfer == null ? 0 : profile.decodeSwitchUs ?? transfer.switchUs,
        launchUs: transfer?.launchUs ?? 0,
        gpuReadBytesPerUs: gpuDevice == null ? 0 : peak(profile, gpuDevice, 1, weightBytes),
        cpuReadBytesPerUs: Math.max(profile.cpuReadBytesPerSec / 1e6, peak(profile, "CPU", 1, weightBytes)),
        // a time-limited profile may lack the GPU's prefill sizes: its single-token rate then (as for the CPU), not zero
        gpuFlopsPerUs: gpuDevice == null ? 0 : peak(profile, gpuDevice, OFFLOAD_MIN_BATCH, flops) || peak(profile, gpuDevice, 1, flops),
        cpuFlopsPerUs: cpuFlops,
        offloadMinBatch: inputs.offloadMinBatch ?? OFFLOAD_MIN_BATCH
    };
}

/** An op never costs less than this share of its single-op timing, however large the launch cost measured. */
const MIN_WORK_SHARE = 0.1;

/**
 * One weight matmul inside a llama.cpp graph. The profiler timed it as a graph of its own, which pays one graph launch
 * (CPU: thread wake-up + barrier + join; GPU: submit + sync); inside a decode graph those are paid once per split
 * (priced by the hops and the per-decode overhead), so the launch is taken off when the profile measured it.
 */
export function mm(cx: CostContext, t: PlannerTensor, gpu: boolean, batch: number): number {
    const device = gpu ? cx.gpuDevice : "CPU";
    // A single-token matmul streams its weight from memory once per token. The profiler times it at batch 1 over the
    // model's own working set of distinct weights (profileMachine.ts, decodeWorkingSetBytes), so the op's own point
    // already carries the memory-bound rate of its ggml type and shape; no other op's rate bounds it (a faster op of
    // the same type was measured in the cache, not as a decode reads it).
    const us = matmulUs(cx.inputs.profile, device ?? "CPU", t.op!, batch, cx.inputs.statistic);
    // slope-timed profiles already exclude the per-graph launch
    const launch = cx.inputs.profile.cpuLaunchUs == null || cx.inputs.profile.matmulTiming === "slope" ? 0
        : gpu ? cx.launchUs : cx.inputs.profile.cpuLaunchUs;
    return Math.max(us * MIN_WORK_SHARE, us - launch);
}

/** The MUL_MAT_ID operator of an expert weight, as the profiler records it. */
function expertOp(t: PlannerTensor): ExpertOperatorShape {
    return {...t.op!, count: t.experts!.count, used: t.experts!.used};
}

/** The profiled MUL_MAT_ID time of an expert weight over `batch` tokens, or `null` where the profile has none. */
function measuredExpertUs(cx: CostContext, t: PlannerTensor, gpu: boolean, batch: number): number | null {
    const device = gpu ? cx.gpuDevice : "CPU";
    return expertMatmulUs(cx.inputs.profile, device ?? "CPU", expertOp(t), batch, cx.inputs.statistic);
}

/**
 * One decode step of a weight op: it runs where its weight lives (batch 1 < the offload threshold: no offload). An
 * expert weight is multiplied by the token's `used` selected experts only, so it reads used/count of its bytes
 * (source: ggml_mul_mat_id in llm_graph_context::build_moe_ffn; the CPU and GPU kernels skip unselected experts):
 * the profiled MUL_MAT_ID of one token where the profile has it, else `used` dense matmuls of one expert's matrix.
 */
export function decodeOpUs(cx: CostContext, t: PlannerTensor, gpu: boolean): number {
    if (t.experts == null) return mm(cx, t, gpu, 1);
    return measuredExpertUs(cx, t, gpu, 1) ?? t.experts.used * mm(cx, t, gpu, 1);
}

/**
 * One micro-batch of `b` tokens through an expert weight: the profiled MUL_MAT_ID at `b` tokens (uniform routing)
 * where the profile has it; else each distinct expert touched (see expectedDistinctExperts.ts) runs one dense matmul
 * over the tokens routed to it, b·used/distinct on average.
 */
function expertBatchUs(cx: CostContext, t: PlannerTensor, gpu: boolean, b: number, distinct: number): number {
    return measuredExpertUs(cx, t, gpu, b) ?? distinct * mm(cx, t, gpu, b * t.experts!.used / distinct);
}

/**
 * Copy of the `distinct` experts a micro-batch uses to the GPU, for an offloaded host-resident MUL_MAT_ID: the profiled
 * copy (from pinned memory, consecutive experts grouped as the scheduler groups them) where the profile has it, scaled
 * to pageable memory when mmap is on; else their bytes over the H2D bandwidth.
 */
function expertCopyCostUs(cx: CostContext, t: PlannerTensor, distinct: number): number {
    const {profile} = cx.inputs;
    const {gpuDevice} = cx;
    const measured = gpuDevice == null ? null : expertCopyUs(profile, gpuDevice, expertOp(t), distinct);
    if (measured == null) return (distinct / t.experts!.count) * t.bytes / cx.h2dBytesPerUs;
    if (!cx.settings.useMmap) return measured;
    const transfer = transfersOf(profile, gpuDevice!);
    return measured * transfer.pinnedH2dBytesPerSec / Math.max(1, transfer.pageableH2dBytesPerSec);
}

/**
 * The whole prompt's cost of a weight op. Micro-batches ≥ the offload threshold run it on the GPU; a host weight is
 * first copied over, once per micro-batch, in its own scheduler split (copy + sync). For a host expert weight only the
 * experts the micro-batch uses are copied ("copying only the experts that are used", ggml_backend_sched_compute_splits).
 * Smaller micro-batches, and every micro-batch with op offload off (`--no-op-offload`), run it where it lives. `output`
 * runs once, at batch 1: llama.cpp keeps only the rows that need logits (inp_out_ids).
 */
export function prefillOpUs(cx: CostContext, t: PlannerTensor, gpu: boolean): number {
    if (t.role === "output") return mm(cx, t, gpu, 1);
    let total = 0;
    for (const b of cx.ubatches) {
        const offloaded = cx.opOffload && b >= cx.offloadMinBatch;
        const runsOnGpu = offloaded || gpu;
        if (t.experts == null) {
            total += mm(cx, t, runsOnGpu, b);
            if (offloaded && !gpu) total += t.bytes / cx.h2dBytesPerUs + cx.launchUs;
            continue;
        }
        const distinct = expectedDistinctExperts(t.experts.count, t.experts.used, b);
        total += expertBatchUs(cx, t, runsOnGpu, b, distinct);
        if (offloaded && !gpu) total += expertCopyCostUs(cx, t, distinct) + cx.launchUs;
    }
    return total;
}

/**
 * The attention shape the profiler times (one layer's, attentionRequest in profileMachine.ts): the shape most of the
 * model's attention layers have (layerMemory.ts; MLA's: one latent K head, the latent's value part as V); `heads` 0
 * for a model without attention (Mamba, RWKV), which then has none timed.
 */
export function attentionShapeOf(model: PlannerModel): AttentionShape {
    const cached = attentionShapes.get(model);
    if (cached != null) return cached;
    const counts = new Map<string, {shape: AttentionShape; count: number}>();
    for (let layer = 0; layer < model.layerCount; layer++) {
        const a = layerAttention(model, layer);
        if (a == null) continue;
        const shape = {headDim: a.headK, headDimV: a.headV, heads: a.heads, kvHeads: a.kvHeads};
        const key = JSON.stringify(shape);
        counts.set(key, {shape, count: (counts.get(key)?.count ?? 0) + 1});
    }
    const best = [...counts.values()].sort((a, b) => b.count - a.count)[0];
    const shape = best?.shape ?? {headDim: 0, headDimV: 0, heads: 0, kvHeads: 0};
    attentionShapes.set(model, shape);
    return shape;
}

const attentionShapes = new WeakMap<PlannerModel, AttentionShape>();

/** KV cells llama.cpp's attention spans are padded to this many (llama_kv_cache::get_n_kv: at least 256, a multiple of 256). */
const KV_CELL_PAD = 256;

/**
 * The keys one step's attention computes over, for `tokens` new tokens after `start` cached ones. Without flash
 * attention KQ and its soft-max span every cell of the cache's view, n_kv = the used cells padded to 256 (source:
 * llama_kv_cache::get_n_kv), masked or not; flash attention skips the masked keys (ggml's CPU kernel skips -INF mask
 * entries), so a causal prompt micro-batch costs its average visible keys, start + (tokens + 1) / 2.
 */
export function attendedKeys(cx: CostContext, start: number, tokens: number): number {
    if (cx.settings.flashAttention) return start + (tokens + 1) / 2;
    const used = start + tokens;
    const cells = Math.ceil(Math.max(cx.settings.contextSize, used) / KV_CELL_PAD) * KV_CELL_PAD;
    return Math.min(cells, Math.max(KV_CELL_PAD, Math.ceil(used / KV_CELL_PAD) * KV_CELL_PAD));
}

/** The keys of an average decode step of the workload: the one at the middle of the reply (see {@link attendedKeys}). */
export function decodeAttendedKeys(cx: CostContext): number {
    return attendedKeys(cx, Math.floor(cx.workload.promptTokens + cx.workload.genTokens / 2), 1);
}

/**
 * Attention (or the recurrent op) of one layer runs where its KV cache (or state) is (it follows the layer's device,
 * llama_kv_cache, llama_memory_recurrent). Attention: the profiled attention for this flash-attention setting and KV
 * cache type where the profile has it, over the keys the layer sees (a sliding-window layer at most its window), scaled
 * by the layer's work against the profiled shape's where the layer's shape differs (heads or head sizes vary). Flash
 * attention that the GPU has no kernel for runs on the CPU, with K and V copied to it every step (ggml_backend_sched
 * falls back to a backend that supports the op). Without a profiled point, and for the recurrent op (not profiled):
 * decode reads the cached rows or the state, a micro-batch multiplies (layerMemory.ts: attentionWork, recurrentWork).
 */
export function attentionUs(cx: CostContext, kvGpu: boolean, tokens: number, keys: number, layer: number): number {
    const {model, profile} = cx.inputs;
    const {flashAttention, kvCacheType} = cx.settings;
    const elementBytes = KV_ELEMENT_BYTES[kvCacheType];
    const readRate = kvGpu ? cx.gpuReadBytesPerUs : cx.cpuReadBytesPerUs;
    const flopRate = kvGpu ? cx.gpuFlopsPerUs : cx.cpuFlopsPerUs;
    const state = recurrentWork(model, layer, tokens);
    const recurrent = state.bytes / readRate + state.flops / flopRate;
    const a = layerAttention(model, layer);
    if (a == null) return recurrent;
    const visible = visibleKeys(a, keys);
    const device = kvGpu ? cx.gpuDevice : "CPU";
    if (device != null) {
        const shape = attentionShapeOf(model);
        const scale = tokens === 1 ? a.kvHeads * (a.headK + a.headV) / Math.max(1, shape.kvHeads * (shape.headDim + shape.headDimV))
            : a.heads * (a.headK + a.headV) / Math.max(1, shape.heads * (shape.headDim + shape.headDimV));
        const measured = profiledAttentionUs(profile, device, flashAttention, kvCacheType, tokens, visible, cx.inputs.statistic);
        if (measured != null) return recurrent + measured * scale;
        if (kvGpu && attentionUnsupported(profile, device, flashAttention, kvCacheType)) {
            const onCpu = profiledAttentionUs(profile, "CPU", flashAttention, kvCacheType, tokens, visible, cx.inputs.statistic);
            const kvBytes = visible * a.cellElements * elementBytes;
            if (onCpu != null) return recurrent + onCpu * scale + kvBytes / Math.max(cx.h2dBytesPerUs, 1e-9) + 2 * cx.switchUs;
        }
    }
    const work = attentionWork(model, layer, tokens, keys, elementBytes);
    return recurrent + work.bytes / readRate + work.flops / flopRate;
}

/** CPU↔GPU switches along a device sequence (`null`: a node that runs wherever its neighbours do). */
function hops(devices: readonly (boolean | null)[]): number {
    let count = 0;
    let previous = false; // embeddings: get_rows on token_embd, an input-layer tensor llama.cpp keeps on the CPU
    for (const gpu of devices) {
        if (gpu == null) continue;
        if (gpu !== previous) count++;
        previous = gpu;
    }
    return count + (previous ? 1 : 0); // logits go back to the host
}

/** What the devices of a step's nodes depend on: no timing. */
type DeviceContext = Pick<CostContext, "gpuDevice" | "opOffload" | "offloadMinBatch" | "settings" | "order">;

/** Whether llama.cpp's device of the layer is the GPU (see {@link ResolvedPlacement.layerOnGpu}). */
export function layerOnGpu(cx: Pick<CostContext, "gpuDevice">, p: ResolvedPlacement, layer: number): boolean {
    return cx.gpuDevice != null && p.layerOnGpu[layer] === true;
}

/**
 * Whether a layer's KV cache and attention are on the GPU: its layer's, unless the plan keeps every KV cache in host
 * memory (`--no-kv-offload`: llama_kv_cache puts every layer's K and V in host buffers, and attention runs there).
 */
export function kvOnGpu(cx: Pick<CostContext, "gpuDevice" | "settings">, p: ResolvedPlacement, layer: number): boolean {
    return cx.settings.kvOffload && layerOnGpu(cx, p, layer);
}

/** Layers whose KV cache is on the GPU (see {@link kvOnGpu}). */
export function gpuKvLayers(cx: CostContext, p: ResolvedPlacement): number {
    let count = 0;
    for (let layer = 0; layer < cx.inputs.model.layerCount; layer++) if (kvOnGpu(cx, p, layer)) count++;
    return count;
}

/** Whether llama.cpp pins the layers' norms to their devices in a step of `batch` tokens ({@link PINNED_NORM_MAX_BATCH}). */
export function normsPinned(p: ResolvedPlacement, batch: number): boolean {
    return batch < PINNED_NORM_MAX_BATCH || p.gpuLayers === "max";
}

/** Device of each execution-order node in one step of `batch` tokens (`null`: not pinned, runs with its neighbours). */
function nodeDevices(cx: DeviceContext, p: ResolvedPlacement, batch: number): (boolean | null)[] {
    const offloadAll = cx.opOffload && batch >= cx.offloadMinBatch;
    const pinned = normsPinned(p, batch);
    return cx.order.map((n) => n.kind === "attn" ? kvOnGpu(cx, p, n.layer)
        : n.kind === "pin" ? (pinned ? layerOnGpu(cx, p, n.layer) : null)
        : cx.gpuDevice != null && ((offloadAll && (n.kind === "weight" || n.tensor.role !== "output")) || p.onGpu.has(n.tensor.name)));
}

/** Number of CPU↔GPU switches in one decode step. */
export function decodeHops(cx: DeviceContext, p: ResolvedPlacement): number {
    return cx.gpuDevice == null ? 0 : hops(nodeDevices(cx, p, 1));
}

/** {@link decodeHops} of `p` on a machine with a GPU, with these settings: where the nodes run, no timing. */
export function decodeSwitches(model: PlannerModel, p: ResolvedPlacement, settings: ResolvedSettings): number {
    return decodeHops({gpuDevice: "GPU", opOffload: settings.opOffload, offloadMinBatch: OFFLOAD_MIN_BATCH, settings,
        order: executionOrder(model, {pins: true})}, p);
}

/**
 * The decode graph's splits as llama.cpp counts them (ggml_backend_sched_get_n_splits: runs of nodes on one backend,
 * logged by llama_context's graph reserve as "splits = <prompt> / <decode>"): the switches of one decode step, less
 * the logits' copy back to the host (not a split), plus the first run (the embeddings, on the CPU).
 */
export function decodeSplits(cx: DeviceContext, p: ResolvedPlacement): number {
    const devices = cx.gpuDevice == null ? [] : nodeDevices(cx, p, 1).filter((d) => d != null);
    return decodeHops(cx, p) - (devices.at(-1) === true ? 1 : 0) + 1;
}

/** VRAM the plan needs: GPU weights, KV of GPU layers, scratch. */
export function vramNeed(cx: CostContext, p: ResolvedPlacement): VramNeed {
    const {model} = cx.inputs;
    if (cx.gpuDevice == null) return {weights: 0, kv: 0, scratch: 0, total: 0};
    // Nothing on the GPU (-ngl 0): llama.cpp still creates the GPU backend and, with op offload on, for micro-batches
    // ≥ OFFLOAD_MIN_BATCH reserves a compute buffer there for the ops it offloads (source: llama_context ctor,
    // op_offload; measured with llama.cpp's no-alloc simulation on llvmpipe, small model, ctx 2048, micro-batch 512:
    // 83.5 MiB of Vulkan0 compute at -ngl 0, none with --no-op-offload or a 16-token micro-batch).
    const offloads = cx.opOffload && Math.min(cx.settings.batchSize, cx.settings.contextSize) >= cx.offloadMinBatch;
    if (p.onGpu.size === 0 && gpuKvLayers(cx, p) === 0 && !offloads) return {weights: 0, kv: 0, scratch: 0, total: 0};
    let weights = 0;
    let maxHost = 0;
    for (const t of model.tensors) {
        if (p.onGpu.has(t.name)) weights += t.bytes;
        else if (t.op != null && t.role !== "output") maxHost = Math.max(maxHost, t.bytes);
    }
    const kv = kvBytesTotal(model, cx.settings, (layer) => kvOnGpu(cx, p, layer));
    const scratch = scratchFor(cx.inputs, cx.settings, maxHost);
    return {weights, kv, scratch, total: weights + kv + scratch};
}

/**
 * Host bytes of a tied output left in host memory (loadedTensors.ts): none where its copy shares token_embd's buffer,
 * its bytes where the CPU's extra buffer type (AMX, CPU_REPACK) takes the matmul weight, as the profile's CPU timing of
 * its operator records, since token_embd's GET_ROWS stays in the plain one (source: llama_model_loader::create_tensor,
 * TENSOR_DUPLICATED: a new tensor unless the output's buffer type is token_embd's).
 */
function tiedHostBytes(cx: CostContext, t: PlannerTensor): number {
    const point = t.op == null ? undefined : cx.inputs.profile.matmuls.find((m) =>
        m.device === "CPU" && m.type === t.op!.type && m.rows === t.op!.rows && m.cols === t.op!.cols);
    const buffer = point?.weightBufferType;
    return buffer != null && buffer !== "CPU" && !isPinnedHostBufferType(buffer) ? t.bytes : 0;
}

/** The context size and micro-batch calibrateDecodeOverhead.ts measures its tiny models at (its decode spans 256 cells). */
const CALIBRATION_KEYS = 256;

/**
 * One llama_decode's cost beyond its weight matmuls and attention, µs: the fixed part (graph build, scheduling,
 * sampling) and every layer's non-matmul nodes, as calibrateDecodeOverhead.ts measured them. Its per-layer slope was
 * measured with attention included (the tiny models' attention over 256 cells, flash attention off); where the profile
 * times attention itself, that part is taken out here so that attention is not counted twice.
 */
export function decodeOverheadOf(cx: CostContext): number {
    const {profile, model} = cx.inputs;
    const perLayer = cx.inputs.decodePerLayerUs ?? profile.decodePerLayerUs ?? 0;
    const inCalibration = cx.inputs.decodePerLayerUs != null ? null : profiledAttentionUs(profile, "CPU", false, "f16", 1, CALIBRATION_KEYS);
    return (cx.inputs.decodeOverheadUs ?? profile.decodeOverheadUs ?? 0)
        + model.layerCount * Math.max(0, perLayer - (inCalibration ?? 0));
}

/** Predicts TTFT, TPOT and VRAM for a resolved placement under the context's settings and workload. */
export function predict(cx: CostContext, p: ResolvedPlacement): PlanPrediction {
    const {workload, order} = cx;
    const hasGpu = cx.gpuDevice != null;
    // decode: the average context position over the reply
    const decodeKeys = decodeAttendedKeys(cx);
    let tpot = 0;
    for (const n of order) {
        if (n.kind === "attn") tpot += attentionUs(cx, kvOnGpu(cx, p, n.layer), 1, decodeKeys, n.layer);
        else if (n.kind === "op") tpot += decodeOpUs(cx, n.tensor, hasGpu && p.onGpu.has(n.tensor.name));
    }
    const dHops = decodeHops(cx, p);
    tpot += dHops * cx.switchUs;
    // one llama_decode per token: graph build, scheduling, output copy, sampling; and every layer's non-matmul nodes
    const overheadUs = decodeOverheadOf(cx);
    tpot += overheadUs;

    // one llama_decode per micro-batch (source: llama_context::decode loops over the ubatches of one batch, and
    // node-llama-cpp submits the prompt as one batch of n_batch = n_ubatch tokens at a time)
    let ttft = cx.ubatches.length * overheadUs;
    let start = 0;
    for (const b of cx.ubatches) {
        for (const n of order) if (n.kind === "attn") ttft += attentionUs(cx, kvOnGpu(cx, p, n.layer), b, attendedKeys(cx, start, b), n.layer);
        if (hasGpu) {
            // every switch copies the micro-batch's activations across
            const hopUs = cx.switchUs + b * cx.inputs.model.embd * ACTIVATION_BYTES / Math.max(cx.h2dBytesPerUs, 1e-9);
            ttft += hops(nodeDevices(cx, p, b)) * hopUs;
        }
        start += b;
    }
    for (const n of order) if (n.kind === "op") ttft += prefillOpUs(cx, n.tensor, hasGpu && p.onGpu.has(n.tensor.name));

    let hostWeightBytes = 0;
    for (const t of cx.inputs.model.tensors) if (!hasGpu || !p.onGpu.has(t.name)) hostWeightBytes += t.tiedTo == null ? t.bytes : tiedHostBytes(cx, t);
    // source: llama_kv_cache ctor — each layer's K and V live with the layer's attention (in host memory with --no-kv-offload)
    const hostKvBytes = kvBytesTotal(cx.inputs.model, cx.settings, (layer) => !kvOnGpu(cx, p, layer));
    const ttftMs = ttft / 1000;
    const tpotMs = tpot / 1000;
    return {
        ttftMs, tpotMs,
        requestMs: ttftMs + Math.max(0, workload.genTokens - 1) * tpotMs,
        promptTokens: workload.promptTokens,
        genTokens: workload.genTokens,
        vram: vramNeed(cx, p),
        hostWeightBytes,
        hostKvBytes,
        hostScratchBytes: hasGpu ? null : scratchFor(cx.inputs, cx.settings, 0),
        decodeHops: dHops
    };
}

/**
 * A lower bound on {@link predict}'s `requestMs` for ANY placement under the context's settings: every weight op and
 * every layer's attention on whichever device is faster for it, no CPU↔GPU switch, plus the per-decode overheads —
 * predict adds up exactly these terms (and switches, which only add). The optimiser skips a configuration whose bound
 * is no better than a plan it already has.
 */
export function requestLowerBoundMs(cx: CostContext): number {
    const {workload, order} = cx;
    const rest = Math.max(0, workload.genTokens - 1);
    const gpu = cx.gpuDevice != null;
    const overheadUs = decodeOverheadOf(cx);
    let us = (cx.ubatches.length + rest) * overheadUs;
    const decodeKeys = decodeAttendedKeys(cx);
    for (const n of order) {
        if (n.kind === "pin" || n.kind === "weight") continue;
        if (n.kind === "op") {
            const cpu = prefillOpUs(cx, n.tensor, false) + rest * decodeOpUs(cx, n.tensor, false);
            us += gpu ? Math.min(cpu, prefillOpUs(cx, n.tensor, true) + rest * decodeOpUs(cx, n.tensor, true)) : cpu;
            continue;
        }
        const attention = (onGpu: boolean): number => {
            let total = rest * attentionUs(cx, onGpu, 1, decodeKeys, n.layer);
            let start = 0;
            for (const b of cx.ubatches) {
                total += attentionUs(cx, onGpu, b, attendedKeys(cx, start, b), n.layer);
                start += b;
            }
            return total;
        };
        us += gpu && cx.settings.kvOffload ? Math.min(attention(false), attention(true)) : attention(false);
    }
    return us / 1000;
}
