/**
 * What a tensor is for, from its llama.cpp name (`blk.3.ffn_up_exps.weight` → layer 3, role `ffn_up_exps`), and the
 * ggml op llama.cpp feeds it to.
 *
 * source: LLM_TENSOR_NAMES and LLM_TENSOR_INFOS in src/llama-arch.cpp of the llama.cpp bundled with node-llama-cpp,
 * generated into llamaTensorTable.ts (scripts/generateLlamaTensorTable.mjs).
 */
import {LLAMA_TENSORS, type LlamaTensorLayer} from "./llamaTensorTable.js";

/** A role as llama.cpp's table names it: the name pattern without the layer (`attn_q`, `ssm_in`, `dec.attn_q`). */
type LlamaRole = (typeof LLAMA_TENSORS)[number]["role"];

/** A ggml op llama.cpp uses a weight with (GGML_OP_ without the prefix): `MUL_MAT`, `MUL_MAT_ID`, `GET_ROWS`, `MUL`, … */
export type LlamaOp = NonNullable<(typeof LLAMA_TENSORS)[number]["op"]>;

/**
 * Variants that llama.cpp multiplies the same way as another role, folded into it: shared experts (`*_shexp`, a dense
 * FFN beside the routed experts) as the dense roles, chunked experts (`*_chexps`) as the expert roles, fused gate+up
 * experts (`ffn_gate_up_exps`) as `ffn_up_exps`, and old-style per-expert tensors (`blk.N.ffn_up.E`) as the expert roles.
 * Placement rules, the UI and the planner use these names; the tensor's own name and op stay exact.
 */
const FOLDED_ROLES = {
    ffn_gate_shexp: "ffn_gate",
    ffn_up_shexp: "ffn_up",
    ffn_down_shexp: "ffn_down",
    ffn_gate_inp_shexp: "ffn_gate_inp",
    ffn_gate_chexps: "ffn_gate_exps",
    ffn_up_chexps: "ffn_up_exps",
    ffn_down_chexps: "ffn_down_exps",
    ffn_gate_up_exps: "ffn_up_exps",
    "ffn_gate.%d": "ffn_gate_exps",
    "ffn_up.%d": "ffn_up_exps",
    "ffn_down.%d": "ffn_down_exps"
} as const satisfies Partial<Record<LlamaRole, LlamaRole>>;

/**
 * What a tensor is for: every role of llama.cpp's tensor table (llamaTensorTable.ts) except the folded variants
 * (see FOLDED_ROLES), and `other` for biases, other suffixed parameters and names the table does not have.
 */
export type TensorRole = Exclude<LlamaRole, keyof typeof FOLDED_ROLES> | "other";

function foldRole(role: LlamaRole): TensorRole {
    return (FOLDED_ROLES as Partial<Record<string, TensorRole>>)[role] ?? role as TensorRole;
}

/** Every role, in llama.cpp's table order, `other` last. */
export const TENSOR_ROLES: readonly TensorRole[] = [...new Set([...LLAMA_TENSORS.map((t) => foldRole(t.role)), "other" as const])];

/** What llama.cpp's table says of one weight: its (folded) role, layer class and op. */
export type WeightInfo = {
    readonly role: TensorRole;
    /** `null` where the table has no llm_tensor_info for it (llama.cpp refuses to create such a tensor). */
    readonly layerClass: LlamaTensorLayer | null;
    readonly op: LlamaOp | null;
};

const byPattern = new Map<string, WeightInfo>();
for (const t of LLAMA_TENSORS)
    // a name can stand for two llm_tensors (`blk.%d.ssm_a`: SSM_A for SSM_SCAN, SSM_A_NOSCAN for MUL): the first is
    // kept, as llamaTensorTable.test.ts checks that they never disagree on being a matmul weight
    if (!byPattern.has(t.name)) byPattern.set(t.name, {role: foldRole(t.role), layerClass: t.layer, op: t.op});

/** A number between dots: the layer (and the expert of old per-expert names) that `%d` stands for in the table. */
const numberPart = /(^|\.)\d+(?=\.|$)/g;
const layerPattern = /^(?:(?:dec|enc)\.)?blk\.(\d+)\./;

/**
 * The table's entry for a weight name: `blk.3.attn_q.weight`, or a bare name such as `blk.3.ssm_a` (llama.cpp creates
 * a few without a suffix). `null` for biases and other suffixed parameters (`.bias` is an ADD, not a weight) and for
 * names the table does not have (`v.blk.0.attn_q.weight` of a vision projector).
 */
export function weightInfoOf(name: string): WeightInfo | null {
    const pattern = name.replace(numberPart, "$1%d");
    const bare = byPattern.get(pattern);
    if (bare != null) return bare;
    return pattern.endsWith(".weight") ? byPattern.get(pattern.slice(0, -".weight".length)) ?? null : null;
}

/** A tensor name split into its layer (`blk.N.`, else `null`) and role. */
export type TensorNameInfo = {
    readonly layer: number | null;
    readonly role: TensorRole;
};

/**
 * Layer and role of a llama.cpp tensor name. Only weights get a role: biases and other suffixed parameters
 * (`.bias`, `.scale`) are `other`, as are tensors the table does not know. The layer is the `N` of `blk.N.`
 * (`dec.blk.N.` and `enc.blk.N.` for encoder-decoder models).
 */
export function parseTensorName(name: string): TensorNameInfo {
    const layerText = layerPattern.exec(name)?.[1];
    const layerNumber = layerText === undefined ? null : Number(layerText);
    const layer = layerNumber !== null && Number.isSafeInteger(layerNumber) ? layerNumber : null;
    return {layer, role: weightInfoOf(name)?.role ?? "other"};
}

/** Role of a llama.cpp tensor name; see `parseTensorName`. */
export function tensorRole(name: string): TensorRole {
    return parseTensorName(name).role;
}

/** Whether llama.cpp multiplies a weight used by this op as a matrix: GGML_OP_MUL_MAT, or MUL_MAT_ID for routed experts. */
export function isMatmulOp(op: LlamaOp | null): op is "MUL_MAT" | "MUL_MAT_ID" {
    return op === "MUL_MAT" || op === "MUL_MAT_ID";
}

const matmulRoles: ReadonlySet<string> = new Set([...byPattern.values()].filter((w) => isMatmulOp(w.op)).map((w) => w.role));
const expertRoles: ReadonlySet<string> = new Set([...byPattern.values()].filter((w) => w.op === "MUL_MAT_ID").map((w) => w.role));

/**
 * Whether tensors of this role are matrix-multiplication weights (`GGML_OP_MUL_MAT` / `MUL_MAT_ID` in llama.cpp's
 * table): attention, MLA, SSM and short-conv projections, all FFN matrices including the MoE router and experts, and
 * `output`. False for norms, `token_embd` (a `GET_ROWS` lookup), conv kernels, SSM A/D, `rope_freqs` and `other`.
 */
export function isMatmulWeight(role: TensorRole): boolean {
    return matmulRoles.has(role);
}

/**
 * Whether tensors of this role are routed expert weights: 3-D tensors that GGML_OP_MUL_MAT_ID reads `expert_used_count`
 * of `expert_count` experts of per token (source: llm_graph_context::build_moe_ffn). Chunked and fused gate+up experts
 * are folded into these roles; shared experts (`*_shexp`) are dense.
 */
export function isExpertRole(role: string): boolean {
    return expertRoles.has(role);
}
