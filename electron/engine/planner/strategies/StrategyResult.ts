/** What every placement strategy returns, and the inputs they share. */
import type {ResolvedSettings} from "../../../contract/settings.js";
import {compilePlacement} from "../../placement/compilePlacement.js";
import type {Placement, TensorBufferOverride} from "../../placement/Placement.js";
import {costContext, predict, type CostInputs} from "../costModel.js";
import {toPlacement} from "../resolvePlacement.js";
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
};

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
};

/** Predicts a resolved placement and packages it as a {@link StrategyResult}. */
export function finishPlan(inputs: StrategyInputs, strategy: StrategyName, resolved: ResolvedPlacement, settings: ResolvedSettings,
    notes: string[], rawOverrides?: readonly TensorBufferOverride[]): StrategyResult {
    const {model} = inputs.cost;
    const prediction = predict(costContext(inputs.cost, settings, inputs.workload), resolved);
    const placement = toPlacement(model, resolved, inputs.gpuBufferType);
    let overrides: readonly TensorBufferOverride[] = rawOverrides ?? [];
    if (rawOverrides == null && resolved.gpuLayers === "max" && inputs.gpuBufferType != null)
        overrides = compilePlacement(placement, model.tensors).overrides;
    // a CPU-only placement always fits: what llama.cpp reserves on the GPU for it (the compute buffer of offloaded
    // prefill ops) is no choice of the plan's
    const cpuOnly = resolved.onGpu.size === 0 && !resolved.kvOnGpu.some(Boolean);
    const fits = cpuOnly || prediction.vram.total <= inputs.budgetBytes;
    const MiB = 1024 * 1024;
    return {
        strategy, fits, resolved, placement, gpuLayers: resolved.gpuLayers, overrides, settings, prediction,
        budgetBytes: inputs.budgetBytes, notes,
        reason: fits ? null : `needs ${(prediction.vram.total / MiB).toFixed(1)} MiB of VRAM (weights ${(prediction.vram.weights / MiB).toFixed(1)}, ` +
            `KV ${(prediction.vram.kv / MiB).toFixed(1)}, scratch ${(prediction.vram.scratch / MiB).toFixed(1)}) but the budget is ${(inputs.budgetBytes / MiB).toFixed(1)} MiB`
    };
}
