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
import type {RequestPredictor} from "../engine/planner/requestPredictor.js";
import type {SpeculativeDecision} from "../engine/speculative/chooseSpeculative.js";
import type {SpeculativeAsked} from "../engine/speculative/planSpeculative.js";

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
}): Promise<BudgetPlan> {
    const strategy: StrategyName = options.strategy == null || options.strategy === "manual" ? "optimal" : options.strategy;
    const {result, explanation, predictRequest, speculative} = await autoPlan(options.engine, options.modelPath, {
        model: options.model, budget: options.budget, strategy, workload: options.workload, settings: options.settings,
        ...(options.refreshProfile === true ? {profile: {refresh: true}} : {}),
        ...(options.speculative != null ? {speculative: options.speculative} : {}),
        onProgress: options.onProgress, signal: options.signal
    });
    return {
        placement: result.placement,
        gpuLayers: result.gpuLayers,
        overrides: result.overrides,
        settings: result.settings,
        strategy: result.strategy,
        prediction: toPrediction(result, result.placement.defaultBufferType, explanation),
        result,
        predictRequest,
        speculative
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
