import {layerSplit} from "../resolvePlacement.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

/** Everything on the CPU (`-ngl 0`, mmap): the baseline that always fits. */
export async function cpuStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    const settings = {...inputs.settings, useMmap: true};
    return finishPlan({...inputs, cost: {...inputs.cost, gpuDevice: null}}, "cpu", layerSplit(inputs.cost.model, 0), settings, ["-ngl 0"]);
}
