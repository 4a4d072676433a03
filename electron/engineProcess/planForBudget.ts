import type {Budget, PlacementStrategy, Prediction, RuntimeSettings} from "../contract/ipc.js";
import type {ResolvedSettings} from "../contract/settings.js";
import type {InspectedModel} from "../engine/gguf/inspectGguf.js";
import type {EngineLlama} from "../engine/native/getEngineLlama.js";
import type {Placement, TensorBufferOverride} from "../engine/placement/Placement.js";
import {autoPlan} from "../engine/planner/autoPlan.js";
import type {StrategyResult} from "../engine/planner/strategies/StrategyResult.js";
import type {StrategyName} from "../contract/strategies.js";
import type {Workload} from "../engine/planner/types.js";
import {predictedMemoryReport} from "../engine/runtime/memoryReport.js";
import type {NativeBufferTypeMemory} from "../engine/native/tensorwiseBindings.js";
import type {PlanExplanation} from "../contract/planExplanation.js";
import {UNPRICED_HOST_SCRATCH} from "../contract/memory.js";
import {requestPredictor, type RequestPredictor} from "../engine/planner/requestPredictor.js";
import type {SpeculativeDecision} from "../engine/speculative/chooseSpeculative.js";
import type {SpeculativeAsked} from "../engine/speculative/planSpeculative.js";
import type {CommandComparisonView, LlamaCommandRequest} from "../contract/llamaCommand.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import type {CommandComparison} from "../engine/llamaArgs/commandPlan.js";
import {parseLlamaCommand} from "../engine/llamaArgs/parseLlamaCommand.js";
import {predictionDeviceKind, predictionRange, rangesSentence, readPredictionErrors} from "../engine/planner/predictionErrors.js";
import {isContended} from "../engine/profiler/cpuContention.js";

/** A plan ready to load: placement, llama.cpp parameters, settings and the prediction in the contract's shape. */
export type BudgetPlan = {
    placement: Placement;
    gpuLayers: number | "max";
    overrides: readonly TensorBufferOverride[];
    settings: ResolvedSettings;
    strategy: PlacementStrategy;
    prediction: Prediction;
    result: StrategyResult;
    /** Prices one request (a chat reply) of this plan at its own prompt and reply lengths. */
    predictRequest: RequestPredictor;
    /** Speculative decoding chosen with the plan, when it was asked about. */
    speculative: SpeculativeDecision | null;
    /** The user's llama.cpp command priced beside the plan, when one was given. */
    command?: CommandComparisonView;
    /** The device kind its predictions' errors are kept under (predictionErrors.ts). */
    deviceKind: string;
};

/**
 * Profile → plan with a strategy (default `optimal`) under the budget, packaged for loading and for the UI (the
 * loader renders its llama.cpp flags). `model` is the file already validated and inspected by the caller; it is not
 * read again.
 */
export async function planForBudget(options: {
    engine: EngineLlama; modelPath: string; model: InspectedModel; budget: Budget; settings: Partial<RuntimeSettings>;
    strategy?: PlacementStrategy; workload?: Workload; onProgress?: (message: string, fraction?: number) => void; signal?: AbortSignal;
    /** Measure this machine again even when a cached profile fits. Defaults to `false`. */
    refreshProfile?: boolean;
    /** Speculative decoding to plan with the placement. Defaults to none. */
    speculative?: SpeculativeAsked;
    /** A user's llama.cpp command to price beside the plan, and which of the two to load. */
    llamaCommand?: LlamaCommandRequest;
    /**
     * Where this machine's prediction errors are kept and the model's own key there (predictionErrors.ts): the
     * prediction then carries ranges, corrected by the model's measured replies. Absent: no ranges.
     */
    ranges?: {dir: string; modelKey: string};
}): Promise<BudgetPlan> {
    const strategy: StrategyName = options.strategy == null || options.strategy === "manual" || options.strategy === "command" ? "optimal" : options.strategy;
    const command = options.llamaCommand == null ? undefined : parseLlamaCommand(options.llamaCommand.line);
    const {result: planned, explanation, predictRequest, speculative, command: compared, cost, profile} = await autoPlan(options.engine, options.modelPath, {
        model: options.model, budget: options.budget, strategy, workload: options.workload, settings: options.settings,
        ...(options.refreshProfile === true ? {profile: {refresh: true}} : {}),
        ...(options.speculative != null ? {speculative: options.speculative} : {}),
        ...(command != null ? {llamaCommand: command} : {}),
        onProgress: options.onProgress, signal: options.signal
    });
    const view = compared == null ? undefined : commandView(compared, planned, options.llamaCommand!);
    let result = planned;
    if (options.llamaCommand?.load === "command") {
        // the user asked for their own command: load exactly it, or say why not (nothing is loaded instead)
        if (compared?.priced == null)
            throw new TensorwiseError("bad-request", `Your llama.cpp command cannot be loaded here: ${(compared?.refused ?? []).map((n) => `${n.flag}: ${n.why}`).join("; ")}`);
        if (!compared.priced.fits)
            throw new TensorwiseError("bad-request", `Your llama.cpp command does not fit: ${compared.priced.reason ?? "over the GPU's free memory"}. The plan fits; load it instead.`);
        result = compared.priced;
    }
    const deviceKind = predictionDeviceKind(cost.gpuDevice, result.settings.useGpu && result.resolved.onGpu.size > 0);
    return {
        placement: result.placement,
        gpuLayers: result.gpuLayers,
        overrides: result.overrides,
        settings: result.settings,
        strategy: result === planned ? result.strategy : "command",
        prediction: withRanges(toPrediction(result, result.placement.defaultBufferType, explanation), options.ranges,
            deviceKind, profile.cpuContention != null && isContended(profile.cpuContention)),
        deviceKind,
        result,
        // a request priced for the loaded placement: the plan's predictor, or the command's own figures
        predictRequest: result === planned ? predictRequest : requestPredictor(cost, result),
        speculative: result === planned ? speculative : null,
        ...(view != null ? {command: view} : {})
    };
}

