import type {BenchReport} from "../../../../../../electron/contract/ipc";
import {strategyStyle} from "../../../../../../electron/contract/strategyStyles";
import type {BenchSeries} from "./BenchChart";

/** x (token counts of `kind`) and one series per finished run: the run's median ms at each x. */
export function chartSeries(report: BenchReport, kind: "ttft" | "tpot"): {x: number[]; series: BenchSeries[]} {
    const x = kind === "ttft" ? [...report.settings.prompts] : [...report.settings.gens];
    const budgets = report.settings.budgets;
    const series = report.runs.filter((run) => run.points.some((point) => point.kind === kind)).map((run) => ({
        label: budgets.length > 1 ? `${run.variant.label} @ ${run.budget}` : run.variant.label,
        color: strategyStyle(run.variant.label).color,
        dashed: budgets.indexOf(run.budget) > 0,
        values: x.map((tokens) => run.points.find((point) => point.kind === kind && point.tokens === tokens)?.medianMs ?? null)
    }));
    return {x: series.length === 0 ? [] : x, series};
}
