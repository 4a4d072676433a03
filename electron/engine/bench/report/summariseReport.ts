/** Derived tables of a benchmark report: speed-ups against baselines and prediction errors. Pure functions. */
import {absolutePercentError, median} from "../stats.js";
import type {BenchPoint, BenchReport, BenchRun, PointKind} from "../types.js";

/** A baseline the speed-up table compares against. `best-tuned` = per point the faster of layers-tuned / fit-tuned. */
export type BaselineName = "layers" | "fit" | "best-tuned";

/** One cell of the speed-up table: baseline time / variant time (> 1: the variant is faster). */
export type SpeedupCell = {
    readonly budget: string;
    readonly variant: string;
    readonly baseline: BaselineName;
    readonly kind: PointKind;
    readonly tokens: number;
    readonly speedup: number;
    readonly variantMs: number;
    readonly baselineMs: number;
};

/** Median absolute percentage error of the predictions of one variant. */
export type ErrorStat = {
    readonly variant: string;
    readonly ttft: number | null;
    readonly tpot: number | null;
    readonly all: number | null;
    /** Points with a prediction. */
    readonly points: number;
};

function okRuns(report: BenchReport): BenchRun[] {
    return report.runs.filter((run) => run.status === "ok");
}

function pointOf(run: BenchRun, kind: PointKind, tokens: number): BenchPoint | undefined {
    return run.points.find((p) => p.kind === kind && p.tokens === tokens);
}

/** The baseline's time at a point, or `undefined` when the baseline did not run there. */
function baselineMs(runs: readonly BenchRun[], budget: string, baseline: BaselineName, kind: PointKind, tokens: number): number | undefined {
    const labels = baseline === "best-tuned" ? ["layers-tuned", "fit-tuned"] : [baseline];
    const times = runs
        .filter((run) => run.budget === budget && labels.includes(run.variant.label))
        .map((run) => pointOf(run, kind, tokens)?.medianMs)
        .filter((ms): ms is number => ms != null && ms > 0);
    return times.length === 0 ? undefined : Math.min(...times);
}

/** Speed-up of every variant (baselines included, for the diagonal) over each baseline, per budget and point. */
export function speedups(report: BenchReport, baselines: readonly BaselineName[] = ["layers", "fit", "best-tuned"]): SpeedupCell[] {
    const runs = okRuns(report);
    const cells: SpeedupCell[] = [];
    for (const run of runs)
        for (const point of run.points)
            for (const baseline of baselines) {
                const base = baselineMs(runs, run.budget, baseline, point.kind, point.tokens);
                if (base == null || point.medianMs <= 0) continue;
                cells.push({budget: run.budget, variant: run.variant.label, baseline, kind: point.kind, tokens: point.tokens,
                    speedup: base / point.medianMs, variantMs: point.medianMs, baselineMs: base});
            }
    return cells;
}

/** Median absolute % error of predicted vs measured TTFT and TPOT, per variant, over every budget and point. */
export function predictionErrors(report: BenchReport): ErrorStat[] {
    const byVariant = new Map<string, {ttft: number[]; tpot: number[]}>();
    for (const run of okRuns(report)) {
        const entry = byVariant.get(run.variant.label) ?? {ttft: [], tpot: []};
        for (const point of run.points)
            if (point.predictedMs != null && point.medianMs > 0)
                entry[point.kind].push(absolutePercentError(point.predictedMs, point.medianMs));
        byVariant.set(run.variant.label, entry);
    }
    return [...byVariant].map(([variant, {ttft, tpot}]) => ({
        variant,
        ttft: ttft.length > 0 ? median(ttft) : null,
        tpot: tpot.length > 0 ? median(tpot) : null,
        all: ttft.length + tpot.length > 0 ? median([...ttft, ...tpot]) : null,
        points: ttft.length + tpot.length
    }));
}

/** Variant labels in the order of the settings (then any others seen). */
export function variantOrder(report: BenchReport): string[] {
    const labels = report.settings.variants.map((v) => v.label);
    for (const run of report.runs) if (!labels.includes(run.variant.label)) labels.push(run.variant.label);
    return labels;
}
