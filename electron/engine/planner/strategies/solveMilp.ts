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

/** Solves an LP-format model exactly (mip_rel_gap 0). Returns column values, or `null` when infeasible. */
export async function solveMilp(lp: string, timeLimitSeconds = 20): Promise<{objective: number; values: Map<string, number>} | null> {
    const highs = await loadHighs();
    const solution = highs.solve(lp, {mip_rel_gap: 0, time_limit: timeLimitSeconds, output_flag: false});
    if (solution.Status !== "Optimal") return null;
    return {objective: solution.ObjectiveValue, values: new Map(Object.entries(solution.Columns).map(([name, c]) => [name, c.Primal]))};
}
