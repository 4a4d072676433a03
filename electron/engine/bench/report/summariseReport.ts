/** Derived tables of a benchmark report: speed-ups against baselines and prediction errors. Pure functions. */
import {isContended, otherProgramsBusy} from "../../profiler/cpuContention.js";
import {absolutePercentError, median} from "../stats.js";
import type {BaselineName, BenchPoint, BenchReport, BenchRun, ErrorStat, PointKind, SpeedupCell} from "../../../contract/bench.js";

/**
 * "measured while other programs kept 1.2 of 2 CPU cores busy" for a run whose points other programs slowed
 * (BenchRun.cpuContention, at the run's thread count), else `null`.
 */
export function busyMachineNote(run: BenchRun): string | null {
    const contention = run.cpuContention;
    if (contention == null || !isContended(contention)) return null;
    return `measured while ${otherProgramsBusy(contention)}`;
}

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

/**
 * How often the measured median fell within the range predicted for it, per variant (points with a range only): the
 * check that ranges mean what they say (the goal: at least 80% of cells).
 */
export function rangeCoverage(report: BenchReport): {variant: string; held: number; cells: number}[] {
    const byVariant = new Map<string, {held: number; cells: number}>();
    for (const run of okRuns(report)) {
        const entry = byVariant.get(run.variant.label) ?? {held: 0, cells: 0};
        for (const point of run.points) {
            const range = point.predictedRangeMs;
            if (range == null || !(point.medianMs > 0)) continue;
            entry.cells++;
            if (point.medianMs >= range.lowMs && point.medianMs <= range.highMs) entry.held++;
        }
        byVariant.set(run.variant.label, entry);
    }
    return [...byVariant].filter(([, entry]) => entry.cells > 0).map(([variant, entry]) => ({variant, ...entry}));
}

/** One cell of the "vs stock llama.cpp" table: our tokens/s ÷ stock llama-bench's on the same flags (1 = parity). */
export type StockRatioCell = {
    readonly budget: string;
    readonly variant: string;
    readonly kind: PointKind;
    readonly tokens: number;
    readonly ratio: number;
    readonly tokensPerSec: number;
    readonly stockTokensPerSec: number;
};

/** Every measured point that stock llama-bench also measured (benchmarks run with `--llama-bench`). */
export function stockRatios(report: BenchReport): StockRatioCell[] {
    return okRuns(report).flatMap((run) => run.points.flatMap((p) => p.stockTokensPerSec == null || p.stockTokensPerSec <= 0 ? [] : [{
        budget: run.budget, variant: run.variant.label, kind: p.kind, tokens: p.tokens,
        ratio: p.tokensPerSec / p.stockTokensPerSec, tokensPerSec: p.tokensPerSec, stockTokensPerSec: p.stockTokensPerSec
    }]));
}

/** Variant labels in the order of the settings (then any others seen). */
export function variantOrder(report: BenchReport): string[] {
    const labels = report.settings.variants.map((v) => v.label);
    for (const run of report.runs) if (!labels.includes(run.variant.label)) labels.push(run.variant.label);
    return labels;
}

/** Issue 5's targets for `optimal`, per budget (`null`: the cells it needs were not measured). */
export type TargetCheck = {
    readonly budget: string;
    /** TTFT speed-up over `layers` at the 64-token prompt (target ≥ 4×); falls back to the shortest prompt. */
    readonly ttftShortVsLayers: number | null;
    readonly shortPrompt: number | null;
    /** Median TPOT speed-up over `layers` across generation lengths (target ≥ 1.1×). */
    readonly tpotVsLayers: number | null;
    /** Worst speed-up over the best hand-tuned baseline across every cell (target ≥ 1, never slower). */
    readonly worstVsBestTuned: number | null;
    /** TTFT speed-up over the best hand-tuned baseline at the longest prompt (target ≥ 1.3×). */
    readonly ttftLongVsBestTuned: number | null;
    readonly longPrompt: number | null;
    /** Median measured TPOT over the decode floor (target ≤ 1.5). */
    readonly tpotOverFloor: number | null;
};

/** Checks `optimal` against its targets (reportHtml.ts's targetTable says what each means), per budget. */
export function targetChecks(report: BenchReport, variant = "optimal"): TargetCheck[] {
    const cells = speedups(report).filter((c) => c.variant === variant);
    const prompts = report.settings.prompts;
    const shortPrompt = prompts.includes(64) ? 64 : prompts[0] ?? null;
    const longPrompt = prompts.at(-1) ?? null;
    const find = (budget: string, baseline: BaselineName, kind: PointKind, tokens: number | null) =>
        cells.find((c) => c.budget === budget && c.baseline === baseline && c.kind === kind && c.tokens === tokens)?.speedup ?? null;
    return report.settings.budgets.map((budget) => {
        const tpot = cells.filter((c) => c.budget === budget && c.baseline === "layers" && c.kind === "tpot").map((c) => c.speedup);
        const tuned = cells.filter((c) => c.budget === budget && c.baseline === "best-tuned").map((c) => c.speedup);
        const run = okRuns(report).find((r) => r.budget === budget && r.variant.label === variant);
        const overFloor = run?.tpotFloorMs == null ? [] : run.points.filter((p) => p.kind === "tpot").map((p) => p.medianMs / run.tpotFloorMs!);
        return {
            budget, shortPrompt, longPrompt,
            ttftShortVsLayers: find(budget, "layers", "ttft", shortPrompt),
            tpotVsLayers: tpot.length > 0 ? median(tpot) : null,
            worstVsBestTuned: tuned.length > 0 ? Math.min(...tuned) : null,
            ttftLongVsBestTuned: find(budget, "best-tuned", "ttft", longPrompt),
            tpotOverFloor: overFloor.length > 0 ? median(overFloor) : null
        };
    });
}
