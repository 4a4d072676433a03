/** Auto-offload: profile this machine for a model, then plan its placement under a VRAM budget (the caller loads). */
import type {Budget} from "../../contract/ipc.js";
import {isHostBufferType} from "../../contract/memory.js";
import {PLANNED_KNOBS, resolveSettings, type ResolvedSettings, type RuntimeSettings} from "../../contract/settings.js";
import {inspectGguf, type InspectedModel} from "../gguf/inspectGguf.js";
import {validateGgufOutOfProcess} from "../gguf/validateGgufOutOfProcess.js";
import {describeMachine} from "../hardware/describeMachine.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {TensorBufferOverride} from "../placement/Placement.js";
import {busier, withContention} from "../profiler/cpuContention.js";
import type {MachineProfile} from "../profiler/MachineProfile.js";
import {distinctExpertOperators, distinctOperators} from "../profiler/operatorShapes.js";
import {profileAtThreads, threadCandidates} from "../profiler/profileAtThreads.js";
import {defaultProfileCacheDir, profileMachine, type ProfileMachineOptions} from "../profiler/profileMachine.js";
import {budgetBytes} from "./budget.js";
import {attentionShapeOf, type CostInputs} from "./costModel.js";
import {offloadMinBatchFromEnv} from "./offloadMinBatchFromEnv.js";
import {explainPlan} from "./explainPlan.js";
import type {PlanExplanation} from "../../contract/planExplanation.js";
import {requestPredictor, type RequestPredictor} from "./requestPredictor.js";
import {planStrategy} from "./planStrategy.js";
import {CpuOnlyLoadAborts, createVramSimulator, type VramSimulator} from "./simulateVram.js";
import {switchProbe} from "./switchProbe.js";
import {planSpeculative, type SpeculativeAsked} from "../speculative/planSpeculative.js";
import type {SpeculativeDecision} from "../speculative/chooseSpeculative.js";
import {candidateSettings, cpuOnlySettings} from "./strategies/optimalStrategy.js";
import {costInputsFor, finishPlan, type FitFunction, type StrategyInputs, type StrategyResult} from "./strategies/StrategyResult.js";
import {layerSplit} from "./resolvePlacement.js";
import {STRATEGY_NAMES, type StrategyName} from "../../contract/strategies.js";
import {DEFAULT_WORKLOAD, plannerModelFrom, type Workload} from "./types.js";
import {loadedTensors} from "../gguf/loadedTensors.js";
import {compareCommand, type CommandComparison} from "../llamaArgs/commandPlan.js";
import type {LlamaCommand} from "../llamaArgs/parseLlamaCommand.js";

/** Options of {@link autoPlan}. */
export type AutoPlanOptions = {
    /** Defaults to `{kind: "auto"}` (free VRAM minus a safety margin). */
    budget?: Budget;
    /** Defaults to {@link DEFAULT_WORKLOAD}. */
    workload?: Workload;
    /** Defaults to `"optimal"`. */
    strategy?: StrategyName;
    /**
     * Context size, threads, micro-batch and mmap to start from, resolved by `resolveSettings`
     * (electron/contract/settings.ts): the contract's defaults, the engine's threads, mmap off with a GPU. Without
     * `threads`, the plan takes the thread count (of {@link threadCandidates} up to the engine's `maxThreads`) whose
     * measured profile predicts the shortest request for the chosen placement.
     */
    settings?: Partial<RuntimeSettings>;
    /**
     * The model, already validated out of process and inspected (by the caller that holds it). Omitted: validated
     * and inspected here.
     */
    model?: InspectedModel;
    /** Profile options (cache folder defaults to {@link defaultProfileCacheDir}). */
    profile?: Omit<ProfileMachineOptions, "signal" | "onProgress">;
    signal?: AbortSignal;
    /** Steps as sentences; `fraction` (0..1) where a step knows how far it is (see ProfileMachineOptions.onProgress). */
    onProgress?: (message: string, fraction?: number) => void;
    /** Speculative decoding to plan with the placement (speculative/planSpeculative.ts). Defaults to none. */
    speculative?: SpeculativeAsked;
    /** A user's llama.cpp command to price on the same inputs and set beside the plan (llamaArgs/commandPlan.ts). */
    llamaCommand?: LlamaCommand;
};

