/** Runs one named strategy (optimal also runs the baselines it must not lose to). */
import {cpuMoeStrategy, expertTensorNames} from "./strategies/cpuMoeStrategy.js";
import {cpuStrategy} from "./strategies/cpuStrategy.js";
import {fitStrategy} from "./strategies/fitStrategy.js";
import {layersStrategy} from "./strategies/layersStrategy.js";
import {nCpuMoeStrategy} from "./strategies/nCpuMoeStrategy.js";
import {oatoStrategy} from "./strategies/oatoStrategy.js";
import {optimalStrategy} from "./strategies/optimalStrategy.js";
import type {StrategyInputs, StrategyResult} from "./strategies/StrategyResult.js";
import type {StrategyName} from "../../contract/strategies.js";

/** The strategies, in the order the benchmark shows them. */
export {STRATEGY_NAMES} from "../../contract/strategies.js";

/**
 * Plans with `strategy`. `optimal` evaluates the `layers`, `oato`, (when a fit function is given) `fit` and, for a
 * mixture-of-experts model, `cpu-moe` and `n-cpu-moe` plans too.
 */
export async function planStrategy(strategy: StrategyName, inputs: StrategyInputs): Promise<StrategyResult> {
    switch (strategy) {
        case "cpu": return cpuStrategy(inputs);
        case "layers": return layersStrategy(inputs);
        case "fit": return fitStrategy(inputs);
        case "cpu-moe": return cpuMoeStrategy(inputs);
        case "n-cpu-moe": return nCpuMoeStrategy(inputs);
        case "oato": return oatoStrategy(inputs);
        case "optimal": {
            const baselines = [await layersStrategy(inputs), await oatoStrategy(inputs)];
            if (inputs.fit != null) baselines.push(await fitStrategy(inputs));
            if (expertTensorNames(inputs.cost.model).size > 0) baselines.push(await cpuMoeStrategy(inputs), await nCpuMoeStrategy(inputs));
            return optimalStrategy(inputs, baselines.filter((b) => b.fits));
        }
    }
}
