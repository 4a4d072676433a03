import {costContext, vramNeed} from "../costModel.js";
import {layerSplit} from "../resolvePlacement.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

/**
 * llama.cpp's default: whole layers from the end (`-ngl N`, the largest N whose weights + KV + scratch fit the budget),
 * mmap on (so host layers are pageable memory).
 */
export async function layersStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    const {model} = inputs.cost;
    const settings = {...inputs.settings, useMmap: true};
    const cx = costContext(inputs.cost, settings, inputs.workload);
    let best = 0;
    for (let n = model.layerCount + 1; n >= 1 && inputs.cost.gpuDevice != null; n--) {
        if (vramNeed(cx, layerSplit(model, n)).total <= inputs.budgetBytes) {
            best = n;
            break;
        }
    }
    return finishPlan(inputs, "layers", layerSplit(model, best), settings, [`-ngl ${best}`]);
}