/** The plan and everything needed to load it with `PlacedModel.load`. */
export type AutoPlanResult = {
    readonly result: StrategyResult;
    /** = `result.overrides`: pass with `gpuLayers: result.gpuLayers`, `useMmap: result.settings.useMmap`, `batchSize`… */
    readonly overrides: readonly TensorBufferOverride[];
    readonly model: InspectedModel;
    readonly profile: MachineProfile;
    /** One sentence per decision (placement, budget, `-ngl`, profile), for the CLI and the app alike. */
    readonly explanation: PlanExplanation;
    /** Prices one request of the loaded plan at its own prompt and reply lengths (a chat reply's prediction). */
    readonly predictRequest: RequestPredictor;
    /** The cost model's inputs for this plan (the profile at its thread count, and its CPU layout without the GPU). */
    readonly cost: CostInputs;
    /** Speculative decoding chosen (its `load` goes to `PlacedModel.load`'s `speculative`), when it was asked about. */
    readonly speculative: SpeculativeDecision | null;
    /** The user's llama.cpp command priced beside the plan, when one was given. */
    readonly command: CommandComparison | null;
};

/** llama.cpp's `common_fit_params` through the native binding, with margin = free − budget on the GPU. */
export function nativeFit(engine: EngineLlama, modelPath: string, gpu: {name: string; freeBytes: number}): FitFunction {
    return async ({budgetBytes: budget, settings}) => {
        const fit = engine.bindings.tensorwiseFitParams;
        if (fit == null) throw new Error("this tensorwise native build has no common_fit_params binding; run `npm run native`");
        const result = await fit({
            modelPath, margins: {[gpu.name]: Math.max(0, gpu.freeBytes - budget)},
            contextSize: settings.contextSize, batchSize: settings.batchSize, useMmap: settings.useMmap
        });
        return {gpuLayers: result.gpuLayers, overrides: result.overrides, status: result.status};
    };
}

/**
 * Validates and inspects the model (unless given), profiles this machine for its weight operators (cached), and plans with the
 * chosen strategy under the budget. Throws with the reason when the model cannot be planned.
 */
export async function autoPlan(engine: EngineLlama, modelPath: string, options: AutoPlanOptions = {}): Promise<AutoPlanResult> {
    const {onProgress} = options;
    const prepared = await prepareStrategyInputs(engine, modelPath, options);
    const {simulator, model, gpu} = prepared;
    const strategy = options.strategy ?? "optimal";
    onProgress?.(`planning (${strategy}, budget ${(prepared.inputs.budgetBytes / 2 ** 20).toFixed(0)} MiB)`);
    const planned = options.settings?.threads != null
        ? {...prepared, result: await planStrategy(strategy, prepared.inputs)}
        : await planWithFastestThreads(engine, prepared, strategy, options);
    const {profile} = planned;
    let {inputs, result} = planned;
    try {
        result = await checkWithSimulation(simulator, inputs, strategy, result, onProgress);
    } catch (error) {
        // llama.cpp cannot run this model without the GPU (its simulation aborted): `optimal` keeps the GPU in use;
        // any other plan, or a machine without a GPU, gets the reason
        if (!(error instanceof CpuOnlyLoadAborts) || strategy !== "optimal" || gpu == null || inputs.chosen?.useGpu === false) throw error;
        onProgress?.("llama.cpp aborts on this model without the GPU; planning with the GPU in use");
        inputs = {...inputs, chosen: {...inputs.chosen, useGpu: true}};
        const replanned = await planStrategy(strategy, inputs);
        result = await checkWithSimulation(simulator, inputs, strategy,
            {...replanned, notes: [...replanned.notes, `the plan keeps ${gpu.name} in use: ${error.message}`]}, onProgress);
    }
    if (strategy === "optimal") result = await notWorseThanBaselines(simulator, inputs, result);
    if (!result.fits) throw new Error(`cannot plan ${strategy} under the budget: ${result.reason}`);
    const explanation = explainPlan(inputs, result, {
        budget: options.budget ?? {kind: "auto"}, gpu,
        profile: {createdAt: profile.createdAt, elapsedMs: profile.elapsedMs, truncated: profile.truncated, reused: profile.cachedFile != null,
            ...withContention(busier(profile.cpuContention, inputs.cpuOnlyProfile?.cpuContention))}
    });
    const cost = costInputsFor(inputs, result.settings);
    const speculative = options.speculative == null ? null : await planSpeculative({
        modelPath, model, result, cost, budgetBytes: inputs.budgetBytes, gpuBufferType: inputs.gpuBufferType, signal: options.signal,
        request: {...options.speculative, acceptanceDir: options.speculative.acceptanceDir ?? defaultProfileCacheDir()}
    });
    const command = options.llamaCommand == null ? null : await compareCommand(options.llamaCommand, inputs, result,
        {gpu: gpu == null ? null : {name: gpu.name, freeBytes: gpu.freeBytes}, trainedContextSize: model.contextLength ?? null}, simulator);
    return {result, overrides: result.overrides, model, profile, predictRequest: requestPredictor(cost, result), cost, speculative, command,
        explanation: speculative == null ? explanation : {...explanation, speculative: speculative.sentence}};
}

