import {costContext, vramNeed} from "../costModel.js";
import {layerSplit} from "../resolvePlacement.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

/**
 * llama.cpp's default: whole layers from the end (`-ngl N`, the largest N whose weights + KV + scratch fit the budget),
 * mmap on (so host layers are pageable memory). When not even `-ngl 0` fits — llama.cpp reserves a compute buffer on
 * the GPU for the prompt ops it offloads — the same search with op offload off (`--no-op-offload`, which a user can
 * type too), unless the client chose op offload.
 */
export async function layersStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    const {model} = inputs.cost;
    const base = {...inputs.settings, useMmap: true};
    let last: StrategyResult | null = null;
    for (const opOffload of inputs.chosen?.opOffload != null ? [inputs.chosen.opOffload] : [true, false]) {
        const settings = {...base, opOffload};
        const cx = costContext(inputs.cost, settings, inputs.workload);
        let best = 0;
        for (let n = model.layerCount + 1; n >= 1 && inputs.cost.gpuDevice != null; n--) {
            if (vramNeed(cx, layerSplit(model, n)).total <= inputs.budgetBytes) {
                best = n;
                break;
            }
        }
        last = finishPlan(inputs, "layers", layerSplit(model, best), settings, [`-ngl ${best}${opOffload ? "" : " --no-op-offload"}`]);
        if (last.fits) return last;
    }
    return last!;
}
