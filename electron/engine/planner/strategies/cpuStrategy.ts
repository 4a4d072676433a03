import {layerSplit} from "../resolvePlacement.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

const MiB = 1024 * 1024;

/**
 * Every weight on the CPU (`-ngl 0`, mmap), as a user types it. With a GPU visible llama.cpp still offloads prefill
 * micro-batches ≥ 32 tokens to the GPU (copying each weight over) and reserves a compute buffer there for them; when
 * that reserve is over the budget, the plan turns op offload off (`--no-op-offload`), which reserves nothing — unless
 * the client chose op offload, in which case the plan does not fit and says why.
 */
export async function cpuStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    const settings = {...inputs.settings, useMmap: true};
    const plan = finishPlan(inputs, "cpu", layerSplit(inputs.cost.model, 0), settings, ["-ngl 0"]);
    const scratch = plan.prediction.vram.scratch;
    if (scratch === 0 || plan.fits) {
        return scratch === 0 ? plan : {
            ...plan, notes: [...plan.notes, `llama.cpp still reserves ${(scratch / MiB).toFixed(1)} MiB of GPU compute buffer for the prefill ops it offloads`]
        };
    }
    if (inputs.chosen?.opOffload === true) return plan;
    const noOffload = finishPlan(inputs, "cpu", layerSplit(inputs.cost.model, 0), {...settings, opOffload: false}, ["-ngl 0", "--no-op-offload"]);
    return {
        ...noOffload,
        notes: [...noOffload.notes, `op offload off: with it llama.cpp would reserve ${(scratch / MiB).toFixed(1)} MiB of GPU compute buffer, ` +
            `more than the ${(inputs.budgetBytes / MiB).toFixed(1)} MiB budget`]
    };
}