/**
 * Plans with each of {@link threadCandidates} (the CPU part of the profile measured at each count, cached) and keeps
 * the plan with the shortest predicted request (TTFT + TPOT × the rest of the reply); its notes give every count's.
 */
async function planWithFastestThreads(engine: EngineLlama, prepared: PreparedInputs, strategy: StrategyName,
    options: Omit<AutoPlanOptions, "strategy">): Promise<{inputs: StrategyInputs; profile: MachineProfile; result: StrategyResult}> {
    const tried: {inputs: StrategyInputs; profile: MachineProfile; result: StrategyResult}[] = [];
    // the CPU retaken at each other count (and again as a load without the GPU, where plans may leave it out): numbered
    // passes of the Plan step, so its bar and time left cover them all
    const retakes = threadCandidates(prepared.inputs.settings.threads).filter((threads) => threads !== prepared.profile.threads).length;
    const count = retakes * (prepared.inputs.cpuOnlyProfile == null ? 1 : 2);
    let index = 0;
    for (const threads of threadCandidates(prepared.inputs.settings.threads)) {
        options.signal?.throwIfAborted();
        const retake = threads !== prepared.profile.threads;
        const cpuOptions = {
            cacheDir: defaultProfileCacheDir(), decodeWorkingSetBytes: prepared.model.tensorBytes,
            // a MoE model's expert ops run on the CPU threads too: timed again at this count, not taken from the base
            expertOps: distinctExpertOperators(loadedTensors(prepared.model), prepared.model.expertUsedCount ?? 1),
            ...(prepared.attention != null ? {attention: prepared.attention} : {}), ...options.profile,
            signal: options.signal, onProgress: options.onProgress,
            progressPrefix: `choosing the thread count: the CPU at ${threads} thread${threads === 1 ? "" : "s"}, `
        };
        const nextPass = () => retake ? {pass: {index: index++, count}} : {};
        const profile = await profileAtThreads(engine, prepared.profile, threads, {...cpuOptions, ...nextPass()});
        const cpuOnlyProfile = prepared.inputs.cpuOnlyProfile == null ? undefined
            : await profileAtThreads(engine, prepared.inputs.cpuOnlyProfile, threads, {...cpuOptions, cpuOnlyLoad: true, ...nextPass()});
        const inputs: StrategyInputs = {...prepared.inputs, settings: {...prepared.inputs.settings, threads}, cost: {...prepared.inputs.cost, profile},
            ...(cpuOnlyProfile != null ? {cpuOnlyProfile} : {})};
        tried.push({inputs, profile, result: await planStrategy(strategy, inputs)});
    }
    const fitting = tried.filter((t) => t.result.fits);
    const pool = fitting.length > 0 ? fitting : tried;
    const best = pool.reduce((a, b) => b.result.prediction.requestMs < a.result.prediction.requestMs ? b : a);
    const note = `threads: ${best.inputs.settings.threads}, the shortest predicted request of ` +
        tried.map((t) => `${t.inputs.settings.threads} → ${t.result.prediction.requestMs.toFixed(0)} ms`).join(", ");
    return {...best, result: {...best.result, notes: [...best.result.notes, note]}};
}

