/**
 * Per-layer KV cache / recurrent state bytes and the work of each layer's attention or recurrence, from the model's
 * memory layout (electron/engine/gguf/llamaMemoryLayout.ts). A model without one (hand-made test models) is plain
 * GQA attention in every layer.
 */
import type {ResolvedSettings} from "../../contract/settings.js";
import type {LayerAttention, LayerMemory, MemoryLayout} from "../gguf/llamaMemoryLayout.js";
import type {PlannerModel} from "./types.js";

/** The settings a KV cache's size depends on. */
export type KvSettings = Pick<ResolvedSettings, "contextSize" | "batchSize" | "kvCacheType" | "flashAttention">;

/** llama.cpp pads the context (and the SWA cache) to 256 cells (source: llama_context ctor, llama_kv_cache_iswa ctor). */
const CELL_PAD = 256;
/** Recurrent states are F32 (source: llama_model::create_memory, GGML_TYPE_F32 for r and s). */
const STATE_ELEMENT_BYTES = 4;
/**
 * Flops per recurrent-state element and token: the state update and its read-out (ggml_ssm_scan: state·exp(dt·A) +
 * B·x·dt, then ·C; the gated delta net and RWKV's WKV update their d×d state per head the same way, a few multiply-adds
 * per element).
 */
const RECURRENT_FLOPS_PER_ELEMENT = 6;

function pad(n: number, to: number): number {
    return Math.ceil(n / to) * to;
}

/** Every layer plain GQA attention over a whole-context cache (`headDim × headCountKv` K and V rows). */
function uniformLayout(model: PlannerModel): MemoryLayout {
    const headDim = model.headDim ?? model.embd / Math.max(1, model.headCount);
    const row = headDim * model.headCountKv;
    const layer: LayerMemory = {
        attention: {heads: model.headCount, kvHeads: model.headCountKv, headK: headDim, headV: headDim, cellElements: 2 * row, window: null},
        kElements: row, vElements: row, windowed: false, recurrentElements: 0
    };
    return {layers: Array.from({length: model.layerCount}, () => layer), trunkLayers: model.layerCount, vElementsMax: row, window: null, swaBatchPad: false};
}

const uniformLayouts = new WeakMap<PlannerModel, MemoryLayout>();

/** The model's memory layout, or the uniform GQA one where the model carries none. */
export function memoryLayoutOf(model: PlannerModel): MemoryLayout {
    if (model.memory != null) return model.memory;
    let layout = uniformLayouts.get(model);
    if (layout == null) uniformLayouts.set(model, layout = uniformLayout(model));
    return layout;
}

/**
 * Cells of a layer's KV cache: the context padded to 256, or for a SWA layer the window plus a micro-batch, padded
 * to 256, at most the context (source: llama_kv_cache_iswa ctor, size_swa; node-llama-cpp loads with swa_full off).
 */
export function kvCells(layout: MemoryLayout, windowed: boolean, settings: Pick<KvSettings, "contextSize" | "batchSize">): number {
    const context = pad(Math.max(1, settings.contextSize), CELL_PAD);
    if (!windowed || layout.window == null) return context;
    const ubatch = Math.min(context, settings.batchSize + (layout.swaBatchPad ? 1 : 0));
    return Math.min(context, pad(layout.window + ubatch, CELL_PAD));
}

/**
 * Bytes a layer keeps between tokens: its K and V cache rows × cells in the cache's element type — V padded to the
 * widest layer's row when it is stored transposed (no flash attention) — plus its F32 recurrent state (one sequence).
 * source: llama_kv_cache ctor (n_embd_k_gqa, n_embd_v_gqa or n_embd_v_gqa_max when v_trans), llama_memory_recurrent ctor.
 */
export function layerMemoryBytes(model: PlannerModel, layer: number, settings: KvSettings, elementBytes: number): number {
    const layout = memoryLayoutOf(model);
    const l = layout.layers[layer];
    if (l == null) return 0;
    const cells = kvCells(layout, l.windowed, settings);
    const vRow = l.vElements === 0 ? 0 : settings.flashAttention ? l.vElements : Math.max(l.vElements, layout.vElementsMax);
    return (l.kElements + vRow) * cells * elementBytes + l.recurrentElements * STATE_ELEMENT_BYTES;
}

/** What one layer's attention or recurrence does for `tokens` new tokens over `keys` positions: bytes read and flops. */
export type LayerWork = {readonly bytes: number; readonly flops: number};

/** A layer's attention over its cache, `null` for a layer without one (recurrent, FFN-only, skipped MTP). */
export function layerAttention(model: PlannerModel, layer: number): LayerAttention | null {
    return memoryLayoutOf(model).layers[layer]?.attention ?? null;
}

/** The keys a layer's attention sees at `keys` positions: at most its sliding window. */
export function visibleKeys(attention: LayerAttention, keys: number): number {
    return attention.window == null ? keys : Math.min(keys, attention.window);
}

/**
 * Work of a layer's attention. Decode (one token) is memory-bound: KQ reads each visible key's K row and KQV its V row
 * (a SWA layer sees at most its window; under MLA both read the one latent row, V as a view of its first
 * kv_lora_rank elements, in two passes). A prompt micro-batch is compute-bound: KQ and KQV over the visible keys, 2
 * flops per multiply-add.
 */
export function attentionWork(model: PlannerModel, layer: number, tokens: number, keys: number, elementBytes: number): LayerWork {
    const a = layerAttention(model, layer);
    if (a == null) return {bytes: 0, flops: 0};
    const visible = visibleKeys(a, keys);
    return tokens === 1 ? {bytes: visible * a.kvHeads * (a.headK + a.headV) * elementBytes, flops: 0}
        : {bytes: 0, flops: 2 * a.heads * (a.headK + a.headV) * tokens * visible};
}

/** Work of a layer's recurrent op: decode reads and writes its state, a prompt updates it once per token. */
export function recurrentWork(model: PlannerModel, layer: number, tokens: number): LayerWork {
    const state = memoryLayoutOf(model).layers[layer]?.recurrentElements ?? 0;
    if (state === 0) return {bytes: 0, flops: 0};
    return tokens === 1 ? {bytes: 2 * state * STATE_ELEMENT_BYTES, flops: 0} : {bytes: 0, flops: RECURRENT_FLOPS_PER_ELEMENT * state * tokens};
}

/** Whether a layer has an attention or recurrent node in the graph (MTP layers llama.cpp skips and FFN-only layers do not). */
export function hasSequenceMixer(model: PlannerModel, layer: number): boolean {
    const l = memoryLayoutOf(model).layers[layer];
    return l != null && (l.attention != null || l.recurrentElements > 0);
}
