import {layerSplit} from "../resolvePlacement.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

const MiB = 1024 * 1024;

/**
 * Everything on the CPU (`-ngl 0`, mmap): the baseline that always fits. On a GPU build llama.cpp still offloads
 * prefill micro-batches ≥ 32 tokens to the GPU (copying each weight over) and reserves a compute buffer there for
 * them; the prediction says so, and the plan counts as fitting anyway — no placement can avoid that reserve.
 */
export async function cpuStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    const settings = {...inputs.settings, useMmap: true};
    const plan = finishPlan(inputs, "cpu", layerSplit(inputs.cost.model, 0), settings, ["-ngl 0"]);
    const scratch = plan.prediction.vram.scratch;
    if (scratch === 0) return {...plan, fits: true, reason: null};
    return {
        ...plan, fits: true, reason: null,
        notes: [...plan.notes, `llama.cpp still reserves ${(scratch / MiB).toFixed(1)} MiB of GPU compute buffer for the prefill ops it offloads` +
            (plan.prediction.vram.total > inputs.budgetBytes ? ` (more than the ${(inputs.budgetBytes / MiB).toFixed(1)} MiB budget)` : "")]
    };
}
