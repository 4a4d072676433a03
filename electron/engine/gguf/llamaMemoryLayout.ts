/**
 * What llama.cpp keeps per layer between llama_decode calls — a KV cache of the context (or of the sliding window), a
 * fixed recurrent state, both (Falcon-H1) or nothing — and how each layer's attention multiplies it, decided from the
 * GGUF metadata the way llama.cpp's loader (llama_model_base::load_hparams and each architecture's load_arch_hparams,
 * src/models/*.cpp) and llama_model::create_memory (src/llama-model.cpp) decide it. Not modelled exactly: DeepSeek-V4's
 * compressed cache (llama_kv_cache_dsv4), dots3-note's MLA sliding window (llama_kv_cache_dsa_iswa) and Qwen4-exp's
 * per-layer-embedding conv state; they get the per-layer caches of their attention shapes.
 */
import type {GgufMetadataValue} from "./types/ValidatedGguf.js";
import {metadataNumber, metadataNumberOrNumbers} from "./metadataValue.js";

/** How one layer's attention runs over its cached keys (for pricing it). */
export type LayerAttention = {
    /** Query heads (`n_head(il)`). */
    readonly heads: number;
    /** Cached key heads (`n_head_kv(il)`; 1 under MLA, whose latent is shared by every head). */
    readonly kvHeads: number;
    /** Per-head sizes of the KQ and KQV products: `n_embd_head_k(il)`, `n_embd_head_v(il)` (MLA: the latent's). */
    readonly headK: number;
    readonly headV: number;
    /** Elements of one cached token: K and V rows, or MLA's one latent row (V is a view of it); what a copy of the cache moves. */
    readonly cellElements: number;
    /** Sliding window (`n_swa`) for a SWA layer, whose attention sees only that many keys; `null`: every key. */
    readonly window: number | null;
};

/** One layer's memory and attention. */
export type LayerMemory = {
    /** `null`: no attention over a cache in this layer (a recurrent or FFN-only layer, or an MTP layer llama.cpp skips). */
    readonly attention: LayerAttention | null;
    /**
     * Elements per cell of the layer's own K and V cache rows (`n_embd_k_gqa(il)`, `n_embd_v_gqa(il)`; V is 0 under MLA,
     * whose K row is the latent; K adds a DSA indexer's key); both 0 where the layer owns no KV cache.
     */
    readonly kElements: number;
    readonly vElements: number;
    /** The layer's cache holds the sliding window (llama_kv_cache_iswa's SWA cache) instead of the whole context. */
    readonly windowed: boolean;
    /** F32 elements of the layer's recurrent state per sequence (`n_embd_r() + n_embd_s()`, llama_memory_recurrent); 0: none. */
    readonly recurrentElements: number;
};

/** Per-layer memory of a model as llama.cpp creates it. JSON-serialisable. */
export type MemoryLayout = {
    /** One entry per `<arch>.block_count` layer (MTP layers included, without memory or attention). */
    readonly layers: readonly LayerMemory[];
    /** Layers llama.cpp loads and runs: `block_count − nextn_predict_layers` (llama_hparams::n_layer). */
    readonly trunkLayers: number;
    /**
     * `n_embd_v_gqa_max()`: without flash attention V is stored transposed and every layer's V rows are padded to this
     * (llama_kv_cache ctor, [TAG_V_CACHE_VARIABLE]).
     */
    readonly vElementsMax: number;
    /** The sliding window `n_swa` where some layer's cache is windowed, else `null`. */
    readonly window: number | null;
    /**
     * node-llama-cpp adds one token to the micro-batch of a model whose `<arch>.attention.sliding_window` is set and
     * below its training context (LlamaContext: "+1 to handle edge cases with SWA KV cache", GgufInsights.swaSize);
     * the SWA cache holds the window plus a micro-batch.
     */
    readonly swaBatchPad: boolean;
};

type Metadata = ReadonlyMap<string, GgufMetadataValue>;

/** source: llm_arch_is_recurrent (src/llama-arch.cpp): every layer is recurrent, no KV cache. */
const RECURRENT_ARCHS = new Set(["mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"]);
/** source: llm_arch_is_hybrid (src/llama-arch.cpp). */
const HYBRID_ARCHS = new Set(["jamba", "falcon-h1", "plamo2", "granitehybrid", "lfm2", "lfm2moe", "nemotron_h", "nemotron_h_moe",
    "qwen3next", "kimi-linear", "bailingmoe3", "kimi-k3", "qwen35", "qwen35moe", "qwen4exp", "deepseek4", "minimax-01"]);
