/**
 * Shared planner types: the model as the planner sees it, the workload and predictions. A plan's runtime settings are
 * the contract's `ResolvedSettings` (electron/contract/settings.ts).
 */
import type {InspectedModel} from "../gguf/inspectGguf.js";
import type {MemoryLayout} from "../gguf/llamaMemoryLayout.js";
import {loadedTensors} from "../gguf/loadedTensors.js";
import type {OperatorShape} from "../profiler/MachineProfile.js";
import {expertOperatorOf, operatorOf} from "../profiler/operatorShapes.js";

/** One tensor with the operator it feeds (`null`: not a matmul weight — norms, `token_embd`). */
export type PlannerTensor = {
    readonly name: string;
    readonly layer: number | null;
    readonly role: string;
    readonly type: string;
    readonly bytes: number;
    readonly op: OperatorShape | null;
    /**
     * Routed experts of a 3-D `ffn_*_exps` weight (GGML_OP_MUL_MAT_ID): `count` experts (`expert_count`), `used` of them
     * per token (`expert_used_count`); `op` is then ONE expert's matrix and `bytes` all of them. Absent for dense weights.
     */
    readonly experts?: {readonly count: number; readonly used: number};
    /**
     * The file tensor whose data this weight is: `"token_embd.weight"` for the output matmul of a model without
     * `output.weight` (llama.cpp's TENSOR_DUPLICATED copy, see loadedTensors.ts). Its bytes are a second copy only on a
     * GPU; in host memory it shares token_embd's buffer. Overrides reach it by that name.
     */
    readonly tiedTo?: string;
};

/** A weight's name without its suffix: `blk.3.attn_q` for `blk.3.attn_q.weight` and `blk.3.attn_q.bias`. */
export function weightBaseName(name: string): string {
    return name.replace(/\.(?:weight|bias|scale)$/, "");
}

/** What the planner needs of a model. */
export type PlannerModel = {
    readonly tensors: readonly PlannerTensor[];
    readonly layerCount: number;
    readonly embd: number;
    readonly ff: number;
    readonly headCount: number;
    readonly headCountKv: number;
    readonly vocab: number;
    /**
     * Size of one attention head (`<arch>.attention.key_length`), where it is not `embd / headCount` (Qwen3: 128 with
     * embd 2048 and 32 heads). Absent: `embd / headCount`.
     */
    readonly headDim?: number;
    /** Sum of the bytes of every weight llama.cpp loads from the file (MTP layers it skips left out). */
    readonly weightBytes: number;
    /**
     * What each layer keeps between tokens and how its attention runs (llamaMemoryLayout.ts). Absent: plain GQA
     * attention with `headDim × headCountKv` K and V rows in every layer (hand-made test models).
     */
    readonly memory?: MemoryLayout;
};

function firstNumber(value: number | number[] | null, fallback: number): number {
    if (value == null) return fallback;
    return Array.isArray(value) ? Math.max(...value) : value;
}

/**
 * The planner's view of an inspected GGUF model: the weights llama.cpp loads (loadedTensors.ts: MTP layers skipped, a
 * tied output's copy of token_embd added) with their operators, and the per-layer memory layout.
 */
export function plannerModelFrom(model: InspectedModel): PlannerModel {
    const layers = model.layerCount ?? 1 + Math.max(-1, ...model.tensors.map((t) => t.layer ?? -1));
    const embd = model.embeddingLength ?? 0;
    const headCount = firstNumber(model.headCount, 1);
    const headCountKv = firstNumber(model.headCountKv, headCount);
    // the K projection is [embd, headDim × kvHeads] (source: create_tensor_qkv in src/llama-model.cpp)
    const kShape = model.tensors.find((t) => t.role === "attn_k" && t.shape.length === 2)?.shape;
    const headDim = kShape == null ? undefined : kShape[1]! / headCountKv;
    const loaded = loadedTensors(model);
    return {
        tensors: loaded.map((t): PlannerTensor => {
            const tied = t.tiedTo == null ? {} : {tiedTo: t.tiedTo};
            const expert = expertOperatorOf(t);
            if (expert == null) return {name: t.name, layer: t.layer, role: t.role, type: t.type, bytes: t.bytes, op: operatorOf(t), ...tied};
            const used = Math.min(expert.count, Math.max(1, model.expertUsedCount ?? 1));
            return {name: t.name, layer: t.layer, role: t.role, type: t.type, bytes: t.bytes, op: expert.op, experts: {count: expert.count, used}};
        }),
        layerCount: layers,
        embd,
        ff: firstNumber(model.feedForwardLength, 4 * embd),
        headCount,
        headCountKv,
        vocab: model.vocabSize ?? 0,
        ...(headDim != null && Number.isInteger(headDim) && headDim !== embd / headCount ? {headDim} : {}),
        weightBytes: loaded.reduce((sum, t) => sum + (t.tiedTo == null ? t.bytes : 0), 0),
        ...(model.memory == null ? {} : {memory: model.memory})
    };
}

/** The expected request: prompt and reply lengths. */
export type Workload = {readonly promptTokens: number; readonly genTokens: number};

/**
 * Default workload: the paper's short-chat setting ("OATO: operator-aware tensor offloading", §2.1, caps text at 1024 tokens): a 512-token prompt and a
 * 128-token reply.
 */
export const DEFAULT_WORKLOAD: Workload = {promptTokens: 512, genTokens: 128};

/**
 * A placement resolved to devices: a layer split (`gpuLayers` N) with per-tensor overrides on top, either way — the
 * plain layer split, every layer offloaded with weights moved back to host memory (`-ngl max -ot …=CPU`), and a split
 * whose CPU layers keep some weights on the GPU and whose GPU layers keep some in host memory.
 */
export type ResolvedPlacement = {
    /** llama.cpp `-ngl`: `"max"` = every layer and the output on the GPU. */
    readonly gpuLayers: number | "max";
    /** Names of the tensors that live in GPU memory. */
    readonly onGpu: ReadonlySet<string>;
    /**
     * Per repeating layer: llama.cpp's device of the layer is the GPU (`model.dev_layer(il)`, set by `-ngl` alone, not by
     * overrides). The layer's KV cache and attention live there (unless `--no-kv-offload`), and so do its norms while a
     * token is generated (source: llama_context's graph callback pins every "norm" node to the layer's device for
     * micro-batches under 32 tokens or a full offload).
     */
    readonly layerOnGpu: readonly boolean[];
};

/** VRAM a plan needs, bytes. */
export type VramNeed = {readonly weights: number; readonly kv: number; readonly scratch: number; readonly total: number};

/** What the cost model predicts for a placement + settings + workload. */
export type PlanPrediction = {
    readonly ttftMs: number;
    readonly tpotMs: number;
    /** The planner's objective: one request of the workload, TTFT + (genTokens − 1) × TPOT. */
    readonly requestMs: number;
    readonly promptTokens: number;
    readonly genTokens: number;
    readonly vram: VramNeed;
    /** Bytes of weights in host memory. */
    readonly hostWeightBytes: number;
    /** Bytes of KV cache in host memory: K and V of every layer whose attention runs on the CPU. */
    readonly hostKvBytes: number;
    /**
     * Bytes of host compute buffers (scratch): the cost model prices them when the whole graph runs on the CPU, and
     * autoPlan's check replaces them with llama.cpp's no-alloc simulation of the chosen plan (checkWithSimulation,
     * autoPlan.ts); `null` where neither did (a GPU runs part of the graph and the plan was not simulated).
     */
    readonly hostScratchBytes: number | null;
    /** CPU↔GPU switches in one decode step. */
    readonly decodeHops: number;
};