/** The comparison in the contract's shape (no tensor lists: the differences name their groups). */
function commandView(c: CommandComparison, plan: StrategyResult, request: LlamaCommandRequest): CommandComparisonView {
    const p = c.priced;
    return {
        line: request.line, program: c.command.program, loaded: request.load,
        notPriced: c.command.notPriced.map((n) => ({...n})), refused: c.refused.map((n) => ({...n})),
        priced: p == null ? null : {
            fits: p.fits, reason: p.reason, gpuLayers: typeof p.gpuLayers === "number" ? p.gpuLayers : -1, overrideCount: p.overrides.length,
            ttftMs: p.prediction.ttftMs, tpotMs: p.prediction.tpotMs, vramBytes: p.prediction.vram.total, notes: [...p.notes]
        },
        plan: {ttftMs: plan.prediction.ttftMs, tpotMs: plan.prediction.tpotMs, vramBytes: plan.prediction.vram.total},
        overshootBytes: c.overshootBytes,
        differences: c.differences.map((d) => ({what: d.what, bytes: d.bytes, command: d.command, plan: d.plan,
            requestMsDelta: Number.isFinite(d.requestMsDelta) ? d.requestMsDelta : null})),
        knobDifferences: [...c.knobDifferences]
    };
}

/**
 * The prediction with its ranges from this machine's measured errors, centred on the model's own measured ratio where
 * it has one (the figures shown then are the corrected ones, and the explanation says so).
 */
function withRanges(prediction: Prediction, ranges: {dir: string; modelKey: string} | undefined, deviceKind: string, contended: boolean): Prediction {
    if (ranges == null || prediction.ttftMs == null || prediction.tpotMs == null) return prediction;
    const errors = readPredictionErrors(ranges.dir);
    const range = (figure: "ttft" | "tpot", predictedMs: number) =>
        predictionRange(errors, {figure, deviceKind, modelKey: ranges.modelKey, predictedMs, contended});
    const ttft = range("ttft", prediction.ttftMs);
    const tpot = range("tpot", prediction.tpotMs);
    return {
        ...prediction, ttftMs: ttft.centerMs, tpotMs: tpot.centerMs, ranges: {ttft, tpot},
        ...(prediction.explanation != null ? {explanation: {...prediction.explanation, ranges: rangesSentence(ttft, tpot, contended)}} : {})
    };
}

/** The planner's prediction in the contract's shape: one device row and one host row (weights, KV cache, scratch). */
function toPrediction(result: StrategyResult, gpuBufferType: string, explanation: PlanExplanation): Prediction {
    const {prediction} = result;
    return {
        explanation,
        ttftMs: prediction.ttftMs,
        tpotMs: prediction.tpotMs,
        promptTokens: prediction.promptTokens,
        memory: predictedMemoryReport([
            {
                name: gpuBufferType, isHost: gpuBufferType === "CPU", device: gpuBufferType, deviceType: "gpu" as const,
                model: prediction.vram.weights, context: prediction.vram.kv, compute: prediction.vram.scratch
            },
            {
                name: "CPU", isHost: true, device: "CPU", deviceType: "cpu" as const,
                model: prediction.hostWeightBytes, context: prediction.hostKvBytes, compute: prediction.hostScratchBytes ?? UNPRICED_HOST_SCRATCH
            }
        ] satisfies NativeBufferTypeMemory[])
    };
}
