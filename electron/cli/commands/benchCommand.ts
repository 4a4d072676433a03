/**
 * `tensorwise bench <gguf> --budgets 25,50,75% --prompts … --gens … --strategies … --repeats N [--hand-tuned] [--out dir]`:
 * benchmarks placement strategies side by side and writes report.json / report.csv / report.html after every run.
 * Ctrl-C / SIGTERM stops after the current measurement and keeps what finished; a second signal exits at once.
 */
import path from "node:path";
import type {Budget} from "../../contract/ipc.js";
import {DEFAULT_TUNED_BATCH_SIZES, runBench} from "../../engine/bench/runBench.js";
import {REPORT_FILES} from "../../contract/bench.js";
import {busyMachineNote, predictionErrors, speedups, stockRatios} from "../../engine/bench/report/summariseReport.js";
import type {BenchVariant} from "../../contract/bench.js";
import {getEngineLlama} from "../../engine/native/getEngineLlama.js";
import {LIMITS} from "../../contract/limits.js";
import {flagNumber, flagNumberList, flagProfileTime, flagThreads, parseBudget, parseGpu, PROFILE_SECONDS_OPTION} from "../flags.js";
import {flagRpc} from "../rpcFlags.js";
import {STRATEGY_NAMES} from "../../engine/planner/planStrategy.js";
import type {StrategyName} from "../../contract/strategies.js";
import {parseLlamaCommand} from "../../engine/llamaArgs/parseLlamaCommand.js";
import {progressLines, type CliIo} from "../CliIo.js";
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
    "tpot-prompt": {type: "string"}, warmup: {type: "string"}, "llama-bench": {type: "boolean", default: false},
    rpc: {type: "string"}, ...PROFILE_SECONDS_OPTION
} as const;

export const BENCH_USAGE = "tensorwise bench <model.gguf> [--budgets 25,50,75%] [--prompts 32,64,…] [--gens 32,64,128] " +
    "[--strategies cpu,layers,fit,cpu-moe,n-cpu-moe,oato,optimal[,custom:\"<a llama.cpp command>\"]] [--hand-tuned] [--tuned-batches 512,2048] [--repeats N] [--out dir] " +
    "[--gpu auto|cpu|cuda|vulkan] [--threads N] [--context N] [--batch N] [--tpot-prompt N] [--warmup N] [--llama-bench] [--rpc host:port,…] [--profile-seconds N] [--json]" +
    " (with more than one GPU or rpc-server device, the K-device plan runs against layers-split and single-gpu too)";

/**
 * `"25,50,75%"` (a trailing `%` applies to the whole list), `"25%,50%"`, or MiB: `"2048,4096"`.
 * Returns each budget with its label.
 */
export function parseBudgetList(text: string): {label: string; budget: Budget}[] {
    const items = text.split(",").map((item) => item.trim()).filter((item) => item !== "");
    const allPercent = items.at(-1)?.endsWith("%") === true;
    if (items.length === 0) throw new UsageError("--budgets is empty");
    if (items.length > LIMITS.listLength.max) throw new UsageError(`--budgets lists more than ${LIMITS.listLength.max} budgets`);
    return items.map((item) => {
        const budget = parseBudget(allPercent && !item.endsWith("%") ? `${item}%` : item, "budgets");
        if (budget.kind === "auto") throw new UsageError("--budgets: auto is not a fixed budget; give MiB or a percentage");
        return {label: budget.kind === "percent" ? `${budget.percent}%` : `${budget.mib}MiB`, budget};
    });
}

/**
 * Strategy names, plus `<layers|fit>-tuned`, then any `custom:<llama.cpp command>` (measured as llama.cpp would load
 * it); `--hand-tuned` adds the tuned twin of layers and fit.
 */
export function parseVariants(text: string, handTuned: boolean): BenchVariant[] {
    const variants: BenchVariant[] = [];
    const add = (label: string) => {
        const tuned = label.endsWith("-tuned");
        const strategy = tuned ? label.slice(0, -"-tuned".length) : label;
        if (!(STRATEGY_NAMES as readonly string[]).includes(strategy) || (tuned && strategy !== "layers" && strategy !== "fit"))
            throw new UsageError(`--strategies: unknown "${label}" (use ${STRATEGY_NAMES.join(", ")}, layers-tuned, fit-tuned)`);
        if (!variants.some((v) => v.label === label)) variants.push({label, strategy: strategy as StrategyName, handTuned: tuned});
    };
    // `custom:<a llama.cpp command>` takes everything up to the next ",custom:" (a command has commas of its own: -ot a,b)
    const [named, ...commands] = text.split(/,?\s*custom:/);
    for (const label of named!.split(",").map((s) => s.trim()).filter((s) => s !== "")) add(label);
    commands.forEach((line, i) => {
        const command = parseLlamaCommand(line);
        if (line.trim() === "") throw new UsageError("--strategies: custom: needs a llama.cpp command (custom:\"-ngl 20 -ot …\")");
        if (command.refused.length > 0)
            throw new UsageError(`--strategies: custom:${line}: ${command.refused.map((note) => `${note.flag}: ${note.why}`).join("; ")}`);
        variants.push({label: i === 0 ? "custom" : `custom-${i + 1}`, strategy: "layers", handTuned: false, llamaCommand: line.trim()});
    });
    if (handTuned) for (const base of ["layers", "fit"]) if (variants.some((v) => v.label === base)) add(`${base}-tuned`);
    if (variants.length === 0) throw new UsageError("--strategies is empty");
    return variants;
}

