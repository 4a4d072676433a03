import {withOverrides} from "../resolvePlacement.js";
import {defaultIsHost, finishPlan, type StrategyInputs, type StrategyResult} from "./StrategyResult.js";

/**
 * llama.cpp's own automatic fitting (`common_fit_params`, `--fit`) driven to the same budget: the margin it must leave
 * on the GPU is free memory − budget. Its `-ngl` and overflow overrides are used as llama.cpp returns them.
 */
export async function fitStrategy(inputs: StrategyInputs): Promise<StrategyResult> {
    if (inputs.fit == null) throw new Error("the fit strategy needs llama.cpp's fitting function");
    const settings = {...inputs.settings, useMmap: true};
    const fitted = await inputs.fit({budgetBytes: inputs.budgetBytes, settings});
    const resolved = withOverrides(inputs.cost.model, fitted.gpuLayers, fitted.overrides, inputs.isHostBufferType ?? defaultIsHost);
    return finishPlan(inputs, "fit", resolved, settings, [`common_fit_params: ${fitted.status}, -ngl ${fitted.gpuLayers}, ${fitted.overrides.length} overrides`],
        fitted.overrides.map(([pattern, bufferType]) => ({pattern, bufferType})));
}