/** Everything a strategy needs for this model on this machine, and the simulator that checks plans. */
export type PreparedInputs = {
    readonly inputs: StrategyInputs;
    readonly simulator: VramSimulator;
    readonly model: InspectedModel;
    readonly profile: MachineProfile;
    /** The GPU the budget is for, with its free memory at planning time; `null` without one. */
    readonly gpu: {readonly name: string; readonly freeBytes: number} | null;
    /** The attention the profile timed (shape, cache types, longest context), for the CPU retakes at other thread counts. */
    readonly attention?: ProfileMachineOptions["attention"];
};

/**
 * Validates and inspects the model (unless given), profiles this machine for its operators (cached), measures the GPU compute buffer
 * per candidate micro-batch with llama.cpp's no-alloc simulation, and resolves the budget: the inputs of every
 * strategy (autoPlan, benchmarks and the prediction check plan from the same facts).
 */
export async function prepareStrategyInputs(engine: EngineLlama, modelPath: string, options: Omit<AutoPlanOptions, "strategy"> = {}): Promise<PreparedInputs> {
    const {signal, onProgress} = options;
    const model = options.model ?? await validateAndInspect(modelPath, signal, onProgress);
    const planner = plannerModelFrom(model);
    const machine = describeMachine(engine);
    const gpu = machine.gpu;
    // before the slow profile: a threshold the cost model cannot price is refused at once
    const offloadMinBatch = gpu == null ? undefined : offloadMinBatchFromEnv();
    const settings: ResolvedSettings = resolveSettings(options.settings ?? {}, {
        maxThreads: engine.llama.maxThreads, partlyOnGpu: gpu != null, trainedContextSize: model.contextLength
    });
    // the knobs the client set; the planner chooses the rest
    const chosen = Object.fromEntries(PLANNED_KNOBS.flatMap((knob) => {
        const value = options.settings?.[knob];
        return value == null ? [] : [[knob, value]];
    })) as NonNullable<StrategyInputs["chosen"]>;
    const attention = attentionShapeOf(planner);
    const profileOptions = {
        cacheDir: defaultProfileCacheDir(), threads: settings.threads, decodeWorkingSetBytes: model.tensorBytes,
        expertOps: distinctExpertOperators(loadedTensors(model), model.expertUsedCount ?? 1),
        // one layer's attention with flash attention on and off, for the cache types the plan may use
        ...(attention.heads > 0 && attention.kvHeads > 0 && attention.heads % attention.kvHeads === 0 && Number.isInteger(attention.headDim)
            && attention.headDim >= 1 && attention.headDim <= 1024
            ? {attention: {...attention, kvTypes: ["f16", settings.kvCacheType], maxKeys: settings.contextSize}} : {}),
        // the calibration times a CPU↔GPU switch in a decode step on the plan's GPU
        switchProbe,
        ...options.profile, signal, onProgress
    };
    // with a GPU visible, the CPU as a load without it lays out its weights (repacked where llama.cpp repacks), to
    // price plans that leave the GPU out; only the CPU is timed again, as the Profile step's second pass
    const timesCpuOnly = gpu != null && chosen.useGpu !== true;
    const passes = timesCpuOnly ? 2 : 1;
    const profile = await profileMachine(engine, distinctOperators(loadedTensors(model)), {...profileOptions, pass: {index: 0, count: passes}});
    const cpuOnlyProfile = !timesCpuOnly ? undefined
        : await profileMachine(engine, distinctOperators(loadedTensors(model)), {...profileOptions, devices: ["CPU"], cpuOnlyLoad: true, pass: {index: 1, count: passes}});
    // a share of the model's weights is a share of what llama.cpp loads (not the MTP layers it skips), as explainBudget says
    const budget = budgetBytes(options.budget ?? {kind: "auto"}, {gpuFreeBytes: gpu?.freeBytes ?? 0, weightBytes: planner.weightBytes});
    // scratch per configuration from llama.cpp's no-alloc simulation, measured once (it barely depends on the placement)
    // (and the chosen plan's memory checked by it, the host's compute buffers included, with or without a GPU)
    const simulator = await createVramSimulator(engine, modelPath, planner, gpu?.name ?? null);
    let scratchByKey: Map<string, number> | undefined;
    if (gpu != null && chosen.useGpu !== false) {
        onProgress?.("measuring compute buffers (llama.cpp no-alloc simulation)");
        scratchByKey = await simulator.scratchByKey(candidateSettings(settings, chosen, offloadMinBatch));
    }
    const inputs: StrategyInputs = {
        cost: {model: planner, profile, gpuDevice: gpu?.name ?? null, scratchByKey, scratchContextSize: settings.contextSize,
            ...(offloadMinBatch != null ? {offloadMinBatch} : {})},
        chosen,
        ...(cpuOnlyProfile != null ? {cpuOnlyProfile} : {}),
        gpuBufferType: gpu?.bufferType ?? null,
        budgetBytes: budget,
        settings,
        workload: options.workload ?? DEFAULT_WORKLOAD,
        fit: gpu == null ? undefined : nativeFit(engine, modelPath, gpu),
        isHostBufferType: (name) => isHostBufferType(name, machine.bufferTypes)
    };
    return {inputs, simulator, model, profile, gpu: gpu == null ? null : {name: gpu.name, freeBytes: gpu.freeBytes},
        ...("attention" in profileOptions ? {attention: profileOptions.attention} : {})};
}