/** Hybrids whose recurrent layers are those with `head_count_kv` 0 (their load_arch_hparams). */
const RECURRENT_WHERE_NO_KV_HEADS = new Set(["jamba", "plamo2", "granitehybrid", "lfm2", "lfm2moe", "kimi-linear", "bailingmoe3", "kimi-k3"]);
/** Hybrids that read `attention.recurrent_layers`, else mark every layer but each `full_attention_interval`-th. */
const RECURRENT_BY_INTERVAL: Readonly<Record<string, number>> = {qwen3next: 4, qwen35: 4, qwen35moe: 4, qwen4exp: 4, "minimax-01": 8};
/** No memory at all: encoders and diffusion models (llama_model::create_memory returns nullptr). */
const NO_MEMORY_ARCHS = new Set(["bert", "jina-bert-v2", "jina-bert-v3", "nomic-bert", "nomic-bert-moe", "neo-bert", "eurobert",
    "wavtokenizer-dec", "modern-bert", "gemma-embedding", "dream", "llada", "llada-moe", "rnd1"]);
/** Architectures that read `key_length_mla` / `value_length_mla`: with both set, MLA caches one latent row per token and no V. */
const MLA_ARCHS = new Set(["deepseek2", "mistral4", "deepseek32", "glm-dsa", "kimi-linear", "kimi-k3", "bailingmoe3", "hy_v4", "dots3note"]);
/**
 * A lightning indexer's key cache beside the attention's: one key row of `attention.indexer.key_length` per token in
 * the layers that own an indexer — DeepSeek sparse attention (llama_kv_cache_dsa: every trunk layer of deepseek32;
 * glm-dsa's and hy_v4's `attention.indexer.types`), Qwen4-exp's attention layers (llama_memory_hybrid_idx) — and for
 * MiniMax-M3 (llama_kv_cache_msa, not MLA) also a V row of value_length, in every layer after the leading dense ones.
 */
const INDEXER_ARCHS = new Set(["deepseek32", "glm-dsa", "hy_v4", "qwen4exp", "minimax-m3"]);

/**
 * Sliding-window attention of each architecture that has it (their load_arch_hparams): the default layer pattern
 * (`set_swa_pattern(n, dense_first)`: every n-th layer dense; an `attention.sliding_window_pattern` array or number in
 * the file replaces it), whether SWA depends on `attention.sliding_window` being > 0, and a window llama.cpp sets itself.
 */
type SwaRule = {
    readonly pattern: number | "array";
    readonly denseFirst?: boolean;
    /** SWA only when the file's sliding_window is > 0 (else the model has none); `"unless-zero"`: unless the key is 0. */
    readonly when?: "window" | "unless-zero" | ((layers: number) => boolean);
    /** n_swa before the file's key is read (the key, where present, replaces it). */
    readonly defaultWindow?: number;
    /** n_swa llama.cpp sets after reading the key. */
    readonly forcedWindow?: number;
};
const SWA_RULES: Readonly<Record<string, SwaRule>> = {
    gemma2: {pattern: 2, defaultWindow: 4096},
    gemma3: {pattern: 6, when: "window"},
    gemma3n: {pattern: 5},
    gemma4: {pattern: "array"},
    cohere2: {pattern: 4},
    cohere2moe: {pattern: 4, denseFirst: true},
    "exaone-moe": {pattern: 4, defaultWindow: 128},
    exaone4: {pattern: 4, when: (layers) => layers === 64, defaultWindow: 4096},
    afmoe: {pattern: 4, when: "window"},
    mellum: {pattern: 4, when: "window"},
    "muse-glimmer": {pattern: 4},
    olmo2: {pattern: 4, when: "window"},
    "gpt-oss": {pattern: 2},
    plamo3: {pattern: 8, when: "window"},
    smallthinker: {pattern: 4, denseFirst: true, when: "window", forcedWindow: 4096},
    laguna: {pattern: 4, denseFirst: true, when: "window"},
    llama4: {pattern: 4, when: "unless-zero", forcedWindow: 8192},
    granite_swa: {pattern: "array"},
    maple: {pattern: "array"},
    mimo2: {pattern: "array"},
    "spark2_5": {pattern: "array"},
    step35: {pattern: "array"},
    dots3note: {pattern: "array"}
};

