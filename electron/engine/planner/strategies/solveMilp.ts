/** Thin typed wrapper over HiGHS (compiled to wasm, npm `highs`) for CPLEX-LP-format models. */
import {createRequire} from "node:module";

type HighsColumn = {Primal: number};
type HighsSolution = {Status: string; ObjectiveValue: number; Columns: Record<string, HighsColumn>};
type Highs = {solve(problem: string, options?: Record<string, unknown>): HighsSolution};

let instance: Promise<Highs> | null = null;

function loadHighs(): Promise<Highs> {
    if (instance == null) {
        const require = createRequire(import.meta.url);
        const loader = require("highs") as (settings?: object) => Promise<Highs>;
        instance = loader();
    }
    return instance;
}

/** A solved model: the column values, and whether HiGHS proved them optimal (else the best found in the time limit). */
export type MilpSolution = {readonly objective: number; readonly values: Map<string, number>; readonly optimal: boolean};

/** How to solve: the time limit, and an objective no worse than a solution already known (prunes the search; default none). */
export type MilpOptions = {readonly timeLimitSeconds?: number; readonly objectiveBound?: number};

/**
 * Solves an LP-format model exactly (mip_rel_gap 0) within the time limit (default 20 s). Returns column values —
 * `optimal` false when the limit stopped the search with a feasible solution in hand — or `null` when it is
 * infeasible, or nothing feasible (better than `objectiveBound`) was found in time.
 */
export async function solveMilp(lp: string, options: MilpOptions = {}): Promise<MilpSolution | null> {
    const highs = await loadHighs();
    const solution = highs.solve(lp, {mip_rel_gap: 0, time_limit: options.timeLimitSeconds ?? 20, output_flag: false,
        ...(options.objectiveBound != null ? {objective_bound: options.objectiveBound} : {})});
    const optimal = solution.Status === "Optimal";
    const values = new Map(Object.entries(solution.Columns ?? {}).map(([name, c]) => [name, c.Primal]));
    // a search stopped by its time limit still holds its incumbent when it found one (the primal values of a
    // feasible point); without one HiGHS leaves them empty or NaN
    const feasible = optimal || (solution.Status === "Time limit reached" && values.size > 0 && [...values.values()].every(Number.isFinite)
        && Number.isFinite(solution.ObjectiveValue) && Math.abs(solution.ObjectiveValue) < 1e29);
    return feasible ? {objective: solution.ObjectiveValue, values, optimal} : null;
}