async function validateAndInspect(modelPath: string, signal: AbortSignal | undefined, onProgress: ((message: string) => void) | undefined): Promise<InspectedModel> {
    onProgress?.("validating the model");
    return inspectGguf(await validateGgufOutOfProcess(modelPath, {signal, timeoutMs: 30_000}));
}

/** Replans with a smaller budget at most this many times when the simulation finds a plan over the budget. */
const MAX_REPLANS = 3;

/**
 * The final check: llama.cpp's no-alloc simulation of the chosen plan (its exact devices, `-ngl`, overrides, context,
 * micro-batch and every knob). The plan's VRAM and host compute buffers become the simulated ones; a plan the
 * simulation puts over the budget is replanned with the budget shrunk by the overshoot. When even that does not fit,
 * the `optimal` strategy keeps its promise by running without the GPU (nothing on it at all, the CPU-only fallback
 * every budget holds); other strategies say they do not fit.
 */
export async function checkWithSimulation(simulator: VramSimulator, inputs: StrategyInputs, strategy: StrategyName,
    first: StrategyResult, onProgress?: (message: string) => void): Promise<StrategyResult> {
    const MiB = 2 ** 20;
    let result = first;
    let budget = inputs.budgetBytes;
    for (let attempt = 0; ; attempt++) {
        const {settings} = result;
        const {hostScratch, hostKv: _hostKv, bufferTypes: _bufferTypes, ...vram} = await simulator.simulate({
            gpuLayers: result.gpuLayers, overrides: result.overrides, settings
        });
        const predicted = result.prediction.vram.total;
        const note = (inputs.cost.gpuDevice == null ? "" : `VRAM by llama.cpp's no-alloc simulation: ${(vram.total / MiB).toFixed(1)} MiB ` +
            `(weights ${(vram.weights / MiB).toFixed(1)}, KV ${(vram.kv / MiB).toFixed(1)}, scratch ${(vram.scratch / MiB).toFixed(1)}); ` +
            `cost model ${(predicted / MiB).toFixed(1)} MiB; `) + `host compute buffers by the simulation: ${(hostScratch / MiB).toFixed(1)} MiB`;
        const over = vram.total > inputs.budgetBytes;
        const checked: StrategyResult = {
            ...result, prediction: {...result.prediction, vram, hostScratchBytes: hostScratch}, notes: [...result.notes, note],
            fits: result.fits && !over,
            reason: over ? `llama.cpp's simulation needs ${(vram.total / MiB).toFixed(1)} MiB of VRAM, over the ${(inputs.budgetBytes / MiB).toFixed(1)} MiB budget` : result.reason
        };
        if (!over) return checked;
        if (attempt >= MAX_REPLANS) return strategy === "optimal" && inputs.chosen?.useGpu !== true ? withoutGpu(simulator, inputs, checked) : checked;
        budget -= Math.max(vram.total - predicted, vram.total - inputs.budgetBytes, MiB);
        onProgress?.(`the simulation puts the plan ${((vram.total - inputs.budgetBytes) / MiB).toFixed(1)} MiB over the budget; replanning`);
        const replanned = await planStrategy(strategy, {...inputs, budgetBytes: Math.max(0, budget)});
        result = {...replanned, budgetBytes: inputs.budgetBytes, notes: [...replanned.notes, `replanned under ${(budget / MiB).toFixed(1)} MiB after the simulation`]};
    }
}