/** llama.cpp's get_key_or_arr: a per-layer array, or one value for every layer; `fallback` where the key is missing. */
function perLayer(metadata: Metadata, key: string, n: number, fallback: readonly number[]): number[] {
    const value = metadataFlagsOrNumbers(metadata, key);
    if (value === undefined) return [...fallback];
    if (Array.isArray(value)) return Array.from({length: n}, (_, i) => value[i] ?? 0);
    return Array.from({length: n}, () => value);
}

/** A number, or an array of numbers or booleans (as 0/1). */
function metadataFlagsOrNumbers(metadata: Metadata, key: string): number | number[] | undefined {
    const entry = metadata.get(key);
    if (entry?.type === "array" && entry.elementType === "bool") return (entry.value as boolean[]).map((b) => (b ? 1 : 0));
    if (entry?.type === "bool") return entry.value ? 1 : 0;
    return metadataNumberOrNumbers(metadata, key);
}

/** The per-layer memory llama.cpp creates for this model, or `null` without an architecture or block count. */
export function llamaMemoryLayout(metadata: Metadata, architecture: string | null): MemoryLayout | null {
    if (architecture == null) return null;
    const arch = architecture;
    const num = (key: string): number | undefined => metadataNumber(metadata, `${arch}.${key}`);
    const nAll = num("block_count");
    if (nAll == null || !Number.isInteger(nAll) || nAll < 1) return null;
    // graniteswitch reuses n_layer_nextn for a router layer it adds itself (src/models/granite-switch.cpp): no MTP
    const nextn = arch === "graniteswitch" ? 0 : Math.min(nAll, num("nextn_predict_layers") ?? 0);
    const nLayer = nAll - nextn;
    const embd = num("embedding_length") ?? 0;
    const zeros = Array.from({length: nAll}, () => 0);
    const heads = perLayer(metadata, `${arch}.attention.head_count`, nAll, zeros);
    const kvHeads = perLayer(metadata, `${arch}.attention.head_count_kv`, nAll, heads);
    const ff = perLayer(metadata, `${arch}.feed_forward_length`, nAll, zeros);

    // head sizes (source: llama_model_base::load_hparams; n_head() is layer 0's)
    const head0 = heads[0] ?? 0;
    const headKFull = head0 > 0 ? num("attention.key_length") ?? Math.floor(embd / head0) : 0;
    const headVFull = head0 > 0 ? num("attention.value_length") ?? Math.floor(embd / head0) : 0;
    const headKSwa = num("attention.key_length_swa") ?? headKFull;
    const headVSwa = num("attention.value_length_swa") ?? headVFull;
    const mla = MLA_ARCHS.has(arch) && (num("attention.key_length_mla") ?? 0) > 0 && (num("attention.value_length_mla") ?? 0) > 0;

    const {isSwa, window} = slidingWindow(metadata, arch, nAll, nLayer);
    const headK = (il: number): number => (isSwa[il] ? headKSwa : headKFull);
    const headV = (il: number): number => (isSwa[il] ? headVSwa : headVFull);

    const isRecr = recurrentLayers(metadata, arch, nAll, nLayer, kvHeads, ff);
    const recurrentElements = recurrentStateElements(metadata, arch, embd, head0, headKFull);
    const {attnFilter, recrFilter} = memoryFilters(arch, nLayer, nextn, isRecr, ff);
    const kvFromStart = arch === "gemma3n" ? 20 : arch === "gemma4" ? nAll - (num("attention.shared_kv_layers") ?? 0) : nAll;
    const noMemory = NO_MEMORY_ARCHS.has(arch);
    // hy_v4 has an indexer only with a top-k (its all-full-attention checkpoints have none), and lists its layers
    const indexerK = INDEXER_ARCHS.has(arch) && (arch !== "hy_v4" || (num("attention.indexer.top_k") ?? 0) > 0) ? num("attention.indexer.key_length") ?? 0 : 0;
    const indexerTypes = perLayer(metadata, `${arch}.attention.indexer.types`, nAll, Array.from({length: nAll}, () => (arch === "hy_v4" ? 0 : 1)));
    const denseLead = num("leading_dense_block_count") ?? 0;
    const ownsIndexer = (il: number): boolean => indexerK > 0 && (arch === "minimax-m3" ? il >= denseLead
        : arch === "glm-dsa" || arch === "hy_v4" ? indexerTypes[il] === 1 : true);

    const layers = Array.from({length: nAll}, (_, il): LayerMemory => {
        const attends = il < nLayer && kvHeads[il]! > 0 && heads[il]! > 0 && !RECURRENT_ARCHS.has(arch) && (arch === "falcon-h1" || !isRecr[il]);
        const ownsKv = !noMemory && attends && il < kvFromStart && attnFilter(il);
        const kRow = headK(il) * kvHeads[il]!;
        const vRow = mla ? 0 : headV(il) * kvHeads[il]!;
        const indexer = ownsKv && ownsIndexer(il) ? indexerK : 0;
        const indexerV = indexer > 0 && arch === "minimax-m3" ? headV(il) : 0;
        return {
            attention: attends ? {heads: heads[il]!, kvHeads: kvHeads[il]!, headK: headK(il), headV: headV(il), cellElements: kRow + vRow,
                window: isSwa[il] ? window : null} : null,
            kElements: ownsKv ? kRow + indexer : 0,
            vElements: ownsKv ? vRow + indexerV : 0,
            windowed: ownsKv && isSwa[il] === true,
            recurrentElements: !noMemory && il < nLayer && recrFilter(il) ? recurrentElements : 0
        };
    });
    // n_embd_v_gqa_max over every layer (source: llama_hparams::n_embd_v_gqa_max)
    const vElementsMax = mla ? 0 : Math.max(0, ...Array.from({length: nAll}, (_, il) => headV(il) * kvHeads[il]!));
    const trained = num("context_length");
    const fileWindow = num("attention.sliding_window") ?? 0;
    return {
        layers, trunkLayers: nLayer, vElementsMax,
        window: layers.some((l) => l.windowed) ? window : null,
        swaBatchPad: fileWindow > 0 && (trained == null || fileWindow < trained)
    };
}

