/** Checks a `bench.start` argument at the trust boundary and turns it into the engine's benchmark grid. */
import type {BenchStartRequest, BenchStrategy, Budget} from "../../contract/ipc.js";
import type {BenchVariant} from "../../contract/bench.js";
import type {EngineBenchRequest} from "../../engine/service/engineProtocol.js";
import {STRATEGY_NAMES} from "../../contract/strategies.js";
import {LIMITS, limitMessage, withinLimit} from "../../contract/limits.js";
import {HostError} from "../HostError.js";
import {requireObject, requireString} from "../validateArg.js";

const STRATEGIES: readonly BenchStrategy[] = STRATEGY_NAMES;
function intList(value: unknown, key: string, limit: "benchPromptTokens" | "benchGenTokens"): number[] {
    if (!Array.isArray(value) || !withinLimit("listLength", value.length))
        throw new HostError("bad-request", `"${key}" must be a list of ${LIMITS.listLength.min} to ${LIMITS.listLength.max} integers`);
    for (const item of value as unknown[])
        if (!withinLimit(limit, item))
            throw new HostError("bad-request", `"${key}": ${limitMessage(limit, item)}`);
    return [...new Set(value as number[])].sort((a, b) => a - b);
}

/** `"50%"` / `"2048MiB"`: the labels the CLI uses, so reports from both read the same. */
export function budgetLabel(budget: Exclude<Budget, {kind: "auto"}>): string {
    return budget.kind === "percent" ? `${budget.percent}%` : `${budget.mib}MiB`;
}

function budgets(value: unknown): EngineBenchRequest["budgets"] {
    if (!Array.isArray(value) || !withinLimit("listLength", value.length))
        throw new HostError("bad-request", `"budgets" must be a list of ${LIMITS.listLength.min} to ${LIMITS.listLength.max} budgets`);
    const seen = new Map<string, EngineBenchRequest["budgets"][number]>();
    for (const item of value as unknown[]) {
        const budget = item as Budget | null;
        const valid = budget != null && typeof budget === "object" && (
            (budget.kind === "percent" && withinLimit("budgetPercent", budget.percent)) ||
            (budget.kind === "mib" && withinLimit("budgetMiB", budget.mib)));
        if (!valid)
            throw new HostError("bad-request", "each budget must be {kind: \"percent\", percent: 1…100} or {kind: \"mib\", mib: > 0}");
        const label = budgetLabel(budget);
        seen.set(label, {label, budget});
    }
    return [...seen.values()];
}

function variants(value: unknown, handTuned: boolean): BenchVariant[] {
    if (!Array.isArray(value) || value.length === 0)
        throw new HostError("bad-request", `"strategies" must name at least one of ${STRATEGIES.join(", ")}`);
    const chosen = STRATEGIES.filter((strategy) => value.includes(strategy));
    const unknown = (value as unknown[]).filter((item) => !STRATEGIES.includes(item as BenchStrategy));
    if (unknown.length > 0)
        throw new HostError("bad-request", `unknown strategies: ${unknown.map(String).join(", ")}`);
    const result: BenchVariant[] = chosen.map((strategy) => ({label: strategy, strategy, handTuned: false}));
    if (handTuned)
        for (const base of ["layers", "fit"] as const)
            if (chosen.includes(base))
                result.push({label: `${base}-tuned`, strategy: base, handTuned: true});
    return result;
}

/** The engine request for `arg`, less the model path and output folder the host fills in. */
export function parseBenchStart(arg: BenchStartRequest): Omit<EngineBenchRequest, "path" | "outDir"> & {path: string | null} {
    const request = requireObject(arg);
    const repeats = request.repeats;
    if (!withinLimit("repeats", repeats))
        throw new HostError("bad-request", `"repeats": ${limitMessage("repeats", repeats)}`);
    return {
        benchId: requireString(request, "benchId"),
        path: request.path == null ? null : requireString(request, "path"),
        budgets: budgets(request.budgets),
        prompts: intList(request.promptLengths, "promptLengths", "benchPromptTokens"),
        gens: intList(request.genLengths, "genLengths", "benchGenTokens"),
        variants: variants(request.strategies, request.handTuned === true),
        repeats
    };
}
