/**
 * Hand-sized planner models and profiles: every weight op has its own ggml type and shape, so each op costs exactly the
 * microseconds the test writes down. Expected plans and predictions can then be computed by hand.
 */
import type {ResolvedSettings} from "../../../contract/settings.js";
import type {MachineProfile, MatmulPoint} from "../../profiler/MachineProfile.js";
import {scratchKey} from "../costModel.js";
import type {PlannerModel, PlannerTensor} from "../types.js";
import type {FitFunction, StrategyInputs} from "../strategies/StrategyResult.js";

/** Distinct ggml type names, one per op (the planner only uses them as keys). */
const TYPES = ["f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_K", "q5_K", "q6_K", "q2_K", "q3_K", "bf16"];

/**
 * One weight op: its layer and role, its bytes, and its single-token time on the CPU and on the GPU, µs. An expert
 * weight (`*_exps`) carries `experts`; its times are then those of ONE expert's matrix and `bytes` those of all.
 */
export type HandOp = {
    readonly layer: number;
    readonly role: "attn_q" | "attn_k" | "attn_v" | "attn_output" | "ffn_gate_inp" | "ffn_gate" | "ffn_up" | "ffn_down"
        | "ffn_gate_exps" | "ffn_up_exps" | "ffn_down_exps";
    readonly bytes: number;
    readonly cpuUs: number;
    readonly gpuUs: number;
    readonly experts?: {readonly count: number; readonly used: number};
};

/** Shape facts of a hand model (KV cache bytes follow from them: 2 × ctx × embd/heads × kvHeads × 2 per layer). */
export type HandShape = {readonly layers: number; readonly embd: number; readonly heads: number; readonly kvHeads: number};

/** Bytes of `output_norm.weight` (F32, embd elements): the only small tensor a hand model has besides token_embd. */
export function outputNormBytes(shape: HandShape): number {
    return shape.embd * 4;
}

/** Bytes of a layer norm's weight (F32, embd elements), as {@link outputNormBytes}. */
export function layerNormBytes(shape: HandShape): number {
    return shape.embd * 4;
}

/**
 * A llama-shaped planner model with exactly these weight ops, `token_embd` (CPU-only) and `output_norm`; with `norms`,
 * also each layer's `attn_norm` and `ffn_norm` (which llama.cpp runs on the layer's device while a token is generated).
 */
export function handModel(shape: HandShape, ops: readonly HandOp[], options: {readonly norms?: boolean} = {}): PlannerModel {
    if (ops.length > TYPES.length) throw new RangeError(`a hand model holds at most ${TYPES.length} ops`);
    const tensors: PlannerTensor[] = [{name: "token_embd.weight", layer: null, role: "token_embd", type: "f32", bytes: 4096, op: null}];
    ops.forEach((op, i) => {
        const type = TYPES[i]!;
        // a unique shape per op too (rows = 1000 + i), so no two ops share a profile point
        tensors.push({name: `blk.${op.layer}.${op.role}.weight`, layer: op.layer, role: op.role, type, bytes: op.bytes, op: {type, rows: 1000 + i, cols: 64},
            ...(op.experts != null ? {experts: op.experts} : {})});
    });
    if (options.norms === true)
        for (let layer = 0; layer < shape.layers; layer++)
            for (const role of ["attn_norm", "ffn_norm"])
                tensors.push({name: `blk.${layer}.${role}.weight`, layer, role, type: "f32", bytes: layerNormBytes(shape), op: null});
    tensors.push({name: "output_norm.weight", layer: null, role: "output_norm", type: "f32", bytes: outputNormBytes(shape), op: null});
    return {
        tensors, layerCount: shape.layers, embd: shape.embd, ff: 4 * shape.embd, headCount: shape.heads, headCountKv: shape.kvHeads,
        vocab: 1000, weightBytes: tensors.reduce((s, t) => s + t.bytes, 0)
    };
}

/** Transfer facts of a hand profile. */
export type HandTransfer = {readonly switchUs: number; readonly h2dBytesPerSec: number};

