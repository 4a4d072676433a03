/** Turns a `bench.start` request (already checked by checkRequest.ts) into the engine's benchmark grid. */
import type {BenchStartRequest} from "../../contract/bench.js";
import type {FixedBudget} from "../../contract/settings.js";
import {STRATEGY_NAMES} from "../../contract/strategies.js";
import type {BenchVariant} from "../../contract/bench.js";
import type {EngineBenchRequest} from "../../contract/engineProtocol.js";

/** `"50%"` / `"2048MiB"`: the labels the CLI uses, so reports from both read the same. */
export function budgetLabel(budget: FixedBudget): string {
    return budget.kind === "percent" ? `${budget.percent}%` : `${budget.mib}MiB`;
}

/** Sorted, without repeats. */
function uniqueSorted(values: readonly number[]): number[] {
    return [...new Set(values)].sort((a, b) => a - b);
}

/** One entry per distinct budget label, in the order given. */
function budgets(values: readonly FixedBudget[]): EngineBenchRequest["budgets"] {
    const seen = new Map<string, EngineBenchRequest["budgets"][number]>();
    for (const budget of values)
        seen.set(budgetLabel(budget), {label: budgetLabel(budget), budget});
    return [...seen.values()];
}

/** The chosen strategies in benchmark order, plus the tuned twins of layers / fit when `handTuned`. */
function variants(strategies: BenchStartRequest["strategies"], handTuned: boolean): BenchVariant[] {
    const chosen = STRATEGY_NAMES.filter((strategy) => strategies.includes(strategy));
    const result: BenchVariant[] = chosen.map((strategy) => ({label: strategy, strategy, handTuned: false}));
    if (handTuned)
        for (const base of ["layers", "fit"] as const)
            if (chosen.includes(base))
                result.push({label: `${base}-tuned`, strategy: base, handTuned: true});
    return result;
}

/** The engine request for `request`, less the model path and output folder the host fills in. */
export function benchGrid(request: BenchStartRequest): Omit<EngineBenchRequest, "path" | "outDir"> & {path: string | null} {
    return {
        benchId: request.benchId,
        path: request.path ?? null,
        budgets: budgets(request.budgets),
        prompts: uniqueSorted(request.promptLengths),
        gens: uniqueSorted(request.genLengths),
        variants: variants(request.strategies, request.handTuned === true),
        repeats: request.repeats
    };
}
