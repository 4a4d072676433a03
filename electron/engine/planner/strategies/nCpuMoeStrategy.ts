import {costContext, predict} from "../costModel.js";
import {perTensor} from "../resolvePlacement.js";
import {expertTensorNames, noGpu, notMoe} from "./cpuMoeStrategy.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

/**
 * llama.cpp's `--n-cpu-moe N` with every layer offloaded and mmap off, tuned the way a user tunes it: the expert
 * weights of the first N layers in host memory (source: `--n-cpu-moe` in common/arg.cpp, llm_add_n_cpu_ffn_overrides
 * in common/common.h: one `blk\.i\.ffn_(up|down|gate|gate_up)_(ch|)exps` override per layer i < N), everything else
 * on the GPU. Of the N whose plan fits the budget, the one predicted fastest (in practice the smallest that fits).
 */
export async function nCpuMoeStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    const {model} = inputs.cost;
    if (expertTensorNames(model).size === 0) return notMoe(inputs, "n-cpu-moe");
    if (inputs.cost.gpuDevice == null) return noGpu(inputs, "n-cpu-moe");
    const settings = {...inputs.settings, useMmap: false};
    const cx = costContext(inputs.cost, settings, inputs.workload);
    let best: {n: number; ms: number} | null = null;
    for (let n = 0; n <= model.layerCount; n++) {
        const p = predict(cx, perTensor(model, expertTensorNames(model, n)));
        if (p.vram.total <= inputs.budgetBytes && (best == null || p.requestMs < best.ms)) best = {n, ms: p.requestMs};
    }
    const n = best?.n ?? model.layerCount;
    const plan = finishPlan(inputs, "n-cpu-moe", perTensor(model, expertTensorNames(model, n)), settings,
        [`--n-cpu-moe ${n} -ngl ${model.layerCount + 1}` + (best == null ? ": no N fits the budget" : "")]);
    return plan;
}
