/**
 * A benchmark run for the app inside the engine process: {@link runBench} with its progress counted in timed requests
 * (every sample of every point of every budget × strategy), so the UI can draw one bar and name the current cell.
 */
import {DEFAULT_TUNED_BATCH_SIZES, runBench, samplesPerRun} from "../engine/bench/runBench.js";
import type {EngineLlama} from "../engine/native/getEngineLlama.js";
import type {EngineBenchProgress, EngineBenchRequest, EngineBenchResult} from "../contract/engineProtocol.js";

/** runBench prefixes its run messages with `[i/n] budget B · variant: `; the UI shows the cell separately. */
const RUN_PREFIX = /^\[\d+\/\d+\] [^:]*: /;

/** Runs the benchmark `request` describes; reports progress through `emit`; stops early (keeping results) on abort. */
export async function runBenchJob(engine: EngineLlama, request: EngineBenchRequest, options: {
    signal: AbortSignal;
    emit: (progress: EngineBenchProgress) => void;
}): Promise<EngineBenchResult> {
    const {benchId} = request;
    const {emit} = options;
    const grid = {prompts: request.prompts, gens: request.gens, repeats: request.repeats, tunedBatchSizes: DEFAULT_TUNED_BATCH_SIZES};
    const runs = request.budgets.flatMap(({label}) => request.variants.map((variant) => ({budget: label, variant, samples: samplesPerRun(grid, variant)})));
    const total = runs.reduce((sum, run) => sum + run.samples, 0);
    const doneThrough = (index: number) => runs.slice(0, index).reduce((sum, run) => sum + run.samples, 0);

    let runBase = 0;
    let samplesInRun = 0;
    let cell = "preparing";
    let step = "profiling this machine";
    let done = 0;
    let lastSample: EngineBenchProgress["lastSample"];
    const send = (run?: EngineBenchProgress["run"]) =>
        emit({benchId, done, total, cell, step, ...(lastSample != null ? {lastSample} : {}), ...(run != null ? {run} : {})});

    const report = await runBench(engine, {
        modelPath: request.path, budgets: request.budgets, prompts: request.prompts, gens: request.gens,
        variants: request.variants, repeats: request.repeats, outDir: request.outDir, signal: options.signal,
        onProgress: (message) => {
            step = message.replace(RUN_PREFIX, "");
            send();
        },
        onRunStart: ({budget, variant}, index) => {
            runBase = doneThrough(index - 1);
            samplesInRun = 0;
            done = runBase;
            cell = `${budget} · ${variant.label}`;
            step = "planning";
            send();
        },
        onSample: ({kind, tokens, ms}) => {
            samplesInRun++;
            done = Math.min(runBase + samplesInRun, total);
            lastSample = {kind, tokens, ms};
            send();
        },
        onRun: (run, index) => {
            done = doneThrough(index);
            step = run.status === "ok" ? "finished" : `${run.status}${run.error != null ? `: ${run.error}` : ""}`;
            send(run);
        }
    });
    return {
        interrupted: report.interrupted, runs: report.runs.length, plannedRuns: report.plannedRuns,
        failedRuns: report.runs.filter((run) => run.status === "failed").length
    };
}
