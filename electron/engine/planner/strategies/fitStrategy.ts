import {withOverrides} from "../resolvePlacement.js";
import {finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";
import {isHostBufferType} from "../../../contract/memory.js";

/** Tries of `common_fit_params` with a tighter target when its plan overshoots the budget. */
const MAX_FIT_TRIES = 4;
const MiB = 1024 * 1024;

/**
 * llama.cpp's own automatic fitting (`common_fit_params`, `--fit`) driven to the same budget: the margin it must leave
 * on the GPU is free memory − budget. Its `-ngl` and overflow overrides are used as llama.cpp returns them. llama.cpp
 * sizes compute buffers its own way, so when the result needs more than the budget (as llama.cpp's no-alloc
 * simulation measures it), the target is lowered by the overshoot and llama.cpp asked again — what a user tuning
 * `--fit` by hand to a memory limit would do.
 */
export async function fitStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    if (inputs.fit == null) throw new Error("the fit strategy needs llama.cpp's fitting function");
    const settings = {...inputs.settings, useMmap: true};
    let target = inputs.budgetBytes;
    let result: StrategyResult | null = null;
    const notes: string[] = [];
    for (let attempt = 0; attempt < MAX_FIT_TRIES && target > 0; attempt++) {
        const fitted = await inputs.fit({budgetBytes: target, settings});
        // a negative -ngl is llama.cpp's "every layer" (llama_model::n_gpu_layers: n_layer + 1): common_fit_params leaves
        // the default -1 when the whole model fits
        const gpuLayers = fitted.gpuLayers < 0 ? inputs.cost.model.layerCount + 1 : fitted.gpuLayers;
        const resolved = withOverrides(inputs.cost.model, gpuLayers, fitted.overrides, inputs.isHostBufferType ?? ((name) => isHostBufferType(name)));
        notes.push(`common_fit_params (target ${(target / MiB).toFixed(1)} MiB): ${fitted.status}, -ngl ${fitted.gpuLayers < 0 ? `${fitted.gpuLayers} (every layer)` : gpuLayers}, ` +
            `${fitted.overrides.length} overrides`);
        result = finishPlan(inputs, "fit", resolved, settings, [...notes],
            fitted.overrides.map(([pattern, bufferType]) => ({pattern, bufferType})));
        if (result.fits)
            return result;
        const overshoot = result.prediction.vram.total - inputs.budgetBytes;
        target -= Math.max(overshoot, MiB);
    }
    if (result == null)
        throw new Error("the budget is too small for llama.cpp's fitting to start");
    return result;
}