/** Which layers use sliding-window attention and the window (source: SWA_RULES' load_arch_hparams, load_swa_pattern). */
function slidingWindow(metadata: Metadata, arch: string, nAll: number, nLayer: number): {isSwa: boolean[]; window: number | null} {
    const none = {isSwa: Array.from({length: nAll}, () => false), window: null};
    const rule = SWA_RULES[arch];
    const key = metadataNumber(metadata, `${arch}.attention.sliding_window`);
    if (arch === "lfm2" && (key ?? 0) > 0) {
        // LFM2: every attention layer is SWA when a window is set (src/models/lfm2.cpp)
        const kvHeads = perLayer(metadata, `${arch}.attention.head_count_kv`, nAll, []);
        return {isSwa: Array.from({length: nAll}, (_, il) => il < nLayer && (kvHeads[il] ?? 0) > 0), window: key!};
    }
    if (rule == null) return none;
    if (rule.when === "window" && !((key ?? 0) > 0)) return none;
    if (rule.when === "unless-zero" && key === 0) return none;
    if (typeof rule.when === "function" && !rule.when(nLayer)) return none;
    const window = rule.forcedWindow ?? key ?? rule.defaultWindow ?? 0;
    const pattern = metadataFlagsOrNumbers(metadata, `${arch}.attention.sliding_window_pattern`);
    let isSwa: boolean[];
    if (Array.isArray(pattern)) isSwa = Array.from({length: nAll}, (_, il) => (pattern[il] ?? 0) !== 0);
    else if (rule.pattern === "array") isSwa = none.isSwa;
    else {
        // source: llama_hparams::set_swa_pattern
        const n = pattern ?? rule.pattern;
        isSwa = Array.from({length: nAll}, (_, il) => il < nLayer && (n === 0 || (rule.denseFirst === true ? il % n !== 0 : il % n < n - 1)));
    }
    return window > 0 && isSwa.some(Boolean) ? {isSwa, window} : none;
}

