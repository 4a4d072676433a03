/**
 * Our planner: an exact mixed-integer program (HiGHS) over which weights stay on the GPU, for each candidate runtime
 * setting (pinned or mmap host memory × micro-batch), minimising one workload request (TTFT + (gen − 1) × TPOT) as the
 * cost model prices it: per-op CPU/GPU/copy costs, CPU↔GPU switches (hops) and the scratch a host weight copy needs.
 * The baselines' placements are evaluated under every setting too, so the result is never predicted worse than them.
 */
import type {ResolvedSettings} from "../../../contract/settings.js";
import {costContext, decodeOpUs, executionOrder, kvBytesPerLayer, measuredScratch, predict, prefillOpUs, scratchFor, type CostContext} from "../costModel.js";
import {layerSplit, perTensor} from "../resolvePlacement.js";
import {cpuStrategy} from "./cpuStrategy.js";
import type {ResolvedPlacement} from "../types.js";
import {solveMilp} from "./solveMilp.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

/** Micro-batch sizes tried (node-llama-cpp batchSize = n_ubatch). */
export const OPTIMAL_BATCH_SIZES = [128, 512, 2048] as const;

const num = (v: number): string => (Number.isFinite(v) ? v : 0).toPrecision(15).replace(/\.?0+(e|$)/, "$1");

/** Builds and solves the MILP for one setting; returns the host tensors of the optimum, or null if infeasible. */
async function solveFor(inputs: StrategyInputs, cx: CostContext): Promise<Set<string> | null> {
    const {model} = inputs.cost;
    const {genTokens} = inputs.workload;
    const ops = model.tensors.filter((t) => t.op != null);
    const vars = new Map(ops.map((t, i) => [t.name, `x${i}`]));
    // objective: Σ_i x_i (g_i − c_i) + W_hop Σ_k h_k  (+ constants the choice cannot change)
    const terms: string[] = [];
    for (const t of ops) {
        const g = prefillOpUs(cx, t, true) + (genTokens - 1) * decodeOpUs(cx, t, true);
        const c = prefillOpUs(cx, t, false) + (genTokens - 1) * decodeOpUs(cx, t, false);
        terms.push(`${g - c >= 0 ? "+" : "-"} ${num(Math.abs(g - c))} ${vars.get(t.name)}`);
    }
    // a switch costs switchUs per decode step; micro-batches below the offload threshold run ops where they live too
    const smallBatchHop = cx.ubatches.filter((b) => b < cx.offloadMinBatch)
        .reduce((s, b) => s + cx.switchUs + b * model.embd * 4 / Math.max(cx.h2dBytesPerUs, 1e-9), 0);
    const hopWeight = (genTokens - 1) * cx.switchUs + smallBatchHop;
    // device sequence of one decode step: CPU (embeddings) → nodes → CPU (logits)
    const seq: string[] = ["0", ...executionOrder(model).map((n) => n.kind === "attn" ? "1" : vars.get(n.tensor.name)!), "0"];
    const constraints: string[] = [];
    let hopCount = 0;
    for (let k = 1; k < seq.length; k++) {
        const a = seq[k - 1]!, b = seq[k]!;
        if (a === b || (/^\d$/.test(a) && /^\d$/.test(b))) continue;
        const h = `h${hopCount++}`;
        terms.push(`+ ${num(hopWeight)} ${h}`);
        // h ≥ |a − b|, linearised; constants move to the right-hand side
        const lhs = (sign: 1 | -1): string => {
            const parts = [h];
            const rhs = [0];
            for (const [v, s] of [[a, -sign], [b, sign]] as const) {
                if (/^\d$/.test(v)) rhs[0]! -= s * Number(v);
                else parts.push(`${s > 0 ? "-" : "+"} ${v}`);
            }
            return `${parts.join(" ")} >= ${num(rhs[0]!)}`;
        };
        constraints.push(` hp${k}: ${lhs(1)}`, ` hn${k}: ${lhs(-1)}`);
    }
    // capacity: GPU weights + one host-weight copy (s) ≤ budget − KV − base scratch − fixed small tensors
    const fixed = model.tensors.filter((t) => t.op == null && t.role !== "token_embd").reduce((s, t) => s + t.bytes, 0);
    const cap = inputs.budgetBytes - kvBytesPerLayer(model, cx.settings.contextSize) * model.layerCount - scratchFor(inputs.cost, cx.settings, 0) - fixed;
    if (cap < 0) return null;
    // a measured scratch already holds the largest weight copy (it is the worst of all-GPU and all-host placements)
    const useCopy = Math.min(cx.settings.batchSize, cx.settings.contextSize) >= cx.offloadMinBatch && measuredScratch(inputs.cost, cx.settings) == null;
    constraints.push(` cap: ${ops.map((t) => `+ ${t.bytes} ${vars.get(t.name)}`).join(" ")}${useCopy ? " + s" : ""} <= ${cap}`);
    if (useCopy) ops.filter((t) => t.role !== "output").forEach((t, i) => constraints.push(` cp${i}: s + ${t.bytes} ${vars.get(t.name)} >= ${t.bytes}`));
    const lp = ["Minimize", ` obj: ${terms.join(" ")}`, "Subject To", ...constraints, "Bounds",
        ...[...vars.values()].map((v) => ` 0 <= ${v} <= 1`), ...Array.from({length: hopCount}, (_, i) => ` h${i} >= 0`), " s >= 0",
        "Binary", ` ${[...vars.values()].join(" ")}`, "End"].join("\n");
    const solved = await solveMilp(lp);
    if (solved == null) return null;
    return new Set(ops.filter((t) => (solved.values.get(vars.get(t.name)!) ?? 0) < 0.5).map((t) => t.name));
}

