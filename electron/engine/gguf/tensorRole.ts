/**
 * What a tensor is for, from its llama.cpp name (`blk.3.ffn_up_exps.weight` → layer 3, role `ffn_up_exps`).
 *
 * source: LLM_TENSOR_NAMES and LLM_TENSOR_INFOS in src/llama-arch.cpp of the llama.cpp bundled with node-llama-cpp.
 */
export type TensorRole =
    | "token_embd"
    | "attn_norm"
    | "attn_q"
    | "attn_k"
    | "attn_v"
    | "attn_qkv"
    | "attn_output"
    | "ffn_norm"
    | "ffn_gate"
    | "ffn_up"
    | "ffn_down"
    | "ffn_gate_inp"
    | "ffn_gate_exps"
    | "ffn_up_exps"
    | "ffn_down_exps"
    | "output_norm"
    | "output"
    | "rope_freqs"
    | "other";

/**
 * Base names (the part between `blk.N.` and `.weight`) → role. Variants that llama.cpp multiplies the same way are
 * folded in: shared experts (`*_shexp`, a dense FFN) as the dense roles, chunked experts (`*_chexps`) as the expert
 * roles, and fused gate+up experts (`ffn_gate_up_exps`) as `ffn_up_exps`.
 */
const rolesByBaseName: ReadonlyMap<string, TensorRole> = new Map<string, TensorRole>([
    ["token_embd", "token_embd"],
    ["attn_norm", "attn_norm"],
    ["attn_q", "attn_q"],
    ["attn_k", "attn_k"],
    ["attn_v", "attn_v"],
    ["attn_qkv", "attn_qkv"],
    ["attn_output", "attn_output"],
    ["ffn_norm", "ffn_norm"],
    ["ffn_gate", "ffn_gate"],
    ["ffn_up", "ffn_up"],
    ["ffn_down", "ffn_down"],
    ["ffn_gate_shexp", "ffn_gate"],
    ["ffn_up_shexp", "ffn_up"],
    ["ffn_down_shexp", "ffn_down"],
    ["ffn_gate_inp", "ffn_gate_inp"],
    ["ffn_gate_inp_shexp", "ffn_gate_inp"],
    ["ffn_gate_exps", "ffn_gate_exps"],
    ["ffn_up_exps", "ffn_up_exps"],
    ["ffn_down_exps", "ffn_down_exps"],
    ["ffn_gate_chexps", "ffn_gate_exps"],
    ["ffn_up_chexps", "ffn_up_exps"],
    ["ffn_down_chexps", "ffn_down_exps"],
    ["ffn_gate_up_exps", "ffn_up_exps"],
    ["output_norm", "output_norm"],
    ["output", "output"],
    ["rope_freqs", "rope_freqs"]
]);

const matmulRoles: ReadonlySet<TensorRole> = new Set<TensorRole>([
    "attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output",
    "ffn_gate", "ffn_up", "ffn_down", "ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps",
    "output"
]);

const blockPattern = /^blk\.(\d+)\.(.+)$/;
/** Old-style per-expert tensors: `blk.N.ffn_up.E.weight`. */
const perExpertPattern = /^(ffn_gate|ffn_up|ffn_down)\.\d+$/;

/** A tensor name split into its layer (`blk.N.`, else `null`) and role. */
export type TensorNameInfo = {
    readonly layer: number | null;
    readonly role: TensorRole;
};

/**
 * Layer and role of a llama.cpp tensor name. Only weights get a role: biases and other suffixed parameters
 * (`.bias`, `.scale`) are `other`, as are tensors this table does not know.
 */
export function parseTensorName(name: string): TensorNameInfo {
    const block = blockPattern.exec(name);
    const layerText = block?.[1];
    const layerNumber = layerText === undefined ? null : Number(layerText);
    const layer = layerNumber !== null && Number.isSafeInteger(layerNumber) ? layerNumber : null;
    const rest = block?.[2] ?? name;

    const base = rest.endsWith(".weight") ? rest.slice(0, -".weight".length) : rest;
    const perExpert = perExpertPattern.exec(base);
    const role = perExpert?.[1] !== undefined
        ? rolesByBaseName.get(`${perExpert[1]}_exps`)
        : rolesByBaseName.get(base);
    return {layer, role: role ?? "other"};
}

/** Role of a llama.cpp tensor name; see `parseTensorName`. */
export function tensorRole(name: string): TensorRole {
    return parseTensorName(name).role;
}

/**
 * Whether tensors of this role are matrix-multiplication weights (`GGML_OP_MUL_MAT` / `MUL_MAT_ID` in llama.cpp):
 * attention projections, all FFN matrices including the MoE router and experts, and `output`. False for norms,
 * `token_embd` (a `GET_ROWS` lookup), `rope_freqs` and `other`.
 */
export function isMatmulWeight(role: TensorRole): boolean {
    return matmulRoles.has(role);
}

const expertRoles: ReadonlySet<string> = new Set<TensorRole>(["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]);

/**
 * Whether tensors of this role are routed expert weights: 3-D tensors that GGML_OP_MUL_MAT_ID reads `expert_used_count`
 * of `expert_count` experts of per token (source: llm_graph_context::build_moe_ffn). Chunked and fused gate+up experts
 * are folded into these roles; shared experts (`*_shexp`) are dense.
 */
export function isExpertRole(role: string): boolean {
    return expertRoles.has(role);
}