/** llama_hparams::is_recr per layer, as each architecture's load_arch_hparams sets it. */
function recurrentLayers(metadata: Metadata, arch: string, nAll: number, nLayer: number, kvHeads: readonly number[], ff: readonly number[]): boolean[] {
    if (RECURRENT_ARCHS.has(arch) || arch === "falcon-h1") return Array.from({length: nAll}, () => true);
    if (RECURRENT_WHERE_NO_KV_HEADS.has(arch)) return Array.from({length: nAll}, (_, il) => il < nLayer && kvHeads[il] === 0);
    if (arch === "nemotron_h" || arch === "nemotron_h_moe")
        return Array.from({length: nAll}, (_, il) => il < nLayer && kvHeads[il] === 0 && ff[il] === 0);
    const interval = RECURRENT_BY_INTERVAL[arch];
    if (interval != null) {
        const listed = metadataFlagsOrNumbers(metadata, `${arch}.attention.recurrent_layers`);
        if (listed !== undefined) return perLayer(metadata, `${arch}.attention.recurrent_layers`, nAll, []).map((v) => v !== 0);
        const every = metadataNumber(metadata, `${arch}.full_attention_interval`) ?? interval;
        return Array.from({length: nAll}, (_, il) => il < nLayer && (il + 1) % every !== 0);
    }
    return Array.from({length: nAll}, () => false);
}

/**
 * The layer filters of llama_model::create_memory: which layers get a KV cache (looped over every layer) and which a
 * recurrent state (over the trunk layers).
 */
function memoryFilters(arch: string, nLayer: number, nextn: number, isRecr: readonly boolean[], ff: readonly number[]):
    {attnFilter: (il: number) => boolean; recrFilter: (il: number) => boolean} {
    if (RECURRENT_ARCHS.has(arch)) return {attnFilter: () => false, recrFilter: () => true};
    if (arch === "falcon-h1") return {attnFilter: () => true, recrFilter: () => true};
    if (arch === "nemotron_h" || arch === "nemotron_h_moe")
        return {attnFilter: (il) => !isRecr[il] && ff[il] === 0, recrFilter: (il) => isRecr[il] === true && ff[il] === 0};
    if (arch in RECURRENT_BY_INTERVAL)
        return {attnFilter: (il) => il < nLayer && !isRecr[il], recrFilter: (il) => il < nLayer && isRecr[il] === true};
    if (HYBRID_ARCHS.has(arch)) return {attnFilter: (il) => !isRecr[il], recrFilter: (il) => isRecr[il] === true};
    // the trunk's cache leaves out the MTP layers (n_layer_nextn > 0)
    return {attnFilter: (il) => nextn === 0 || il < nLayer, recrFilter: () => false};
}

/**
 * `n_embd_r() + n_embd_s()` (src/llama-hparams.cpp): RWKV's token shifts and WKV state; LFM2's short-conv history;
 * Kimi's KDA conv and delta state; MiniMax-01's lightning-attention state; else Mamba's conv and SSM state (also
 * Qwen3-Next's gated delta net, which stores its state in the same shape).
 */
function recurrentStateElements(metadata: Metadata, arch: string, embd: number, head0: number, headKFull: number): number {
    const num = (key: string): number => metadataNumber(metadata, `${arch}.${key}`) ?? 0;
    const wkv = num("wkv.head_size");
    const lCache = num("shortconv.l_cache");
    const kda = num("kda.head_dim");
    const dConv = num("ssm.conv_kernel");
    const dInner = num("ssm.inner_size");
    const dState = num("ssm.state_size");
    const groups = num("ssm.group_count");
    const la = arch === "minimax-01" ? headKFull : 0;
    const tokenShift = metadataNumber(metadata, `${arch}.token_shift_count`) ?? 2;
    const mambaConv = (dConv > 0 ? dConv - 1 : 0) * (dInner + 2 * groups * dState);
    const r = wkv !== 0 ? tokenShift * embd : lCache !== 0 ? embd * (lCache - 1) : kda !== 0 ? 3 * (dConv > 0 ? dConv - 1 : 3) * head0 * kda : mambaConv;
    const s = wkv !== 0 ? embd * wkv : kda !== 0 ? kda * kda * head0 : la !== 0 ? la * la * head0 : dState * dInner;
    return r + s;
}