/** Settings the optimiser searches: pinned or mmap × micro-batch sizes that the context allows. */
export function candidateSettings(base: ResolvedSettings): ResolvedSettings[] {
    const batches = [...new Set([...OPTIMAL_BATCH_SIZES, base.batchSize])].filter((b) => b <= base.contextSize);
    return [false, true].flatMap((useMmap) => batches.map((batchSize) => ({...base, useMmap, batchSize})));
}

/**
 * `optimal`: the best predicted plan over {MILP optimum per setting} ∪ {each baseline placement × each setting}.
 * `baselines` are the other strategies' results for the same inputs (their placements become candidates).
 */
export async function optimalStrategy(inputs: StrategyInputs, baselines: readonly StrategyResult[] = []): Promise<StrategyResult> {
    const {model} = inputs.cost;
    const candidates: {resolved: ResolvedPlacement; settings: ResolvedSettings; note: string; raw?: StrategyResult["overrides"]}[] = [];
    for (const settings of candidateSettings(inputs.settings)) {
        candidates.push({resolved: layerSplit(model, 0), settings, note: `CPU-only (-ngl 0) at micro-batch ${settings.batchSize}, ${settings.useMmap ? "mmap" : "pinned"}`});
        if (inputs.cost.gpuDevice != null) {
            const host = await solveFor(inputs, costContext(inputs.cost, settings, inputs.workload));
            if (host != null) candidates.push({resolved: perTensor(model, host), settings, note: `MILP (HiGHS, exact) at micro-batch ${settings.batchSize}, ${settings.useMmap ? "mmap" : "pinned"}`});
        }
        for (const b of baselines) {
            candidates.push({resolved: b.resolved, settings, note: `${b.strategy}'s placement at micro-batch ${settings.batchSize}, ${settings.useMmap ? "mmap" : "pinned"}`,
                raw: b.strategy === "fit" ? b.overrides : undefined});
        }
    }
    // first the candidates whose whole VRAM (with the compute buffer) is within the budget; only when none is, a
    // CPU-only placement over it (llama.cpp reserves that compute buffer whatever the plan, so it is the fallback)
    let best: {c: (typeof candidates)[number]; ms: number} | null = null;
    let fallback: {c: (typeof candidates)[number]; ms: number} | null = null;
    for (const c of candidates) {
        const p = predict(costContext(inputs.cost, c.settings, inputs.workload), c.resolved);
        if (p.vram.total <= inputs.budgetBytes) {
            if (best == null || p.requestMs < best.ms) best = {c, ms: p.requestMs};
        } else if (c.resolved.onGpu.size === 0 && (fallback == null || p.requestMs < fallback.ms)) fallback = {c, ms: p.requestMs};
    }
    best ??= fallback;
    if (best == null) {
        const cpu = await cpuStrategy(inputs);
        return {...cpu, strategy: "optimal", notes: ["no candidate fits the budget; CPU-only (-ngl 0)", ...cpu.notes]};
    }
    return finishPlan(inputs, "optimal", best.c.resolved, best.c.settings, [best.c.note, `${candidates.length} candidates evaluated`], best.c.raw);
}
