/** Checks a `bench.start` argument at the trust boundary and turns it into the engine's benchmark grid. */
import type {BenchStartRequest, BenchStrategy, Budget} from "../../contract/ipc.js";
import type {BenchVariant} from "../../engine/bench/types.js";
import type {EngineBenchRequest} from "../../engine/service/engineProtocol.js";
import {HostError} from "../HostError.js";
import {requireObject, requireString} from "../validateArg.js";

const STRATEGIES: readonly BenchStrategy[] = ["cpu", "layers", "fit", "oato", "optimal"];
/** Upper bounds that keep a run from the app finite (the CLI has none). */
const MAX_TOKENS = 32_768;
const MAX_REPEATS = 20;
const MAX_LIST = 16;

function intList(value: unknown, key: string, min: number): number[] {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST)
        throw new HostError("bad-request", `"${key}" must be a list of 1 to ${MAX_LIST} integers`);
    for (const item of value)
        if (typeof item !== "number" || !Number.isSafeInteger(item) || item < min || item > MAX_TOKENS)
            throw new HostError("bad-request", `"${key}": ${String(item)} is not an integer from ${min} to ${MAX_TOKENS}`);
    return [...new Set(value as number[])].sort((a, b) => a - b);
}

/** `"50%"` / `"2048MiB"`: the labels the CLI uses, so reports from both read the same. */
export function budgetLabel(budget: Exclude<Budget, {kind: "auto"}>): string {
    return budget.kind === "percent" ? `${budget.percent}%` : `${budget.mib}MiB`;
}

function budgets(value: unknown): EngineBenchRequest["budgets"] {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_LIST)
        throw new HostError("bad-request", `"budgets" must be a list of 1 to ${MAX_LIST} budgets`);
    const seen = new Map<string, EngineBenchRequest["budgets"][number]>();
    for (const item of value as unknown[]) {
        const budget = item as Budget | null;
        const valid = budget != null && typeof budget === "object" && (
            (budget.kind === "percent" && typeof budget.percent === "number" && budget.percent > 0 && budget.percent <= 100) ||
            (budget.kind === "mib" && typeof budget.mib === "number" && budget.mib > 0 && Number.isFinite(budget.mib)));
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
    if (typeof repeats !== "number" || !Number.isSafeInteger(repeats) || repeats < 1 || repeats > MAX_REPEATS)
        throw new HostError("bad-request", `"repeats" must be an integer from 1 to ${MAX_REPEATS}`);
    return {
        benchId: requireString(request, "benchId"),
        path: request.path == null ? null : requireString(request, "path"),
        budgets: budgets(request.budgets),
        prompts: intList(request.promptLengths, "promptLengths", 1),
        gens: intList(request.genLengths, "genLengths", 2),
        variants: variants(request.strategies, request.handTuned === true),
        repeats
    };
}
