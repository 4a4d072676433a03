/**
 * `tensorwise bench <gguf> --budgets 25,50,75% --prompts … --gens … --strategies … --repeats N [--hand-tuned] [--out dir]`:
 * benchmarks placement strategies side by side and writes report.json / report.csv / report.html after every run.
 * Ctrl-C / SIGTERM stops after the current measurement and keeps what finished; a second signal exits at once.
 */
import path from "node:path";
import type {Budget} from "../../contract/ipc.js";
import {DEFAULT_TUNED_BATCH_SIZES, runBench} from "../../engine/bench/runBench.js";
import {REPORT_FILES} from "../../engine/bench/report/BenchResultStore.js";
import {predictionErrors, speedups} from "../../engine/bench/report/summariseReport.js";
import type {BenchVariant} from "../../engine/bench/types.js";
import {getEngineLlama, type EngineGpu} from "../../engine/native/getEngineLlama.js";
import {STRATEGY_NAMES} from "../../engine/planner/planStrategy.js";
import type {StrategyName} from "../../engine/planner/strategies/StrategyResult.js";
import type {CliIo} from "../CliIo.js";
import {UsageError} from "../UsageError.js";

/** Raw option values as `parseArgs` returns them. */
export type BenchCommandValues = Record<string, string | boolean | undefined>;

/** The `parseArgs` options of the command (for the CLI's commands table). */
export const BENCH_OPTIONS = {
    gpu: {type: "string", default: "auto"}, json: {type: "boolean", default: false},
    budgets: {type: "string", default: "25,50,75%"}, prompts: {type: "string", default: "32,64,128,256,512,2048"},
    gens: {type: "string", default: "32,64,128"}, strategies: {type: "string", default: STRATEGY_NAMES.join(",")},
    repeats: {type: "string", default: "3"}, out: {type: "string"}, threads: {type: "string"}, context: {type: "string"},
    batch: {type: "string"}, "hand-tuned": {type: "boolean", default: false}, "tuned-batches": {type: "string"},
    "tpot-prompt": {type: "string"}, warmup: {type: "string"}
} as const;

export const BENCH_USAGE = "tensorwise bench <model.gguf> [--budgets 25,50,75%] [--prompts 32,64,…] [--gens 32,64,128] " +
    "[--strategies cpu,layers,fit,oato,optimal] [--hand-tuned] [--tuned-batches 512,2048] [--repeats N] [--out dir] " +
    "[--gpu auto|cpu|cuda|vulkan] [--threads N] [--context N] [--batch N] [--tpot-prompt N] [--warmup N] [--json]";

function intList(text: string, name: string, min: number): number[] {
    const values = text.split(",").map((item) => item.trim()).filter((item) => item !== "").map(Number);
    if (values.length === 0 || values.some((v) => !Number.isSafeInteger(v) || v < min))
        throw new UsageError(`--${name} must be a comma-separated list of integers ≥ ${min} (got "${text}")`);
    return [...new Set(values)].sort((a, b) => a - b);
}

function optionalInt(value: string | boolean | undefined, name: string, min: number): number | undefined {
    if (value == null) return undefined;
    const number = Number(value);
    if (!Number.isSafeInteger(number) || number < min) throw new UsageError(`--${name} must be an integer ≥ ${min} (got "${String(value)}")`);
    return number;
}

/**
 * `"25,50,75%"` (a trailing `%` applies to the whole list), `"25%,50%"`, or MiB: `"2048,4096"`.
 * Returns each budget with its label.
 */
export function parseBudgetList(text: string): {label: string; budget: Budget}[] {
    const items = text.split(",").map((item) => item.trim()).filter((item) => item !== "");
    const allPercent = items.at(-1)?.endsWith("%") === true;
    if (items.length === 0) throw new UsageError("--budgets is empty");
    return items.map((item) => {
        const number = Number(item.replace(/%$/, "").replace(/MiB$/i, ""));
        if (!Number.isFinite(number) || number <= 0) throw new UsageError(`--budgets: "${item}" is not a size in MiB or a percentage`);
        if (item.endsWith("%") || allPercent) {
            if (number > 100) throw new UsageError(`--budgets: ${item} is over 100%`);
            return {label: `${number}%`, budget: {kind: "percent", percent: number}};
        }
        return {label: `${number}MiB`, budget: {kind: "mib", mib: number}};
    });
}

