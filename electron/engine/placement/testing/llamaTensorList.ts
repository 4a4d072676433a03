/**
 * Synthetic tensor tables with llama-architecture names and realistic sizes, for placement tests.
 */
import type { PlacementTensor } from "../Placement.js";
import { createRandom } from "../../writer/syntheticTensorData.js";

/** Shape of a synthetic llama model. Defaults: Llama-3-8B (4096 / 14336, 32 heads / 8 KV heads, vocab 128256). */
export interface LlamaShape {
    readonly layers: number;
    readonly embedding?: number;
    readonly feedForward?: number;
    readonly heads?: number;
    readonly kvHeads?: number;
    readonly vocab?: number;
    /** Bytes per weight element of matrices (norms are f32). Defaults to 2 (f16). */
    readonly bytesPerElement?: number;
}

/** The per-layer roles of a llama block, in GGUF order. */
export const LLAMA_LAYER_ROLES = [
    "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"
] as const;

/** Tensor table of a llama model: `token_embd.weight`, `blk.N.*.weight` for every layer, `output_norm`, `output`. */
export function llamaTensorList(shape: LlamaShape): PlacementTensor[] {
    const n = shape.embedding ?? 4096;
    const ff = shape.feedForward ?? 14336;
    const heads = shape.heads ?? 32;
    const kv = ((shape.kvHeads ?? 8) * n) / heads;
    const vocab = shape.vocab ?? 128256;
    const b = shape.bytesPerElement ?? 2;
    const sizes: Record<(typeof LLAMA_LAYER_ROLES)[number], number> = {
        attn_norm: n * 4, attn_q: n * n * b, attn_k: n * kv * b, attn_v: n * kv * b, attn_output: n * n * b,
        ffn_norm: n * 4, ffn_gate: n * ff * b, ffn_up: n * ff * b, ffn_down: n * ff * b
    };
    const tensors: PlacementTensor[] = [{ name: "token_embd.weight", layer: null, role: "token_embd", bytes: vocab * n * b }];
    for (let layer = 0; layer < shape.layers; layer++) {
        for (const role of LLAMA_LAYER_ROLES) tensors.push({ name: `blk.${layer}.${role}.weight`, layer, role, bytes: sizes[role] });
    }
    tensors.push({ name: "output_norm.weight", layer: null, role: "output_norm", bytes: n * 4 });
    tensors.push({ name: "output.weight", layer: null, role: "output", bytes: vocab * n * b });
    return tensors;
}

/** Deterministic PRNG (mulberry32) for seeded random plans: the synthetic-weight generator's. */
export const seededRandom: (seed: number) => () => number = createRandom;
