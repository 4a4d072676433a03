/** The VRAM budget: free memory minus a safety margin, or a user-given size or share of the weights. */
import type {ResolvedSettings} from "../../contract/settings.js";
import type {Budget} from "../../contract/ipc.js";
import {kvBytesTotal, scratchFor, type CostInputs} from "./costModel.js";


/** Kept free on an "auto" budget: driver/allocator slack and other apps (llama.cpp's --fit default target is 1 GiB). */
export const AUTO_SAFETY_MARGIN_BYTES = 1024 * 1024 * 1024;
/** …or this share of the free memory, whichever is larger. */
export const AUTO_SAFETY_MARGIN_SHARE = 0.05;

/** Budget in bytes for weights + KV cache + scratch on the GPU. */
export function budgetBytes(budget: Budget, facts: {gpuFreeBytes: number; weightBytes: number}): number {
    switch (budget.kind) {
        case "mib": return Math.floor(budget.mib * 1024 * 1024);
        case "percent": return Math.floor(facts.weightBytes * budget.percent / 100);
        case "auto": return Math.max(0, Math.floor(facts.gpuFreeBytes - Math.max(AUTO_SAFETY_MARGIN_BYTES, facts.gpuFreeBytes * AUTO_SAFETY_MARGIN_SHARE)));
    }
}

/** What is left for weights once the KV cache and the scratch are reserved; `reason` says why nothing is. */
export type WeightBudget = {readonly bytes: number; readonly kvBytes: number; readonly scratchBytes: number; readonly reason: string | null};

const MiB = 1024 * 1024;

/**
 * Reserves KV cache (every layer, as a per-tensor plan keeps KV on the GPU) and scratch (measured when the cost inputs
 * carry it, else the base formula without a weight copy) before weights.
 */
export function weightBudget(inputs: CostInputs, settings: ResolvedSettings, budget: number): WeightBudget {
    const {model} = inputs;
    // with --no-kv-offload the KV cache stays in host memory
    const kv = settings.kvOffload ? kvBytesTotal(model, settings) : 0;
    const scratch = scratchFor(inputs, settings, 0);
    const bytes = budget - kv - scratch;
    if (bytes > 0) return {bytes, kvBytes: kv, scratchBytes: scratch, reason: null};
    return {
        bytes: 0, kvBytes: kv, scratchBytes: scratch,
        reason: `the budget of ${(budget / MiB).toFixed(0)} MiB cannot hold the KV cache (${(kv / MiB).toFixed(0)} MiB at ` +
            `${settings.contextSize} tokens) and scratch (${(scratch / MiB).toFixed(0)} MiB at micro-batch ${settings.batchSize}); ` +
            "use a smaller context or micro-batch, or the cpu strategy"
    };
}
