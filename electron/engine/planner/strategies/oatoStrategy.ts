/** OATO, Algorithm 1 (§3.3) of the paper "OATO: operator-aware tensor offloading": rank weight operators by GPU affinity, fill the GPU to 90%. */
import {costContext, decodeOpUs, executionOrder, measuredScratch, type CostContext} from "../costModel.js";
import {cpuStrategy} from "./cpuStrategy.js";
import {weightBudget} from "../budget.js";
import {perTensor} from "../resolvePlacement.js";
import type {PlannerTensor} from "../types.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

/** source: Algorithm 1 line 16, memory_limit = 0.90 * available_gpu_memory. */
export const OATO_MEMORY_SHARE = 0.9;
/** The paper's loop has no bound; an order that oscillates stops here. */
export const OATO_MAX_ITERATIONS = 100;

/** One operator as Algorithm 1 sees it. */
export type OatoOperator = {
    readonly name: string;
    /** CPU execution time, µs. */
    readonly tc: number;
    /** GPU execution time, µs. */
    readonly tg: number;
    /** Weight bytes. */
    readonly m: number;
};

/** Algorithm 1 lines 2–5 / 8–11: B = (Tc − Tg − T′)/M, min-max normalised to G; sorted by G descending (stable). */
export function rankByAffinity(ops: readonly OatoOperator[], transferUs: (name: string) => number): {order: string[]; affinity: Map<string, number>} {
    const b = ops.map((op) => (op.tc - op.tg - transferUs(op.name)) / op.m);
    // a loop, not Math.min(...b): a spread of one argument per tensor overflows the stack on huge models
    const min = b.reduce((low, value) => Math.min(low, value), Infinity);
    const max = b.reduce((high, value) => Math.max(high, value), -Infinity);
    const affinity = new Map(ops.map((op, i) => [op.name, max === min ? 1 : (b[i]! - min) / (max - min)]));
    const order = ops.map((op, i) => ({name: op.name, g: affinity.get(op.name)!, i}))
        .sort((x, y) => y.g - x.g || x.i - y.i).map((x) => x.name);
    return {order, affinity};
}

/** Algorithm 1 lines 16–24: take operators in order until the running total passes the limit (then stop). */
export function fillInOrder(order: readonly string[], bytes: ReadonlyMap<string, number>, availableBytes: number): Set<string> {
    const limit = OATO_MEMORY_SHARE * availableBytes;
    const gpu = new Set<string>();
    let total = 0;
    for (const name of order) {
        total += bytes.get(name) ?? 0;
        if (total > limit) break;
        gpu.add(name);
    }
    return gpu;
}

/**
 * The whole of Algorithm 1. `transferUs(name, gpuSet)` is T′: the cross-device delay the operator incurs on the GPU
 * given the placement the current order yields. Returns the final order, the GPU set and the iterations used.
 */
export function oato(ops: readonly OatoOperator[], availableBytes: number,
    transferUs: (name: string, gpu: ReadonlySet<string>) => number): {order: string[]; gpu: Set<string>; iterations: number} {
    const bytes = new Map(ops.map((op) => [op.name, op.m]));
    let {order} = rankByAffinity(ops, () => 0);
    let iterations = 0;
    while (iterations < OATO_MAX_ITERATIONS) {
        iterations++;
        const tentative = fillInOrder(order, bytes, availableBytes);
        const next = rankByAffinity(ops, (name) => transferUs(name, tentative)).order;
        const stable = next.every((name, i) => name === order[i]);
        order = next;
        if (stable) break;
    }
    return {order, gpu: fillInOrder(order, bytes, availableBytes), iterations};
}

/**
 * T′ for our graphs: one CPU↔GPU switch (profiled copy + sync + launch) for each execution-order neighbour of the
 * operator that would run on the CPU while it runs on the GPU (attention runs on the GPU, embeddings on the CPU).
 */
export function neighbourTransfer(cx: CostContext): (name: string, gpu: ReadonlySet<string>) => number {
    const order = executionOrder(cx.inputs.model);
    const index = new Map<string, number>();
    order.forEach((n, i) => { if (n.kind === "op") index.set(n.tensor.name, i); });
    const onGpu = (i: number, gpu: ReadonlySet<string>): boolean => {
        const n = order[i];
        if (n == null) return false;
        return n.kind !== "op" || gpu.has(n.tensor.name);
    };
    return (name, gpu) => {
        const i = index.get(name)!;
        return ((onGpu(i - 1, gpu) ? 0 : 1) + (onGpu(i + 1, gpu) ? 0 : 1)) * cx.switchUs;
    };
}

/** OATO as a strategy: per-tensor placement (every layer offloaded, ranked weights kept, the rest to host memory). */
export async function oatoStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    const {model} = inputs.cost;
    const settings = {...inputs.settings, useMmap: false};
    const cx = costContext(inputs.cost, settings, inputs.workload);
    const weights: PlannerTensor[] = model.tensors.filter((t) => t.op != null);
    // the paper's operator latencies are single-token (Table 1); we use the profiled decode matmul times
    const ops = weights.map((t) => ({name: t.name, tc: decodeOpUs(cx, t, false), tg: decodeOpUs(cx, t, true), m: t.bytes}));
    // "available GPU memory": the budget after the KV cache, scratch and the small non-matmul tensors
    const fixed = model.tensors.filter((t) => t.op == null && t.role !== "token_embd").reduce((s, t) => s + t.bytes, 0);
    // and room for one host weight copied in for an offloaded prefill op (see scratchBytes)
    // (already inside a measured scratch)
    const copyRoom = measuredScratch(inputs.cost, settings) != null ? 0 : Math.max(0, ...weights.filter((t) => t.role !== "output").map((t) => t.bytes));
    const reserve = weightBudget(inputs.cost, settings, inputs.budgetBytes);
    const available = reserve.bytes - fixed - copyRoom;
    if (inputs.cost.gpuDevice == null || reserve.reason != null || available <= 0) {
        // nothing can go to the GPU: llama.cpp would run the model on the CPU (-ngl 0), so that is the plan
        const why = inputs.cost.gpuDevice == null ? "no GPU" : reserve.reason ??
            `after the KV cache, scratch and small tensors no memory is left for weights in the ${(inputs.budgetBytes / 2 ** 20).toFixed(0)} MiB budget`;
        const cpu = await cpuStrategy(inputs);
        return {...cpu, strategy: "oato", notes: [`Algorithm 1 not run: ${why}; falling back to CPU-only (-ngl 0)`, ...cpu.notes]};
    }
    const result = oato(ops, available, neighbourTransfer(cx));
    const host = new Set(weights.filter((t) => !result.gpu.has(t.name)).map((t) => t.name));
    return finishPlan(inputs, "oato", perTensor(model, host), settings,
        [`Algorithm 1: ${result.iterations} iterations, ${result.gpu.size}/${weights.length} operators on the GPU`]);
}