/**
 * A profile where each op takes `cpuUs` / `gpuUs` at one token and scales linearly with the batch (points at 1 and
 * 32 tokens), the CPU and GPU read `readBytesPerSec` for attention, and both also reach `flopsPerUs` in the prefill
 * attention's matmuls (one extra point of 2·rows·cols·32 flops).
 */
export function handProfile(model: PlannerModel, ops: readonly HandOp[], transfer: HandTransfer,
    rates: {readonly readBytesPerSec: number; readonly flopsPerUs: number} = {readBytesPerSec: 1e9, flopsPerUs: 32_000}): MachineProfile {
    const matmuls: MatmulPoint[] = [];
    const weights = model.tensors.filter((t) => t.op != null);
    ops.forEach((op, i) => {
        const shape = weights[i]!.op!;
        for (const [device, us] of [["CPU", op.cpuUs], ["CUDA0", op.gpuUs]] as const) {
            for (const batch of [1, 32])
                matmuls.push({...shape, device, batch, supported: true, medianUs: us * batch, minUs: us * batch, samples: 5});
        }
    });
    // a reference op of no model tensor: 2·1000·1000·32 flops and 2·1000·1000 (F16-sized) bytes in the same time, so it
    // sets the flop rate (prefill attention) and the read rate (decode attention) without bounding any model op
    const refUs = 2 * 1000 * 1000 * 32 / rates.flopsPerUs;
    for (const device of ["CPU", "CUDA0"]) {
        for (const batch of [1, 32])
            matmuls.push({type: "f16", rows: 1000, cols: 1000, device, batch, supported: true, medianUs: refUs, minUs: refUs, samples: 5});
    }
    return {
        version: 1, key: "hand", createdAt: "2026-01-01T00:00:00.000Z", llamaCppRelease: "hand", backend: "cuda", threads: 2,
        devices: [{name: "CPU", type: "cpu"}, {name: "CUDA0", type: "gpu"}], operators: weights.map((t) => t.op!), matmuls,
        transfers: [{device: "CUDA0", pinnedH2dBytesPerSec: transfer.h2dBytesPerSec, pageableH2dBytesPerSec: transfer.h2dBytesPerSec,
            d2hBytesPerSec: transfer.h2dBytesPerSec, switchUs: transfer.switchUs, copySmallUs: 0, launchUs: 0}],
        cpuReadBytesPerSec: rates.readBytesPerSec, elapsedMs: 0, truncated: false
    };
}

/** A stand-in for llama.cpp's common_fit_params: the largest `-ngl` whose layer split fits, no overrides. */
export function layerFit(fits: (gpuLayers: number) => boolean, layers: number): FitFunction {
    return async () => {
        for (let n = layers + 1; n >= 1; n--) if (fits(n)) return {gpuLayers: n, overrides: [], status: "success"};
        return {gpuLayers: 0, overrides: [], status: "success"};
    };
}

/** Strategy inputs for a hand model on a hand profile, with a measured scratch (so no weight-copy term). */
export function handInputs(model: PlannerModel, profile: MachineProfile, options: {
    budgetBytes: number; scratchBytes: number; contextSize: number; batchSize: number; workload: {promptTokens: number; genTokens: number};
    /** Knobs other than llama.cpp's defaults (handSettings). */
    settings?: Partial<ResolvedSettings>;
}): Omit<StrategyInputs, "fit"> {
    const settings = handSettings({useMmap: false, batchSize: options.batchSize, contextSize: options.contextSize, threads: 2, ...options.settings});
    return {
        cost: {model, profile, gpuDevice: "CUDA0", scratchByKey: new Map([[scratchKey(settings), options.scratchBytes]]), scratchContextSize: options.contextSize},
        gpuBufferType: "CUDA0",
        budgetBytes: options.budgetBytes,
        settings,
        workload: options.workload
    };
}

/** Resolved settings for hand-sized tests: the given fields over llama.cpp's defaults for the other knobs. */
export function handSettings(settings: Pick<ResolvedSettings, "useMmap" | "batchSize" | "contextSize" | "threads"> & Partial<ResolvedSettings>): ResolvedSettings {
    return {useGpu: true, opOffload: true, kvOffload: true, flashAttention: false, kvCacheType: "f16", ...settings};
}
