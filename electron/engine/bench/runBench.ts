/**
 * The benchmark: for each budget × variant, plan (autoPlan with that strategy and budget; the machine profile is
 * cached), load through the real runtime, warm up, measure TTFT/TPOT with repeats, record measured memory per buffer
 * type and the planner's prediction per point. Results are written after every run (see {@link BenchResultStore}).
 */
import {DEVICE_PLAN_KINDS, MOE_STRATEGY_NAMES} from "../../contract/strategies.js";
import {parseLlamaCommand} from "../llamaArgs/parseLlamaCommand.js";
import {predictionDeviceKind, predictionModelKey, predictionRange, readPredictionErrors, recordPredictionError} from "../planner/predictionErrors.js";
import {defaultProfileCacheDir} from "../profiler/profileMachine.js";
import {isContended} from "../profiler/cpuContention.js";
import type {Budget} from "../../contract/ipc.js";
import {assertLoadable, type InspectedModel} from "../gguf/inspectGguf.js";
import {describeMachine} from "../hardware/describeMachine.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {autoPlan, type AutoPlanResult} from "../planner/autoPlan.js";
import {busier, contentionBetween, cpuSnapshot, withContention, type CpuContention} from "../profiler/cpuContention.js";
import {costContext, predict} from "../planner/costModel.js";
import {plannerModelFrom} from "../planner/types.js";
import {PlacedModel} from "../runtime/PlacedModel.js";
import {planDeviceCount} from "../planner/devices/autoPlanDevices.js";
import {planDeviceRun} from "./planDeviceRun.js";
import {benchEnvironment, benchModel} from "./benchEnvironment.js";
import {reproduce} from "./benchFlags.js";
import {ensureLlamaBench, llamaBenchVariantOf, type LlamaBenchBinary} from "./llamaBench/buildLlamaBench.js";
import {runLlamaBench} from "./llamaBench/runLlamaBench.js";
import {MeasureAborted, measureRun, type MeasuredSample} from "./measureRun.js";
import {BenchResultStore, prepareOutDir} from "./report/BenchResultStore.js";
import type {BenchLlamaBench, BenchLoad, BenchPlan, BenchPoint, BenchReport, BenchRun, BenchSettings, BenchVariant, PointKind} from "../../contract/bench.js";
import {contextKnobs, resolveSettings} from "../../contract/settings.js";

/** Micro-batches a hand-tuned variant tries by default (llama.cpp's default and a prompt-sized one). */
export const DEFAULT_TUNED_BATCH_SIZES = [512, 2048] as const;

/** Options of {@link runBench}. */
export type RunBenchOptions = {
    readonly modelPath: string;
    /** Budgets with the label they were given as (`"50%"`). */
    readonly budgets: readonly {readonly label: string; readonly budget: Budget}[];
    readonly prompts: readonly number[];
    readonly gens: readonly number[];
    readonly variants: readonly BenchVariant[];
    readonly repeats: number;
    readonly outDir: string;
    /** Defaults to the engine's maxThreads. */
    readonly threads?: number;
    /** Defaults to the longest request rounded up to 256 tokens. */
    readonly contextSize?: number;
    /** Defaults to DEFAULT_RUNTIME_SETTINGS.batchSize (electron/contract/settings.ts). */
    readonly batchSize?: number;
    /** Defaults to {@link DEFAULT_TUNED_BATCH_SIZES}. */
    readonly tunedBatchSizes?: readonly number[];
    /** Defaults to 1 (llama-bench's tg starts from an empty context too). */
    readonly tpotPromptTokens?: number;
    /** Defaults to 8. */
    readonly warmupTokens?: number;
    /**
     * After each load, run stock llama-bench (built once from the same llama.cpp source and libraries) on the same cells
     * with the same flags, and record its tokens/s beside ours. Defaults to `false`.
     */
    readonly llamaBench?: boolean;
    /** How long the machine profile may measure (each plan reuses the cached profile). Defaults to profileMachine's limit. */
    readonly profile?: {readonly timeLimitMs: number};
    readonly signal?: AbortSignal;
    readonly onProgress?: (message: string) => void;
    /** Called after each run is written. */
    readonly onRun?: (run: BenchRun, index: number, total: number) => void;
    /** Called before each run starts (`index` counts from 1). */
    readonly onRunStart?: (run: {readonly budget: string; readonly variant: BenchVariant}, index: number, total: number) => void;
    /** Called after every timed request, with the run it belongs to. */
    readonly onSample?: (sample: MeasuredSample & {readonly budget: string; readonly variant: string}) => void;
};