/** Strategy names, plus `<layers|fit>-tuned`; `--hand-tuned` adds the tuned twin of layers and fit. */
export function parseVariants(text: string, handTuned: boolean): BenchVariant[] {
    const variants: BenchVariant[] = [];
    const add = (label: string) => {
        const tuned = label.endsWith("-tuned");
        const strategy = tuned ? label.slice(0, -"-tuned".length) : label;
        if (!(STRATEGY_NAMES as readonly string[]).includes(strategy) || (tuned && strategy !== "layers" && strategy !== "fit"))
            throw new UsageError(`--strategies: unknown "${label}" (use ${STRATEGY_NAMES.join(", ")}, layers-tuned, fit-tuned)`);
        if (!variants.some((v) => v.label === label)) variants.push({label, strategy: strategy as StrategyName, handTuned: tuned});
    };
    for (const label of text.split(",").map((s) => s.trim()).filter((s) => s !== "")) add(label);
    if (handTuned) for (const base of ["layers", "fit"]) if (variants.some((v) => v.label === base)) add(`${base}-tuned`);
    if (variants.length === 0) throw new UsageError("--strategies is empty");
    return variants;
}

function parseGpu(value: string | boolean | undefined): EngineGpu {
    const gpu = String(value ?? "auto");
    if (gpu === "auto" || gpu === "cpu" || gpu === "cuda" || gpu === "vulkan" || gpu === "metal") return gpu;
    throw new UsageError(`--gpu must be auto, cpu, cuda, vulkan or metal (got "${gpu}")`);
}

function defaultOutDir(): string {
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
    return path.resolve(`tensorwise-bench-${stamp}`);
}

/** Runs the command; exit code 0 when every run finished, 130 when interrupted, 1 when every run failed. */
export async function benchCommand(io: CliIo, modelPath: string, values: BenchCommandValues): Promise<number> {
    const gens = intList(String(values.gens), "gens", 2);
    const prompts = intList(String(values.prompts), "prompts", 1);
    const budgets = parseBudgetList(String(values.budgets));
    const variants = parseVariants(String(values.strategies), values["hand-tuned"] === true);
    const repeats = optionalInt(values.repeats, "repeats", 1) ?? 3;
    const threads = optionalInt(values.threads, "threads", 1);
    const outDir = path.resolve(typeof values.out === "string" ? values.out : defaultOutDir());
    const json = values.json === true;

    const controller = new AbortController();
    let signals = 0;
    const onSignal = (name: NodeJS.Signals) => {
        if (++signals > 1) process.exit(130);
        io.err(`\n${name}: stopping after the current measurement (results so far are kept; again to quit now)`);
        controller.abort();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    const engine = await getEngineLlama({gpu: parseGpu(values.gpu), maxThreads: threads});
    try {
        const report = await runBench(engine, {
            modelPath, budgets, prompts, gens, variants, repeats, outDir, threads,
            contextSize: optionalInt(values.context, "context", 64), batchSize: optionalInt(values.batch, "batch", 1),
            tunedBatchSizes: values["tuned-batches"] == null ? DEFAULT_TUNED_BATCH_SIZES : intList(String(values["tuned-batches"]), "tuned-batches", 1),
            tpotPromptTokens: optionalInt(values["tpot-prompt"], "tpot-prompt", 1), warmupTokens: optionalInt(values.warmup, "warmup", 1),
            signal: controller.signal, onProgress: (m) => io.err(m)
        });
        const files = Object.fromEntries(Object.entries(REPORT_FILES).map(([kind, name]) => [kind, path.join(outDir, name)]));
        if (json) {
            io.out(JSON.stringify({files, interrupted: report.interrupted, runs: report.runs.length, plannedRuns: report.plannedRuns,
                errors: predictionErrors(report)}, null, 2));
        } else {
            for (const run of report.runs) {
                const cells = run.points.map((p) => `${p.kind === "ttft" ? "pp" : "tg"}${p.tokens} ${p.tokensPerSec.toFixed(1)} t/s`).join(", ");
                io.out(`${run.budget.padEnd(7)} ${run.variant.label.padEnd(13)} ${run.status === "ok" ? cells : `${run.status}: ${run.error}`}`);
            }
            const vsLayers = speedups(report, ["layers"]).filter((c) => c.variant === "optimal");
            if (vsLayers.length > 0)
                io.out(`optimal vs layers: ${vsLayers.map((c) => `${c.budget} ${c.kind === "ttft" ? "pp" : "tg"}${c.tokens} ${c.speedup.toFixed(2)}×`).join(", ")}`);
            for (const e of predictionErrors(report))
                io.out(`prediction error ${e.variant}: TTFT ${e.ttft?.toFixed(1) ?? "–"}%, TPOT ${e.tpot?.toFixed(1) ?? "–"}% (median abs.)`);
            io.out(`wrote ${Object.values(files).join(", ")}`);
        }
        if (report.interrupted) return 130;
        return report.runs.length > 0 && report.runs.every((r) => r.status === "failed") ? 1 : 0;
    } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        await engine.llama.dispose();
    }
}
