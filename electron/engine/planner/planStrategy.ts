/** Runs one named strategy (optimal also runs the baselines it must not lose to). */
import {cpuStrategy} from "./strategies/cpuStrategy.js";
import {fitStrategy} from "./strategies/fitStrategy.js";
import {layersStrategy} from "./strategies/layersStrategy.js";
import {oatoStrategy} from "./strategies/oatoStrategy.js";
import {optimalStrategy} from "./strategies/optimalStrategy.js";
import type {StrategyInputs, StrategyResult} from "./strategies/StrategyResult.js";
import type {StrategyName} from "../../contract/strategies.js";

/** The strategies, in the order the benchmark shows them. */
export {STRATEGY_NAMES} from "../../contract/strategies.js";

/** Plans with `strategy`. `optimal` evaluates the `layers`, `oato` and (when a fit function is given) `fit` plans too. */
export async function planStrategy(strategy: StrategyName, inputs: StrategyInputs): Promise<StrategyResult> {
    switch (strategy) {
        case "cpu": return cpuStrategy(inputs);
        case "layers": return layersStrategy(inputs);
        case "fit": return fitStrategy(inputs);
        case "oato": return oatoStrategy(inputs);
        case "optimal": {
            const baselines = [await layersStrategy(inputs), await oatoStrategy(inputs)];
            if (inputs.fit != null) baselines.push(await fitStrategy(inputs));
            return optimalStrategy(inputs, baselines.filter((b) => b.fits));
        }
    }
}