function defaultOutDir(): string {
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
    return path.resolve(`tensorwise-bench-${stamp}`);
}

/** Runs the command; exit code 0 when every run finished, 130 when interrupted, 1 when every run failed. */
export async function benchCommand(io: CliIo, modelPath: string, values: BenchCommandValues): Promise<number> {
    const gens = flagNumberList(values.gens, "gens", "benchGenTokens");
    const prompts = flagNumberList(values.prompts, "prompts", "benchPromptTokens");
    const budgets = parseBudgetList(String(values.budgets));
    const variants = parseVariants(String(values.strategies), values["hand-tuned"] === true);
    const repeats = flagNumber(values.repeats, "repeats", "repeats") ?? 3;
    const threads = flagThreads(values.threads);
    const contextSize = flagNumber(values.context, "context", "contextSize");
    const batchSize = flagNumber(values.batch, "batch", "batchSize");
    const tunedBatchSizes = values["tuned-batches"] == null ? DEFAULT_TUNED_BATCH_SIZES : flagNumberList(values["tuned-batches"], "tuned-batches", "batchSize");
    const tpotPromptTokens = flagNumber(values["tpot-prompt"], "tpot-prompt", "benchPromptTokens");
    const warmupTokens = flagNumber(values.warmup, "warmup", "warmup");
    const outDir = path.resolve(typeof values.out === "string" ? values.out : defaultOutDir());
    const json = values.json === true;
    const rpcServers = flagRpc(values.rpc);

    const controller = new AbortController();
    let signals = 0;
    const onSignal = (name: NodeJS.Signals) => {
        if (++signals > 1) process.exit(130);
        io.err(`\n${name}: stopping after the current measurement (results so far are kept; again to quit now)`);
        controller.abort();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    const engine = await getEngineLlama({gpu: parseGpu(values.gpu), maxThreads: threads, rpcServers});
    try {
        const report = await runBench(engine, {
            modelPath, budgets, prompts, gens, variants, repeats, outDir, threads,
            contextSize, batchSize, tunedBatchSizes, tpotPromptTokens, warmupTokens, llamaBench: values["llama-bench"] === true,
            profile: flagProfileTime(values["profile-seconds"]), signal: controller.signal, onProgress: progressLines(io)
        });
        const files = Object.fromEntries(Object.entries(REPORT_FILES).map(([kind, name]) => [kind, path.join(outDir, name)]));
        if (json) {
            io.out(JSON.stringify({files, interrupted: report.interrupted, runs: report.runs.length, plannedRuns: report.plannedRuns,
                errors: predictionErrors(report), vsStock: stockRatios(report)}, null, 2));
        } else {
            for (const run of report.runs) {
                const cells = run.points.map((p) => `${p.kind === "ttft" ? "pp" : "tg"}${p.tokens} ${p.tokensPerSec.toFixed(1)} t/s`).join(", ");
                const busy = busyMachineNote(run);
                io.out(`${run.budget.padEnd(7)} ${run.variant.label.padEnd(13)} ${run.status === "ok" ? cells : `${run.status}: ${run.error}`}${busy != null ? ` (${busy})` : ""}`);
            }
            const vsLayers = speedups(report, ["layers"]).filter((c) => c.variant === "optimal");
            if (vsLayers.length > 0)
                io.out(`optimal vs layers: ${vsLayers.map((c) => `${c.budget} ${c.kind === "ttft" ? "pp" : "tg"}${c.tokens} ${c.speedup.toFixed(2)}×`).join(", ")}`);
            for (const run of report.runs) {
                const mine = stockRatios(report).filter((c) => c.budget === run.budget && c.variant === run.variant.label);
                if (mine.length > 0)
                    io.out(`vs stock llama.cpp ${run.budget} ${run.variant.label}: ${mine.map((c) => `${c.kind === "ttft" ? "pp" : "tg"}${c.tokens} ${c.ratio.toFixed(2)}×`).join(", ")}`);
                for (const load of run.loads)
                    if (load.llamaBench?.error != null) io.out(`stock llama-bench failed on ${run.budget} ${run.variant.label}: ${load.llamaBench.error}`);
            }
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
