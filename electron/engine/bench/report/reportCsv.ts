/** report.csv: one row per measured point (budget × variant × TTFT-at-prompt or TPOT-at-generation). */
import {absolutePercentError} from "../stats.js";
import type {BenchLoad, BenchPoint, BenchReport, BenchRun} from "../../../contract/bench.js";
import {speedups} from "./summariseReport.js";
import type {SpeedupCell} from "../../../contract/bench.js";

/** The columns, in order. */
export const CSV_COLUMNS = [
    "budget", "budget_bytes", "variant", "strategy", "hand_tuned", "status", "kind", "tokens",
    "median_ms", "min_ms", "max_ms", "spread_pct", "repeats", "tokens_per_sec", "predicted_ms", "error_pct",
    "speedup_vs_layers", "speedup_vs_fit", "speedup_vs_best_tuned",
    "batch_size", "gpu_layers", "overrides", "use_mmap", "threads", "context_size",
    "gpu_weights_bytes", "gpu_kv_bytes", "gpu_scratch_bytes", "host_weights_bytes", "host_kv_bytes", "host_scratch_bytes",
    "tpot_floor_ms", "error", "llama_bench", "stock_tokens_per_sec", "vs_stock"
] as const;

/** Quotes a CSV field when it needs it (RFC 4180). */
export function csvField(value: string | number | boolean | null): string {
    if (value == null) return "";
    const text = typeof value === "number" ? (Number.isInteger(value) ? String(value) : value.toFixed(4)) : String(value);
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, "\"\"")}"` : text;
}

function loadFor(run: BenchRun, point: BenchPoint | null): BenchLoad | undefined {
    return run.loads.find((load) => point == null || load.plan.batchSize === point.batchSize) ?? run.loads[0];
}

function row(run: BenchRun, point: BenchPoint | null, cells: readonly SpeedupCell[]): string[] {
    const load = loadFor(run, point);
    const speedup = (baseline: string) => point == null ? null
        : cells.find((c) => c.budget === run.budget && c.variant === run.variant.label && c.baseline === baseline &&
            c.kind === point.kind && c.tokens === point.tokens)?.speedup ?? null;
    const memory = load?.memory;
    const values: (string | number | boolean | null)[] = [
        run.budget, run.budgetBytes, run.variant.label, run.variant.strategy, run.variant.handTuned, run.status,
        point?.kind ?? null, point?.tokens ?? null,
        point?.medianMs ?? null, point?.minMs ?? null, point?.maxMs ?? null, point?.spreadPct ?? null, point?.samplesMs.length ?? null,
        point?.tokensPerSec ?? null, point?.predictedMs ?? null,
        point?.predictedMs != null && point.medianMs > 0 ? absolutePercentError(point.predictedMs, point.medianMs) : null,
        speedup("layers"), speedup("fit"), speedup("best-tuned"),
        point?.batchSize ?? load?.plan.batchSize ?? null, load?.plan.gpuLayers ?? null, load?.plan.overrides.length ?? null,
        load?.plan.useMmap ?? null, load?.plan.threads ?? null, load?.plan.contextSize ?? null,
        memory?.device.weightsBytes ?? null, memory?.device.kvCacheBytes ?? null, memory?.device.scratchBytes ?? null,
        memory?.host.weightsBytes ?? null, memory?.host.kvCacheBytes ?? null, memory?.host.scratchBytes ?? null,
        run.tpotFloorMs, run.error, load?.reproduce.bench ?? null,
        point?.stockTokensPerSec ?? null,
        point?.stockTokensPerSec != null && point.stockTokensPerSec > 0 ? point.tokensPerSec / point.stockTokensPerSec : null
    ];
    return values.map(csvField);
}

/** Renders report.csv (header + one row per point; a run without points gets one row with its status and error). */
export function reportCsv(report: BenchReport): string {
    const cells = speedups(report);
    const lines = [CSV_COLUMNS.join(",")];
    for (const run of report.runs) {
        if (run.points.length === 0) lines.push(row(run, null, cells).join(","));
        for (const point of run.points) lines.push(row(run, point, cells).join(","));
    }
    return lines.join("\n") + "\n";
}
