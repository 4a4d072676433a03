/** What every placement strategy returns, and the inputs they share. */
import type {ResolvedSettings} from "../../../contract/settings.js";
import type {Placement, TensorBufferOverride} from "../../placement/Placement.js";
import {costContext, predict, type CostInputs} from "../costModel.js";
import type {MachineProfile} from "../../profiler/MachineProfile.js";
import {placementOverrides, tiedOutputOverrides, toPlacement} from "../resolvePlacement.js";
import type {PlanPrediction, ResolvedPlacement, Workload} from "../types.js";

import type {StrategyName} from "../../../contract/strategies.js";
/** llama.cpp's own fitting, as a parameter (the native `tensorwiseFitParams`, or a fake in tests). */
export type FitFunction = (request: {budgetBytes: number; settings: ResolvedSettings}) =>
    Promise<{gpuLayers: number; overrides: [pattern: string, bufferType: string][]; status: string}>;

/** Inputs every strategy takes: hardware facts are parameters (fake profiles in tests). */
export type StrategyInputs = {
    readonly cost: CostInputs;
    /** The GPU's buffer type (`"CUDA0"`, `"Vulkan0"`), `null` without a GPU. */
    readonly gpuBufferType: string | null;
    /** Bytes the plan may use on the GPU: weights + KV cache + scratch. */
    readonly budgetBytes: number;
    /** Base settings (context size, threads; micro-batch and mmap are what strategies may change). */
    readonly settings: ResolvedSettings;
    readonly workload: Workload;
    /** Needed by the `fit` strategy. */
    readonly fit?: FitFunction;
    /** Whether a buffer type name is host memory. Defaults to `isHostBufferType` (electron/contract/memory.ts) by name. */
    readonly isHostBufferType?: (name: string) => boolean;
    /**
     * The CPU timed as a load that uses no GPU lays out its weights (`--device none`: repacked into the CPU's extra
     * buffer types where llama.cpp repacks), for pricing plans with `useGpu` false. Defaults to `cost.profile`.
     */
    readonly cpuOnlyProfile?: MachineProfile;
    /**
     * Knobs the client chose (`false`/`true`), which the planner keeps; the others (`PLANNED_KNOBS`,
     * electron/contract/settings.ts) it chooses. Defaults to none chosen.
     */
    readonly chosen?: Partial<Pick<ResolvedSettings, "useGpu" | "opOffload" | "kvOffload" | "flashAttention">>;
};

/** The cost inputs that price a plan with `settings`: without the GPU, the CPU's timings as such a load lays out its weights. */
export function costInputsFor(inputs: Pick<StrategyInputs, "cost" | "cpuOnlyProfile">, settings: Pick<ResolvedSettings, "useGpu">): CostInputs {
    if (settings.useGpu || inputs.cpuOnlyProfile == null) return inputs.cost;
    return {...inputs.cost, profile: withRepackedCpuPoints(inputs.cost.profile, inputs.cpuOnlyProfile)};
}

const merged = new WeakMap<MachineProfile, WeakMap<MachineProfile, MachineProfile>>();

/**
 * `profile` with the CPU timings of the weights a load without the GPU lays out otherwise (those `cpuOnly` timed in
 * another buffer type than `profile` did: repacked into AMX or CPU_REPACK where a load with the GPU keeps them plain in
 * its pinned host buffer) taken from `cpuOnly`; every other point stays `profile`'s. Where both layouts run the same
 * kernel on the same memory, two separately timed profiles differ only by noise (5–15% on a shared VM), which must not
 * decide between using the GPU and not.
 */
export function withRepackedCpuPoints(profile: MachineProfile, cpuOnly: MachineProfile): MachineProfile {
    const cached = merged.get(profile)?.get(cpuOnly);
    if (cached != null) return cached;
    const key = (p: {type: string; rows: number; cols: number; batch: number}): string => `${p.type}:${p.rows}x${p.cols}@${p.batch}`;
    const dense = new Map(cpuOnly.matmuls.filter((p) => p.device === "CPU").map((p) => [key(p), p]));
    const experts = new Map((cpuOnly.expertMatmuls ?? []).filter((p) => p.device === "CPU").map((p) => [`${key(p)}x${p.count}/${p.used}`, p]));
    const laidOutOtherwise = <P extends {weightBufferType?: string}>(own: P, other: P | undefined): P =>
        other != null && other.weightBufferType != null && own.weightBufferType != null && other.weightBufferType !== own.weightBufferType ? other : own;
    const result: MachineProfile = {
        ...profile,
        matmuls: profile.matmuls.map((p) => (p.device === "CPU" ? laidOutOtherwise(p, dense.get(key(p))) : p)),
        ...(profile.expertMatmuls != null ? {expertMatmuls: profile.expertMatmuls.map((p) =>
            (p.device === "CPU" ? laidOutOtherwise(p, experts.get(`${key(p)}x${p.count}/${p.used}`)) : p))} : {})
    };
    const forProfile = merged.get(profile) ?? new WeakMap<MachineProfile, MachineProfile>();
    forProfile.set(cpuOnly, result);
    merged.set(profile, forProfile);
    return result;
}