/** The bench variant of a multi-device plan kind (labels `devices-optimal`, `layers-split`, `single-gpu`). */
export function deviceVariant(kind: (typeof DEVICE_PLAN_KINDS)[number]): BenchVariant {
    return {label: kind === "optimal" ? "devices-optimal" : kind, strategy: kind === "layers-split" ? "layers" : "optimal", handTuned: false, devicePlan: kind};
}

/** Timed requests of one run: every load (hand-tuned variants load once per micro-batch) × repeats × points. */
export function samplesPerRun(settings: Pick<BenchSettings, "prompts" | "gens" | "repeats" | "tunedBatchSizes">, variant: BenchVariant): number {
    const loads = variant.handTuned ? settings.tunedBatchSizes.length : 1;
    return loads * settings.repeats * (settings.prompts.length + settings.gens.length);
}

function errorText(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

/** Context for the longest request of the grid. */
export function benchContextSize(prompts: readonly number[], gens: readonly number[], tpotPromptTokens: number, warmupTokens: number): number {
    const longest = Math.max(Math.max(...prompts) + 1, tpotPromptTokens + Math.max(...gens), warmupTokens + Math.max(...prompts));
    return Math.ceil((longest + 16) / 256) * 256;
}

/** Runs the benchmark and returns the final report (also on disk in `outDir`). Stops early, keeping results, on abort. */
export async function runBench(engine: EngineLlama, options: RunBenchOptions): Promise<BenchReport> {
    const {modelPath, signal} = options;
    prepareOutDir(options.outDir);
    const log = options.onProgress ?? (() => undefined);
    const startedAt = new Date().toISOString();
    const machine = describeMachine(engine);
    // without --threads every plan takes the fastest measured count up to the engine's (autoPlan); each load records its own
    const fixedThreads = options.threads != null ? {threads: options.threads} : {};
    const tpotPromptTokens = options.tpotPromptTokens ?? 1;
    const warmupTokens = options.warmupTokens ?? 8;
    // the plans choose mmap per run; threads, micro-batch and context are fixed for the whole benchmark
    const {threads, batchSize, contextSize} = resolveSettings({
        threads: options.threads, batchSize: options.batchSize,
        contextSize: options.contextSize ?? benchContextSize(options.prompts, options.gens, tpotPromptTokens, warmupTokens)
    }, {maxThreads: engine.llama.maxThreads, partlyOnGpu: machine.gpu != null});
    const settings: BenchSettings = {
        budgets: options.budgets.map((b) => b.label), prompts: options.prompts, gens: options.gens, variants: options.variants,
        repeats: options.repeats, gpu: machine.backend, threads, contextSize, batchSize,
        tunedBatchSizes: options.tunedBatchSizes ?? DEFAULT_TUNED_BATCH_SIZES, tpotPromptTokens, warmupTokens,
        llamaBench: options.llamaBench === true
    };
    // built (or found in the cache) before anything is measured, so a missing compiler fails in seconds
    const stock = options.llamaBench === true ? ensureLlamaBench(llamaBenchVariantOf(engine.llama.gpu), {onProgress: log}) : null;

    // A cheap first plan validates the model and profiles the machine (cached) before anything is written.
    const first = await autoPlan(engine, modelPath, {strategy: "cpu", budget: {kind: "mib", mib: 0}, settings: {contextSize, batchSize, ...fixedThreads},
        profile: options.profile, signal, onProgress: log});
    // a benchmark tokenizes prompts: a vocabulary llama.cpp cannot tokenize with would end the process mid-run
    assertLoadable(first.model);
    // --cpu-moe / --n-cpu-moe move expert weights: on a dense model there is nothing to compare
    const dense = first.model.tensors.every((t) => !t.role.endsWith("_exps"));
    const variants = options.variants.filter((v) => !(dense && MOE_STRATEGY_NAMES.includes(v.strategy)));
    if (variants.length < options.variants.length)
        log(`skipping ${options.variants.filter((v) => !variants.includes(v)).map((v) => v.label).join(", ")}: the model has no expert weights`);
    // several devices (a second GPU, an rpc-server): the K-device plan against its baselines, in the same report
    if (planDeviceCount(engine.bindings.tensorwiseGetDevices()) > 1)
        for (const kind of DEVICE_PLAN_KINDS)
            if (!variants.some((v) => v.devicePlan === kind))
                variants.push(deviceVariant(kind));
    const total = options.budgets.length * variants.length;
    const store = new BenchResultStore(options.outDir, {
        version: 1, startedAt, finishedAt: null, plannedRuns: total, interrupted: false,
        environment: benchEnvironment(machine, first.profile.cpuReadBytesPerSec > 0 ? first.profile.cpuReadBytesPerSec : null),
        model: benchModel(modelPath, first.model), settings, runs: []
    });
    const cost = {model: plannerModelFrom(first.model), profile: first.profile, gpuDevice: machine.gpu?.name ?? null};
    const tensorNames = first.model.tensors.map((t) => t.name);

    let index = 0;
    let interrupted = false;
    for (const {label: budget, budget: budgetSpec} of options.budgets) {
        for (const variant of variants) {
            if (signal?.aborted) { interrupted = true; break; }
            index++;
            const prefix = `[${index}/${total}] budget ${budget} · ${variant.label}`;
            options.onRunStart?.({budget, variant}, index, total);
            const run = await benchOneRun({engine, options, settings, model: first.model, tensorNames, cost, budget, budgetSpec, variant, stock,
                log: (m) => log(`${prefix}: ${m}`)});
            interrupted = run.status === "interrupted";
            store.addRun(run);
            options.onRun?.(run, index, total);
            log(`${prefix}: ${run.status}${run.error == null ? "" : ` (${run.error})`}`);
            if (interrupted) break;
        }
        if (interrupted) break;
    }
    store.finish(interrupted || signal?.aborted === true);
    return store.report;
}

/** A run's plan as the bench loads it, its per-point predictions (ms, `null`: none), and the budget in bytes. */
export type PlannedRun = {
    readonly plan: BenchPlan;
    readonly predictPoint: (kind: PointKind, tokens: number) => number | null;
    readonly layerCount: number | null;
    readonly budget: number;
};

type CostInputs = {model: ReturnType<typeof plannerModelFrom>; profile: AutoPlanResult["profile"]; gpuDevice: string | null};

type RunContext = {
    engine: EngineLlama; options: RunBenchOptions; settings: BenchSettings; cost: CostInputs;
    /** The model as the first plan validated and inspected it (not read again per run). */
    model: InspectedModel; tensorNames: readonly string[];
    budget: string; budgetSpec: Budget; variant: BenchVariant; stock: LlamaBenchBinary | null; log: (message: string) => void;
};

/** One budget × variant; never throws (a failure is recorded in the run). */
async function benchOneRun(cx: RunContext): Promise<BenchRun> {
    const {engine, options, settings, variant, log} = cx;
    const started = performance.now();
    const startedAt = new Date().toISOString();
    const batchSizes = variant.handTuned ? settings.tunedBatchSizes : [settings.batchSize];
    const loads: BenchLoad[] = [];
    const perLoadPoints: BenchPoint[][] = [];
    let budgetBytes = 0;
    let tpotFloorMs: number | null = null;
    // other programs' CPU use over each load's measurements (not stock llama-bench's, a program of its own), the busiest
    let cpuContention: CpuContention | undefined;
    let status: BenchRun["status"] = "ok";
    let error: string | null = null;
    try {
        for (const batchSize of batchSizes) {
            log(`planning (micro-batch ${batchSize})`);
            const workload = {promptTokens: Math.max(...settings.prompts), genTokens: Math.max(...settings.gens)};
            const planSettings = {contextSize: settings.contextSize, threads: settings.threads, batchSize};
            // without --threads a one-GPU plan takes the fastest measured thread count (autoPlan); each load records its own
            const {plan, predictPoint, layerCount, budget} = variant.devicePlan != null
                ? await planDeviceRun(engine, options.modelPath, variant.devicePlan, {budget: cx.budgetSpec, settings: planSettings, workload, model: cx.model, profile: options.profile,
                    tpotPromptTokens: settings.tpotPromptTokens, signal: options.signal})
                : await planStrategyRun(cx, {contextSize: settings.contextSize, batchSize, ...(options.threads != null ? {threads: options.threads} : {})},
                    workload, variant.handTuned);
            budgetBytes = budget;
            const cpuRead = cx.cost.profile.cpuReadBytesPerSec;
            tpotFloorMs = plan.hostWeightBytes > 0 && cpuRead > 0 ? plan.hostWeightBytes / cpuRead * 1000 : null;
            const {useMmap} = plan;
            log(`loading (-ngl ${plan.gpuLayers}, ${plan.overrides.length} overrides, ${useMmap ? "mmap" : "no mmap"})`);
            const placed = await PlacedModel.load(engine, {
                modelPath: options.modelPath, gpuLayers: plan.gpuLayers, overrides: plan.overrides, useMmap,
                batchSize: plan.batchSize, contextSize: plan.contextSize, threads: plan.threads, ...plan.knobs, signal: options.signal
            });
            let load: BenchLoad;
            let points: BenchPoint[];
            try {
                load = {plan, memory: placed.memory(), loadMs: placed.loadMs,
                    reproduce: reproduce(plan, {modelPath: options.modelPath, layerCount, tensorNames: cx.tensorNames,
                        prompts: settings.prompts, gens: settings.gens, repeats: settings.repeats})};
                loads.push(load);
                const measuring = cpuSnapshot();
                points = await measureRun(placed, {
                    prompts: settings.prompts, gens: settings.gens, repeats: settings.repeats, tpotPromptTokens: settings.tpotPromptTokens,
                    warmupTokens: settings.warmupTokens, batchSize: plan.batchSize, predict: predictPoint, signal: options.signal, onProgress: log,
                    onSample: (sample) => options.onSample?.({...sample, budget: cx.budget, variant: variant.label})
                });
                cpuContention = busier(cpuContention, contentionBetween(measuring, cpuSnapshot(), plan.threads) ?? undefined);
            } finally {
                await placed.dispose();
            }
            // after our model is freed, so both never hold memory at once
            if (cx.stock != null) {
                const stock = await stockBench(cx.stock, load.reproduce.benchArgv, options.signal, log);
                loads[loads.length - 1] = {...load, llamaBench: stock};
                points = points.map((p) => ({...p, stockTokensPerSec: stock.cells.find((c) => c.kind === p.kind && c.tokens === p.tokens)?.tokensPerSec ?? null}));
            }
            perLoadPoints.push(await withRanges(points, {modelPath: options.modelPath, gpuDevice: cx.cost.gpuDevice, plan,
                contended: cx.cost.profile.cpuContention != null && isContended(cx.cost.profile.cpuContention)}));
        }
    } catch (caught) {
        if (caught instanceof MeasureAborted) {
            perLoadPoints.push(caught.points);
            status = "interrupted";
            error = caught.message;
        } else if (options.signal?.aborted) {
            status = "interrupted";
            error = "the benchmark was interrupted";
        } else {
            status = "failed";
            error = errorText(caught);
        }
    }
    return {
        id: `${cx.budget}/${variant.label}`, budget: cx.budget, budgetBytes, variant, status, error, loads,
        points: bestPerPoint(perLoadPoints), tpotFloorMs, ...withContention(cpuContention), startedAt, elapsedMs: performance.now() - started
    };
}

/** A one-GPU strategy's plan for a run (autoPlan), with its per-point predictions. */
async function planStrategyRun(cx: RunContext, planSettings: {contextSize: number; threads?: number; batchSize: number},
    workload: {promptTokens: number; genTokens: number}, handTuned: boolean): Promise<PlannedRun> {
    const llamaCommand = cx.variant.llamaCommand == null ? undefined : parseLlamaCommand(cx.variant.llamaCommand);
    const planned = await autoPlan(cx.engine, cx.options.modelPath, {
        model: cx.model, strategy: cx.variant.strategy, budget: cx.budgetSpec, signal: cx.options.signal, settings: planSettings, workload,
        profile: cx.options.profile, ...(llamaCommand != null ? {llamaCommand} : {})
    });
    const {model, cost} = planned;
    // a user's command is measured as llama.cpp would load it, whatever the budget (it names its own placement)
    const result = llamaCommand == null ? planned.result : commandResult(planned);
    const useMmap = handTuned ? false : result.settings.useMmap;
    const plan: BenchPlan = {
        gpuLayers: result.gpuLayers, overrides: result.overrides.map((o) => ({pattern: o.pattern, bufferType: o.bufferType})),
        batchSize: result.settings.batchSize, contextSize: result.settings.contextSize, threads: result.settings.threads, useMmap,
        knobs: contextKnobs(result.settings),
        hostWeightBytes: result.prediction.hostWeightBytes,
        gpuWeightBytes: cx.cost.model.weightBytes - result.prediction.hostWeightBytes,
        predictedVramBytes: result.prediction.vram.total, notes: result.notes,
        ...(cost.scratchByKey != null ? {scratchByKey: Object.fromEntries(cost.scratchByKey)} : {})
    };
    const predictSettings = {...result.settings, useMmap};
    const predictPoint = (kind: PointKind, tokens: number): number | null => {
        try {
            const at = kind === "ttft" ? {promptTokens: tokens, genTokens: 1} : {promptTokens: cx.settings.tpotPromptTokens, genTokens: tokens};
            // the profile measured at the plan's own thread count (and, without the GPU, as such a load lays out weights)
            const p = predict(costContext(cost, predictSettings, at), result.resolved);
            return kind === "ttft" ? p.ttftMs : p.tpotMs;
        } catch {
            return null;
        }
    };
    return {plan, predictPoint, layerCount: model.layerCount, budget: result.budgetBytes};
}

/**
 * Each point with the range it was expected in, from this machine's prediction errors measured before it; then its own
 * error is kept for later plans and runs (predictionErrors.ts). A cache that cannot be written costs the run nothing.
 */
async function withRanges(points: readonly BenchPoint[], at: {modelPath: string; gpuDevice: string | null; plan: BenchPlan; contended: boolean}): Promise<BenchPoint[]> {
    const dir = defaultProfileCacheDir();
    const errors = readPredictionErrors(dir);
    const deviceKind = predictionDeviceKind(at.gpuDevice, at.plan.knobs.useGpu && at.plan.gpuWeightBytes > 0);
    const modelKey = predictionModelKey(at.modelPath);
    const ranged = points.map((point) => {
        if (point.predictedMs == null || !(point.predictedMs > 0)) return point;
        const range = predictionRange(errors, {figure: point.kind, deviceKind, modelKey, predictedMs: point.predictedMs, contended: at.contended});
        return {...point, predictedRangeMs: {lowMs: range.lowMs, highMs: range.highMs}};
    });
    for (const point of ranged)
        if (point.predictedMs != null && point.medianMs > 0)
            await recordPredictionError(dir, {figure: point.kind, deviceKind, modelKey, predictedMs: point.predictedMs, measuredMs: point.medianMs}).catch(() => undefined);
    return ranged;
}

/** The user's command as priced beside the plan, or why it cannot be measured here. */
function commandResult(planned: AutoPlanResult): AutoPlanResult["result"] {
    const compared = planned.command;
    if (compared?.priced == null)
        throw new Error(`the llama.cpp command cannot be loaded here: ${(compared?.refused ?? []).map((n) => `${n.flag}: ${n.why}`).join("; ")}`);
    return {...compared.priced, notes: [`your llama.cpp command: ${compared.command.program} …`, ...compared.priced.notes]};
}

/** Runs stock llama-bench with a load's flags; a failure is recorded, never thrown (our own numbers stay valid). */
async function stockBench(binary: LlamaBenchBinary, argv: readonly string[], signal: AbortSignal | undefined, log: (message: string) => void): Promise<BenchLlamaBench> {
    log(`stock llama-bench ${argv.join(" ")}`);
    try {
        const cells = await runLlamaBench(binary.program, argv, {signal});
        return {program: binary.program, commit: binary.commit, cells, error: null};
    } catch (error) {
        if (signal?.aborted) throw error;
        return {program: binary.program, commit: binary.commit, cells: [], error: errorText(error)};
    }
}

/** Per point, the fastest of the loads (a hand-tuned variant keeps the best micro-batch per cell). */
export function bestPerPoint(perLoad: readonly (readonly BenchPoint[])[]): BenchPoint[] {
    const best = new Map<string, BenchPoint>();
    for (const points of perLoad)
        for (const p of points) {
            const key = `${p.kind}:${p.tokens}`;
            const seen = best.get(key);
            if (seen == null || p.medianMs < seen.medianMs) best.set(key, p);
        }
    return [...best.values()];
}
