import {perTensor} from "../resolvePlacement.js";
import {cpuStrategy} from "./cpuStrategy.js";
import type {PlannerModel} from "../types.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

/** Expert weights (`ffn_*_exps`) of the layers below `layers` (all layers when omitted). */
export function expertTensorNames(model: PlannerModel, layers = Infinity): Set<string> {
    return new Set(model.tensors.filter((t) => t.experts != null && t.layer != null && t.layer < layers).map((t) => t.name));
}

/** Without a GPU there is nothing to place: llama.cpp runs the model on the CPU (-ngl 0), so that is the plan. */
export async function noGpu(inputs: StrategyInputs, strategy: "cpu-moe" | "n-cpu-moe"): Promise<StrategyResult> {
    const cpu = await cpuStrategy(inputs);
    return {...cpu, strategy, notes: ["no GPU: CPU-only (-ngl 0)", ...cpu.notes]};
}

/** A plan for a model without expert weights, which a MoE baseline cannot place. */
export function notMoe(inputs: StrategyInputs, strategy: "cpu-moe" | "n-cpu-moe"): StrategyResult {
    const plan = finishPlan(inputs, strategy, perTensor(inputs.cost.model, new Set()), {...inputs.settings, useMmap: false}, []);
    return {...plan, fits: false, reason: "the model has no expert weights (it is not a mixture-of-experts model)"};
}

/**
 * llama.cpp's `--cpu-moe` with every layer offloaded: all expert weights in host memory, everything else (attention,
 * router, shared experts, KV cache) on the GPU; mmap off, so host experts sit in the GPU's pinned host buffer
 * (source: `--cpu-moe` in common/arg.cpp adds llm_ffn_exps_cpu_override(), LLM_FFN_EXPS_REGEX, common/common.h).
 */
export async function cpuMoeStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    const {model} = inputs.cost;
    const experts = expertTensorNames(model);
    if (experts.size === 0) return notMoe(inputs, "cpu-moe");
    if (inputs.cost.gpuDevice == null) return noGpu(inputs, "cpu-moe");
    const settings = {...inputs.settings, useMmap: false};
    return finishPlan(inputs, "cpu-moe", perTensor(model, experts), settings, [`--cpu-moe -ngl ${model.layerCount + 1}: ${experts.size} expert weights in host memory`]);
}