/** A strategy's plan: placement, llama.cpp parameters, runtime settings and the prediction. */
export type StrategyResult = {
    readonly strategy: StrategyName;
    /** Predicted VRAM ≤ budget. When `false`, `reason` says why. */
    readonly fits: boolean;
    readonly reason: string | null;
    readonly resolved: ResolvedPlacement;
    /** Per-tensor buffer types (for summarisePlacement / the UI). */
    readonly placement: Placement;
    /** llama.cpp `-ngl` to load with. */
    readonly gpuLayers: number | "max";
    /** Tensor buffer overrides to load with (anchored, proved by compilePlacement; llama.cpp's own for `fit`). */
    readonly overrides: readonly TensorBufferOverride[];
    readonly settings: ResolvedSettings;
    readonly prediction: PlanPrediction;
    readonly budgetBytes: number;
    /** How the plan was found. */
    readonly notes: readonly string[];
    /**
     * For each knob the optimiser turned, the fastest plan it found with the knob set otherwise (what the knob's choice
     * won); only `optimal` fills it.
     */
    readonly alternatives?: readonly KnobAlternative[];
};

/** The knobs whose choice a plan's explanation weighs. */
export const DECIDING_KNOBS = ["useGpu", "opOffload", "kvOffload", "flashAttention", "batchSize", "useMmap"] as const;

/** The best plan found with one knob set to another value than the chosen plan's. */
export type KnobAlternative = {
    readonly knob: (typeof DECIDING_KNOBS)[number];
    readonly value: boolean | number;
    /** Its predicted request (TTFT + (gen − 1) × TPOT). */
    readonly requestMs: number;
    /** `true` when the MILP was not solved for it: `requestMs` is then a lower bound. */
    readonly atLeast: boolean;
};

/** Predicts a resolved placement and packages it as a {@link StrategyResult}. */
export function finishPlan(inputs: StrategyInputs, strategy: StrategyName, resolved: ResolvedPlacement, settings: ResolvedSettings,
    notes: string[], rawOverrides?: readonly TensorBufferOverride[]): StrategyResult {
    const {model} = inputs.cost;
    const prediction = predict(costContext(costInputsFor(inputs, settings), settings, inputs.workload), resolved);
    const placement = toPlacement(model, resolved, settings.useGpu ? inputs.gpuBufferType : null);
    let overrides: readonly TensorBufferOverride[] = rawOverrides ?? [];
    if (rawOverrides == null && inputs.gpuBufferType != null && settings.useGpu)
        overrides = [...tiedOutputOverrides(model, resolved), ...placementOverrides(model, resolved, inputs.gpuBufferType)];
    // everything on the GPU counts: weights, KV cache and compute buffers — also the compute buffer llama.cpp reserves
    // for the prompt ops it offloads from a CPU-only placement (a plan without the GPU, or with op offload off, has none)
    const fits = prediction.vram.total <= inputs.budgetBytes;
    const MiB = 1024 * 1024;
    return {
        strategy, fits, resolved, placement, gpuLayers: resolved.gpuLayers, overrides, settings, prediction,
        budgetBytes: inputs.budgetBytes, notes,
        reason: fits ? null : `needs ${(prediction.vram.total / MiB).toFixed(1)} MiB of VRAM (weights ${(prediction.vram.weights / MiB).toFixed(1)}, ` +
            `KV ${(prediction.vram.kv / MiB).toFixed(1)}, scratch ${(prediction.vram.scratch / MiB).toFixed(1)}) but the budget is ${(inputs.budgetBytes / MiB).toFixed(1)} MiB`
    };
}
