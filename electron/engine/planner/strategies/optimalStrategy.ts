/**
 * Our planner: an exact mixed-integer program (HiGHS) over which weights stay on the GPU and which layers are GPU
 * layers (`-ngl`: where a layer's KV cache lives and its norms run), for each candidate runtime configuration — every
 * llama.cpp knob that changes time or memory: pinned or mmap host memory, micro-batch (below 32 tokens no prompt op is
 * offloaded), op offload, KV offload, flash attention, and using the GPU at all — minimising one workload request
 * (TTFT + (gen − 1) × TPOT) as the cost model prices it: per-op CPU/GPU/copy costs, attention where the KV cache is,
 * CPU↔GPU switches (hops, the norms llama.cpp pins to a layer's device included) and the scratch a host weight copy
 * needs. The baselines' placements are evaluated under every configuration too, so the result is never predicted worse
 * than them.
 */
import type {ResolvedSettings} from "../../../contract/settings.js";
import {OFFLOAD_MIN_BATCH, attendedKeys, attentionUs, costContext, decodeAttendedKeys, requestLowerBoundMs, decodeOpUs, kvBytesOfLayer, measuredScratch, predict, prefillOpUs, scratchFor,
    type CostContext} from "../costModel.js";
import {layerSplit, perTensor} from "../resolvePlacement.js";
import {cpuStrategy} from "./cpuStrategy.js";
import type {ResolvedPlacement} from "../types.js";
import {solveMilp} from "./solveMilp.js";
import {costInputsFor, DECIDING_KNOBS, finishPlan, type KnobAlternative, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

/**
 * Micro-batch sizes tried (node-llama-cpp batchSize = n_ubatch). 16 is below the 32 tokens from which a GPU backend
 * runs host-weight prompt ops (OFFLOAD_MIN_BATCH, costModel.ts): every op then runs where its weight lives.
 */
export const OPTIMAL_BATCH_SIZES = [16, 128, 512, 2048] as const;

const num = (v: number): string => (Number.isFinite(v) ? v : 0).toPrecision(15).replace(/\.?0+(e|$)/, "$1");

/** The MILP's optimum for one setting: the matmul weights it leaves in host memory and how many layers are GPU layers. */
type MilpPlacement = {readonly host: Set<string>; readonly gpuLayerCount: number; readonly objective: number; readonly optimal: boolean};

/**
 * Seconds the MILP with the layers' devices free may search for one configuration, and for all of them together: with
 * the layer devices free, HiGHS can take many seconds to prove an optimum on a 28-layer model (its LP bound is weak
 * where a norm's device is a variable), whereas it finds good solutions early. Every configuration still gets the
 * exact optimum with every layer on the GPU first, which also prunes the free search (objective_bound).
 */
export const FREE_LAYERS_SECONDS = 2;
export const FREE_LAYERS_TOTAL_SECONDS = 10;

/**
 * Builds and solves the MILP for one setting, or returns null if infeasible. Variables: x_i = 1 puts matmul weight i
 * on the GPU; y_l = 1 makes layer l a GPU layer (llama.cpp's device of the layer, set by `-ngl`, so the GPU layers are
 * the last ones: y_l ≤ y_l+1), which holds the layer's KV cache and attention (with KV offload) and runs its norms
 * while a token is generated (PINNED_NORM_MAX_BATCH, costModel.ts); h_k ≥ |a − b| for neighbours a, b of the device
 * sequence counts the CPU↔GPU switches.
 */
async function solveFor(inputs: StrategyInputs, cx: CostContext,
    options: {readonly gpuLayerCount?: number; readonly timeLimitSeconds?: number; readonly objectiveBound?: number} = {}): Promise<MilpPlacement | null> {
    const {gpuLayerCount} = options;
    const {model} = inputs.cost;
    const {genTokens} = inputs.workload;
    const ops = model.tensors.filter((t) => t.op != null);
    const vars = new Map(ops.map((t, i) => [t.name, `x${i}`]));
    const layerVar = (layer: number): string => `y${layer}`;
    const layers = Array.from({length: model.layerCount}, (_, l) => l);
    // objective: Σ_i x_i (g_i − c_i) + Σ_l y_l (attention and prompt switches it saves or costs) + W_hop Σ_k h_k
    // (+ constants the choice cannot change)
    const terms: string[] = [];
    const term = (coefficient: number, v: string): string => `${coefficient >= 0 ? "+" : "-"} ${num(Math.abs(coefficient))} ${v}`;
    for (const t of ops) {
        const g = prefillOpUs(cx, t, true) + (genTokens - 1) * decodeOpUs(cx, t, true);
        const c = prefillOpUs(cx, t, false) + (genTokens - 1) * decodeOpUs(cx, t, false);
        terms.push(term(g - c, vars.get(t.name)!));
    }
    const hopUs = (b: number): number => cx.switchUs + b * model.embd * 4 / Math.max(cx.h2dBytesPerUs, 1e-9);
    const offloadedBatches = cx.ubatches.filter((b) => cx.opOffload && b >= cx.offloadMinBatch);
    if (cx.settings.kvOffload) {
        // a GPU layer's attention runs on the GPU; a CPU layer's on the CPU, and in a prompt micro-batch that op offload
        // sends to the GPU it costs two switches of the micro-batch's activations
        const decodeKeys = decodeAttendedKeys(cx);
        for (const layer of layers) {
            const attention = (gpu: boolean): number => {
                let us = (genTokens - 1) * attentionUs(cx, gpu, 1, decodeKeys, layer);
                let start = 0;
                for (const b of cx.ubatches) {
                    us += attentionUs(cx, gpu, b, attendedKeys(cx, start, b), layer);
                    start += b;
                }
                return us;
            };
            const promptSwitches = offloadedBatches.reduce((sum, b) => sum + 2 * hopUs(b), 0);
            terms.push(term(attention(true) - attention(false) - promptSwitches, layerVar(layer)));
        }
    }
    // a switch costs switchUs per decode step; micro-batches below the offload threshold (every one with op offload
    // off) run ops where they live too
    const smallBatchHop = cx.ubatches.filter((b) => !cx.opOffload || b < cx.offloadMinBatch).reduce((sum, b) => sum + hopUs(b), 0);
    const hopWeight = (genTokens - 1) * cx.switchUs + smallBatchHop;
    // device sequence of one decode step: CPU (embeddings) → nodes → CPU (logits); attention runs with the KV cache
    // (on the layer's device, on the CPU with --no-kv-offload), norms and the layer's other weights on its device
    const seq: string[] = ["0", ...cx.order.map((n) => n.kind === "op" ? vars.get(n.tensor.name)!
        : n.kind === "weight" ? layerVar(n.tensor.layer!) : n.kind === "pin" ? layerVar(n.layer) : cx.settings.kvOffload ? layerVar(n.layer) : "0"), "0"];
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
    // -ngl makes the last layers GPU layers
    for (const layer of layers.slice(0, -1)) constraints.push(` ly${layer}: ${layerVar(layer)} - ${layerVar(layer + 1)} <= 0`);
    // capacity: GPU weights + the KV cache of GPU layers + one host-weight copy (s) ≤ budget − base scratch − fixed
    // small tensors
    const fixed = model.tensors.filter((t) => t.op == null && t.role !== "token_embd").reduce((sum, t) => sum + t.bytes, 0);
    const cap = inputs.budgetBytes - scratchFor(inputs.cost, cx.settings, 0) - fixed;
    if (cap < 0) return null;
    const kvTerms = cx.settings.kvOffload ? layers.map((layer) => `+ ${kvBytesOfLayer(model, layer, cx.settings)} ${layerVar(layer)}`).join(" ") : "";
    // a measured scratch already holds the largest weight copy (it is the worst of all-GPU and all-host placements)
    const useCopy = cx.opOffload && Math.min(cx.settings.batchSize, cx.settings.contextSize) >= cx.offloadMinBatch && measuredScratch(inputs.cost, cx.settings) == null;
    constraints.push(` cap: ${ops.map((t) => `+ ${t.bytes} ${vars.get(t.name)}`).join(" ")} ${kvTerms}${useCopy ? " + s" : ""} <= ${cap}`);
    if (useCopy) ops.filter((t) => t.role !== "output").forEach((t, i) => constraints.push(` cp${i}: s + ${t.bytes} ${vars.get(t.name)} >= ${t.bytes}`));
    const binaries = [...vars.values(), ...layers.map(layerVar)];
    const lp = ["Minimize", ` obj: ${terms.join(" ")}`, "Subject To", ...constraints, "Bounds",
        ...binaries.map((v) => {
            const layer = v.startsWith("y") ? Number(v.slice(1)) : null;
            if (layer == null || gpuLayerCount == null) return ` 0 <= ${v} <= 1`;
            const value = layer >= model.layerCount - gpuLayerCount ? 1 : 0;
            return ` ${value} <= ${v} <= ${value}`;
        }), ...Array.from({length: hopCount}, (_, i) => ` h${i} >= 0`), " s >= 0",
        "Binary", ` ${binaries.join(" ")}`, "End"].join("\n");
    const solved = await solveMilp(lp, {
        ...(options.timeLimitSeconds != null ? {timeLimitSeconds: options.timeLimitSeconds} : {}),
        ...(options.objectiveBound != null ? {objectiveBound: options.objectiveBound} : {})
    });
    if (solved == null) return null;
    return {
        host: new Set(ops.filter((t) => (solved.values.get(vars.get(t.name)!) ?? 0) < 0.5).map((t) => t.name)),
        gpuLayerCount: layers.filter((layer) => (solved.values.get(layerVar(layer)) ?? 0) >= 0.5).length,
        objective: solved.objective, optimal: solved.optimal
    };
}

/** The values of one knob the search tries: the client's choice alone, else both. */
function choices(chosen: boolean | undefined, preferred: boolean): boolean[] {
    return chosen != null ? [chosen] : [preferred, !preferred];
}

/**
 * Configurations the optimiser searches with the GPU in use: pinned or mmap × the micro-batch sizes the context allows ×
 * op offload (only where a micro-batch reaches the offload threshold; below it both are the same) × KV offload ×
 * flash attention (forced on by a quantized KV cache) — each knob the client chose kept as chosen.
 */
export function candidateSettings(base: ResolvedSettings, chosen: StrategyInputs["chosen"] = {}, offloadMinBatch = OFFLOAD_MIN_BATCH): ResolvedSettings[] {
    const batches = [...new Set([...OPTIMAL_BATCH_SIZES, base.batchSize])].filter((b) => b <= base.contextSize);
    const flash = base.kvCacheType !== "f16" ? [true] : choices(chosen.flashAttention, false);
    const result: ResolvedSettings[] = [];
    for (const batchSize of batches)
        for (const opOffload of batchSize >= offloadMinBatch ? choices(chosen.opOffload, true) : [chosen.opOffload ?? true])
            // pinned or pageable host memory only changes how fast offloaded prompt ops copy their weights in
            for (const useMmap of opOffload && batchSize >= offloadMinBatch ? [false, true] : [false])
                for (const kvOffload of choices(chosen.kvOffload, true))
                    for (const flashAttention of flash)
                        result.push({...base, useGpu: true, useMmap, batchSize, opOffload, kvOffload, flashAttention});
    return result;
}

/**
 * Configurations without the GPU (`--device none`): micro-batch × flash attention; mmap on (nothing to pin for), and
 * op and KV offload moot.
 */
export function cpuOnlySettings(base: ResolvedSettings, chosen: StrategyInputs["chosen"] = {}): ResolvedSettings[] {
    // below 32 tokens a CPU matmul is no faster per token than at 128 (no offload to avoid without a GPU)
    const large = [...new Set([...OPTIMAL_BATCH_SIZES, base.batchSize])].filter((b) => b <= base.contextSize && b >= OFFLOAD_MIN_BATCH);
    const batches = large.length > 0 ? large : [Math.min(base.batchSize, base.contextSize)];
    const flash = base.kvCacheType !== "f16" ? [true] : choices(chosen.flashAttention, false);
    return batches.flatMap((batchSize) => flash.map((flashAttention) =>
        ({...base, useGpu: false, useMmap: true, batchSize, opOffload: true, kvOffload: true, flashAttention})));
}

/**
 * `optimal`: the best predicted plan over {MILP optimum per setting} ∪ {each baseline placement × each setting}.
 * `baselines` are the other strategies' results for the same inputs (their placements become candidates).
 */
export async function optimalStrategy(inputs: StrategyInputs, baselines: readonly StrategyResult[] = []): Promise<StrategyResult> {
    const {model} = inputs.cost;
    let evaluated = 0;
    // only candidates whose whole VRAM (weights, KV cache and compute buffers) is within the budget; the CPU-only
    // candidates without the GPU (or with op offload off) need none, so one always fits
    let best: {c: Candidate; ms: number} | null = null;
    const fitting: {settings: ResolvedSettings; ms: number; atLeast: boolean}[] = [];
    const evaluatedFitting: {c: Candidate; ms: number}[] = [];
    const consider = (c: Candidate): void => {
        evaluated++;
        const p = predict(costContext(costInputsFor(inputs, c.settings), c.settings, inputs.workload), c.resolved);
        if (p.vram.total > inputs.budgetBytes) return;
        fitting.push({settings: c.settings, ms: p.requestMs, atLeast: false});
        evaluatedFitting.push({c, ms: p.requestMs});
        if (best == null || p.requestMs < best.ms) best = {c, ms: p.requestMs};
    };
    const hasGpu = inputs.cost.gpuDevice != null && inputs.chosen?.useGpu !== false;
    const gpuSettings = hasGpu ? candidateSettings(inputs.settings, inputs.chosen, inputs.cost.offloadMinBatch) : [];
    // first the placements that cost nothing to find: without the GPU (first, so that a tie leaves the GPU free), then
    // CPU-only with the GPU visible and the baselines' placements, under every configuration
    if (inputs.chosen?.useGpu !== true || inputs.cost.gpuDevice == null)
        for (const settings of cpuOnlySettings(inputs.settings, inputs.chosen))
            consider({resolved: layerSplit(model, 0), settings, note: `without the GPU (--device none), ${describeSettings(settings)}`});
    for (const settings of gpuSettings) {
        consider({resolved: layerSplit(model, 0), settings, note: `CPU-only (-ngl 0) with the GPU visible, ${describeSettings(settings)}`});
        for (const b of baselines)
            consider({resolved: b.resolved, settings, note: `${b.strategy}'s placement, ${describeSettings(settings)}`, raw: b.strategy === "fit" ? b.overrides : undefined});
    }
    // then the MILP per configuration, most promising first, skipping those that cannot beat the best plan so far
    // (branch and bound over configurations: the bound is a true lower bound, so nothing better is ever skipped)
    const bounded = gpuSettings.map((settings) => {
        const cx = costContext(inputs.cost, settings, inputs.workload);
        return {settings, cx, bound: requestLowerBoundMs(cx)};
    }).sort((a, b) => a.bound - b.bound);
    let solved = 0;
    let freeLayersSecondsLeft = FREE_LAYERS_TOTAL_SECONDS;
    for (const [i, {settings, cx, bound}] of bounded.entries()) {
        if (best != null && bound > (best as {ms: number}).ms * (1 + NEAR_TIE_SHARE)) {
            // what the skipped configurations could at best have done, for the explanation of the knobs
            for (const skipped of bounded.slice(i)) fitting.push({settings: skipped.settings, ms: skipped.bound, atLeast: true});
            break;
        }
        solved++;
        // every layer a GPU layer (-ngl max and overrides to host memory) first: exact and quick to prove
        const allLayers = await solveFor(inputs, cx, {gpuLayerCount: model.layerCount});
        if (allLayers != null)
            consider({resolved: perTensor(model, allLayers.host, allLayers.gpuLayerCount), settings, note: `MILP (HiGHS, exact), ${describeSettings(settings)}`});
        // then with the layers' devices free too, within what is left of the time for that search, pruned by the first
        const seconds = Math.min(FREE_LAYERS_SECONDS, freeLayersSecondsLeft);
        if (seconds > 0 && model.layerCount > 0) {
            const started = performance.now();
            const free = await solveFor(inputs, cx, {timeLimitSeconds: seconds, ...(allLayers != null ? {objectiveBound: allLayers.objective} : {})});
            freeLayersSecondsLeft -= (performance.now() - started) / 1000;
            if (free != null)
                consider({resolved: perTensor(model, free.host, free.gpuLayerCount), settings,
                    note: `MILP (HiGHS, ${free.optimal ? "exact" : `the best found in ${seconds.toFixed(1)} s`}, ${free.gpuLayerCount} of ${model.layerCount} layers on the GPU), ${describeSettings(settings)}`});
        }
    }
    if (best == null) {
        const cpu = await cpuStrategy(inputs);
        return {...cpu, strategy: "optimal", notes: ["no candidate fits the budget; CPU-only (-ngl 0)", ...cpu.notes]};
    }
    const chosenPlan = preferLighter(evaluatedFitting, (best as {ms: number}).ms);
    const plan = finishPlan(inputs, "optimal", chosenPlan.resolved, chosenPlan.settings,
        [chosenPlan.note, `${evaluated} candidates evaluated; the MILP solved for ${solved} of ${gpuSettings.length} configurations (the rest bounded out)`], chosenPlan.raw);
    return {...plan, alternatives: knobAlternatives(chosenPlan.settings, fitting)};
}

/**
 * Predictions closer than this share are a tie to the cost model: its profile's repeated timings of one kernel differ
 * by a few percent on a quiet machine, so a 0.2% lead decides nothing (bench/results/2026-11-26-regret-xeon-amx: a
 * 2048-token micro-batch predicted 0.2% faster than a 512-token one ran 27% slower).
 */
export const NEAR_TIE_SHARE = 0.02;

/**
 * Among the candidates predicted within {@link NEAR_TIE_SHARE} of the fastest, the one that asks least of the machine:
 * without the GPU first (no VRAM, no second backend in llama.cpp's scheduler), then the smallest micro-batch (every
 * compute buffer is reserved for n_ubatch tokens: llama_context's graph_reserve), then the fastest; the earliest found
 * on a full tie (the search considers `--device none` first).
 */
export function preferLighter<T extends {settings: Pick<ResolvedSettings, "useGpu" | "batchSize">}>(candidates: readonly {c: T; ms: number}[], fastestMs: number): T {
    const ties = candidates.filter((x) => x.ms <= fastestMs * (1 + NEAR_TIE_SHARE));
    const weight = (x: {c: T; ms: number}): [number, number, number] => [x.c.settings.useGpu ? 1 : 0, x.c.settings.batchSize, x.ms];
    let chosen = ties[0]!;
    for (const x of ties.slice(1)) {
        const [a, b] = [weight(x), weight(chosen)];
        const i = a.findIndex((v, k) => v !== b[k]);
        if (i >= 0 && a[i]! < b[i]!) chosen = x;
    }
    return chosen.c;
}

/** Per knob, the fastest fitting candidate whose value of it differs from the chosen settings' (see KnobAlternative). */
export function knobAlternatives(chosen: ResolvedSettings, candidates: readonly {settings: ResolvedSettings; ms: number; atLeast: boolean}[]): KnobAlternative[] {
    const result: KnobAlternative[] = [];
    for (const knob of DECIDING_KNOBS) {
        let found: KnobAlternative | null = null;
        for (const c of candidates) {
            // a knob only matters with the GPU in use (without it, op and KV offload and mmap mean nothing)
            if (knob !== "useGpu" && knob !== "batchSize" && knob !== "flashAttention" && (!c.settings.useGpu || !chosen.useGpu)) continue;
            if (c.settings[knob] === chosen[knob]) continue;
            if (found == null || c.ms < found.requestMs) found = {knob, value: c.settings[knob], requestMs: c.ms, atLeast: c.atLeast};
        }
        if (found != null) result.push(found);
    }
    return result;
}

type Candidate = {resolved: ResolvedPlacement; settings: ResolvedSettings; note: string; raw?: StrategyResult["overrides"]};

/** The knobs of a configuration in a few words, for a plan's notes. */
export function describeSettings(settings: ResolvedSettings): string {
    return [`micro-batch ${settings.batchSize}`, settings.useMmap ? "mmap" : "pinned", settings.opOffload ? "op offload" : "no op offload",
        settings.kvOffload ? "KV offload" : "no KV offload", settings.flashAttention ? "flash attention" : "no flash attention",
        `${settings.kvCacheType} KV`, `${settings.threads} threads`].join(", ");
}