/** The fastest plan that uses no GPU at all (`--device none`), simulated: what `optimal` falls back to when nothing on the GPU fits. */
async function withoutGpu(simulator: VramSimulator, inputs: StrategyInputs, over: StrategyResult): Promise<StrategyResult> {
    const plans = cpuOnlySettings(inputs.settings, inputs.chosen).map((settings) =>
        finishPlan(inputs, "optimal", layerSplit(inputs.cost.model, 0), settings, []));
    const best = plans.reduce((a, b) => (b.prediction.requestMs < a.prediction.requestMs ? b : a));
    const {hostScratch, hostKv: _hostKv, bufferTypes: _bufferTypes, ...vram} = await simulator.simulate({gpuLayers: 0, overrides: [], settings: best.settings});
    return {
        ...best, prediction: {...best.prediction, vram, hostScratchBytes: hostScratch}, fits: vram.total <= inputs.budgetBytes,
        notes: [...over.notes, `nothing that uses the GPU fits the ${(inputs.budgetBytes / 2 ** 20).toFixed(1)} MiB budget by llama.cpp's simulation (${over.reason}); ` +
            "running without the GPU (--device none)"]
    };
}

/** The baselines `optimal` must never be predicted slower than, when they fit the same budget. */
const GUARANTEED_BASELINES = STRATEGY_NAMES.filter((name) => name !== "optimal");

/**
 * The promise that `optimal` never loses to a baseline, kept after llama.cpp's simulation: each baseline the inputs
 * allow is planned and checked by the same simulation, and one that fits and is predicted faster than the checked
 * optimal plan (the optimiser prices memory from measurements, the simulation knows better) replaces it, with a note.
 */
async function notWorseThanBaselines(simulator: VramSimulator, inputs: StrategyInputs, optimal: StrategyResult): Promise<StrategyResult> {
    let best = optimal;
    for (const strategy of GUARANTEED_BASELINES) {
        if (strategy === "fit" && inputs.fit == null) continue;
        if ((strategy === "cpu-moe" || strategy === "n-cpu-moe") && !inputs.cost.model.tensors.some((t) => t.experts != null)) continue;
        let baseline: StrategyResult;
        try {
            baseline = await checkWithSimulation(simulator, inputs, strategy, await planStrategy(strategy, inputs));
        } catch {
            continue; // a baseline that cannot be planned here (fit's budget too small for llama.cpp to start) is no rival
        }
        if (baseline.fits && (!best.fits || baseline.prediction.requestMs < best.prediction.requestMs))
            best = {...baseline, strategy: "optimal", notes: [...baseline.notes, `${strategy}'s plan, checked by llama.cpp's simulation, is predicted faster ` +
                `than the optimiser's (${baseline.prediction.requestMs.toFixed(0)} vs ${optimal.prediction.requestMs.toFixed(0)} ms per request)`]};
    }
    return best;
}
