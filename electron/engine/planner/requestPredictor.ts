/** The planner's prediction for any one request on a planned model: a chat reply is priced by its own token counts. */
import {costContext, predict, type CostInputs} from "./costModel.js";
import type {StrategyResult} from "./strategies/StrategyResult.js";

/** Predicted TTFT and TPOT of one request. */
export type RequestPrediction = {readonly ttftMs: number; readonly tpotMs: number};

/** Prices one request of `promptTokens` evaluated prompt tokens and `genTokens` generated ones. */
export type RequestPredictor = (promptTokens: number, genTokens: number) => RequestPrediction;

/**
 * A predictor for `plan` as it was loaded (its placement and runtime settings) on the machine `cost` describes: the
 * same cost model that chose the plan, at the request's own prompt and reply lengths instead of the planning workload.
 */
export function requestPredictor(cost: CostInputs, plan: Pick<StrategyResult, "resolved" | "settings">): RequestPredictor {
    return (promptTokens, genTokens) => {
        const workload = {promptTokens: Math.max(1, Math.round(promptTokens)), genTokens: Math.max(1, Math.round(genTokens))};
        const {ttftMs, tpotMs} = predict(costContext(cost, plan.settings, workload), plan.resolved);
        return {ttftMs, tpotMs};
    };
}
