import {stat} from "node:fs/promises";
import type {
    Budget, LoadedModelState, MachineDescription, ModelCard, PlacementStrategy, RuntimeSettings, TaskProgress
} from "../../contract/ipc.js";
import {assertLoadable, type InspectedModel} from "../gguf/inspectGguf.js";
import {describeMachine} from "../hardware/describeMachine.js";
import {getEngineLlama, type EngineGpu, type EngineLlama, type EngineLlamaOptions} from "../native/getEngineLlama.js";
import {compilePlacement} from "../placement/compilePlacement.js";
import {renderLayerSplitFlags, renderOverrideFlags} from "../placement/llamaCppFlags.js";
import type {Placement} from "../placement/Placement.js";
import {PlacedModel} from "../runtime/PlacedModel.js";
import {streamChatReply, type ChatReply, type PromptProgress} from "../runtime/streamChatReply.js";
import {inspectModelFile, toModelCard} from "./modelCard.js";
import type {EngineBenchProgress, EngineBenchRequest, EngineBenchResult, EngineChatRequest} from "./engineProtocol.js";
import {toPlacementView} from "./placementView.js";
import {layerSplit, toPlacement} from "../planner/resolvePlacement.js";
import {plannerModelFrom} from "../planner/types.js";
import {planForBudget} from "./planForBudget.js";
import {runBenchJob} from "./runBenchJob.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {withDefaultSettings} from "../../contract/settings.js";
import type {RequestPredictor} from "../planner/requestPredictor.js";


/** `predictRequest`: the plan's cost model for a reply's own token counts; absent for a load without a plan. */
type Loaded = {placed: PlacedModel; state: LoadedModelState; predictRequest?: RequestPredictor};

/** Everything the engine process does, one model at a time. Owned by engineMain; callable directly in tests. */
export class EngineService {
    private loaded: Loaded | null = null;
    private readonly streams = new Map<string, AbortController>();
    private readonly inspected = new Map<string, InspectedModel>();
    /** Running auto-offloads by task id, for {@link cancelTask}. */
    private readonly tasks = new Map<string, AbortController>();
    /** The benchmark running in this process; it loads its own models, so chat and loads wait for it. */
    private benchRun: {benchId: string; controller: AbortController} | null = null;

    private constructor(readonly engine: EngineLlama, private readonly onProgress: (progress: TaskProgress) => void,
        private readonly sequences: number) {}

    /** `sequences`: parallel sequences in each loaded model's context (see `PlacedModelOptions.sequences`). Defaults to 1. */
    static async create(options: {
        gpu?: EngineGpu; maxThreads?: number; onProgress?: (progress: TaskProgress) => void;
        onLog?: EngineLlamaOptions["onLog"]; logLevel?: EngineLlamaOptions["logLevel"]; sequences?: number;
        rpcServers?: EngineLlamaOptions["rpcServers"];
    } = {}): Promise<EngineService> {
        const engine = await getEngineLlama({
            gpu: options.gpu, maxThreads: options.maxThreads, onLog: options.onLog, logLevel: options.logLevel, rpcServers: options.rpcServers
        });
        return new EngineService(engine, options.onProgress ?? (() => {}), options.sequences ?? 1);
    }

    describe(): MachineDescription {
        return describeMachine(this.engine);
    }

    async inspect(modelPath: string): Promise<ModelCard> {
        return toModelCard(modelPath, await this.inspectCached(modelPath));
    }

    current(): LoadedModelState | null {
        return this.loaded?.state ?? null;
    }

    /** The loaded model itself, for servers that run their own sequences on its context; `null` when none is loaded. */
    placedModel(): PlacedModel | null {
        return this.loaded?.placed ?? null;
    }

    /** Loads with llama.cpp's plain layer split (`-ngl`), the way other apps do. */
    async load(request: {path: string; gpuLayers: number | "max"; settings: Partial<RuntimeSettings>; taskId: string}): Promise<LoadedModelState> {
        const model = await this.inspectForTask(request.path, request.taskId);
        const machine = this.describe();
        const layerCount = model.layerCount ?? 0;
        const gpuLayers = machine.gpu == null ? 0 : request.gpuLayers === "max" ? layerCount + 1 : request.gpuLayers;
        const plannerModel = plannerModelFrom(model);
        const placement = toPlacement(plannerModel, layerSplit(plannerModel, gpuLayers), machine.gpu?.bufferType ?? null);
        const settings = withDefaultSettings(request.settings);
        const flags = renderLayerSplitFlags(gpuLayers, {layerCount, modelPath: request.path, ubatch: settings.batchSize, threads: settings.threads ?? undefined}).command;
        return await this.loadPlaced({
            path: request.path, model, taskId: request.taskId, placement, settings, strategy: "layers",
            gpuLayers, overrides: [], llamaCppFlags: flags, prediction: null
        });
    }

    /**
     * Profile (the cached profile of this machine when one fits, unless `refreshProfile`) → plan → load with the best
     * strategy (default `optimal`), within the budget. The plan, with its memory per device, is sent as progress
     * before the weights load. {@link cancelTask} stops it until then; the model loaded before stays loaded.
     */
    async autoOffload(request: {
        path: string; budget: Budget; settings: Partial<RuntimeSettings>; strategy?: PlacementStrategy; taskId: string; refreshProfile?: boolean;
    }): Promise<LoadedModelState> {
        const {taskId} = request;
        const controller = new AbortController();
        this.tasks.set(taskId, controller);
        try {
            const model = await this.inspectForTask(request.path, taskId);
            const settings = withDefaultSettings(request.settings);
            const plan = await planForBudget({
                engine: this.engine, modelPath: request.path, budget: request.budget, settings, strategy: request.strategy,
                refreshProfile: request.refreshProfile, signal: controller.signal,
                onProgress: (message, fraction) => {
                    const step = message.startsWith("profile:") ? "profile" : message.startsWith("validating") ? "inspect" : "plan";
                    this.progress(taskId, step, fraction ?? null, message.replace(/^profile: /, ""));
                }
            });
            controller.signal.throwIfAborted();
            this.onProgress({
                taskId, step: "plan", progress: 1, detail: `${plan.strategy}: planned, loading its weights`,
                plan: {
                    placement: toPlacementView({
                        strategy: plan.strategy, placement: plan.placement, model, overrides: plan.overrides, gpuLayers: plan.gpuLayers,
                        llamaCppFlags: plan.llamaCppFlags
                    }),
                    prediction: plan.prediction, settings: plan.settings
                }
            });
            return await this.loadPlaced({
                path: request.path, model, taskId, placement: plan.placement, settings: plan.settings,
                strategy: plan.strategy, gpuLayers: plan.gpuLayers, overrides: plan.overrides, llamaCppFlags: plan.llamaCppFlags,
                prediction: plan.prediction, predictRequest: plan.predictRequest
            });
        } catch (error) {
            if (controller.signal.aborted)
                throw new TensorwiseError("aborted", "Auto-offload was cancelled before loading; the model loaded before, if any, is still loaded.");
            throw error;
        } finally {
            this.tasks.delete(taskId);
        }
    }

    /** Cancels a running auto-offload (see {@link autoOffload}); an unknown or finished task is ignored. */
    cancelTask(taskId: string): void {
        this.tasks.get(taskId)?.abort();
    }

    /** Loads with an explicit per-tensor placement: every layer offloaded, then overrides move tensors back. */
    async loadWithPlacement(request: {
        path: string; placement: Placement; settings: Partial<RuntimeSettings>; taskId: string;
        strategy?: PlacementStrategy; prediction?: LoadedModelState["prediction"];
    }): Promise<LoadedModelState> {
        const model = await this.inspectForTask(request.path, request.taskId);
        // every layer is offloaded to the first GPU (or stays on the CPU without one): a file naming another default
        // would be silently ignored, so it is refused
        const device = this.describe().gpu?.bufferType ?? "CPU";
        if (request.placement.defaultBufferType !== device)
            throw new TensorwiseError("bad-placement", `The placement's defaultBufferType is ${JSON.stringify(request.placement.defaultBufferType.slice(0, 40))}, ` +
                `but this machine loads models onto ${device}: set "defaultBufferType": "${device}" (or run with the matching --gpu).`);
        const settings = withDefaultSettings(request.settings);
        const compiled = compilePlacement(request.placement, model.tensors);
        const flags = renderOverrideFlags(compiled.overrides, {
            modelPath: request.path, ubatch: settings.batchSize, threads: settings.threads ?? undefined
        }).command;
        return await this.loadPlaced({
            path: request.path, model, taskId: request.taskId, placement: request.placement, settings,
            strategy: request.strategy ?? "manual", gpuLayers: "max", overrides: compiled.overrides, llamaCppFlags: flags,
            prediction: request.prediction ?? null
        });
    }

    async unload(): Promise<void> {
        for (const controller of this.streams.values())
            controller.abort();
        const loaded = this.loaded;
        this.loaded = null;
        await loaded?.placed.dispose();
    }

    async chat(request: EngineChatRequest, onDelta: (text: string, elapsedMs: number, tokens: number) => void,
        onPromptProgress?: (progress: PromptProgress) => void): Promise<ChatReply> {
        this.refuseWhileBenching("chat");
        const loaded = this.loaded;
        if (loaded == null)
            throw new TensorwiseError("no-model", "no model is loaded: load one first");
        const controller = new AbortController();
        this.streams.set(request.streamId, controller);
        try {
            const {streamId: _streamId, ...options} = request;
            const reply = await streamChatReply(loaded.placed, {...options, signal: controller.signal, onText: onDelta, onPromptProgress});
            if (loaded.predictRequest == null)
                return reply;
            // priced by the tokens this reply really evaluated and generated, not the planning workload
            const {ttftMs, tpotMs} = loaded.predictRequest(reply.timing.promptTokens, reply.timing.generatedTokens);
            return {...reply, timing: {...reply.timing, predicted: {ttftMs, tpotMs}}};
        } finally {
            this.streams.delete(request.streamId);
        }
    }

    stop(streamId: string): void {
        this.streams.get(streamId)?.abort();
    }

    /** Unloads the chat model and runs a benchmark (see {@link runBenchJob}); one at a time. */
    async bench(request: EngineBenchRequest, onProgress: (progress: EngineBenchProgress) => void): Promise<EngineBenchResult> {
        this.refuseWhileBenching("start another benchmark");
        const controller = new AbortController();
        this.benchRun = {benchId: request.benchId, controller};
        try {
            await this.unload();
            return await runBenchJob(this.engine, request, {signal: controller.signal, emit: onProgress});
        } finally {
            this.benchRun = null;
        }
    }

    benchStop(benchId: string): void {
        if (this.benchRun?.benchId === benchId)
            this.benchRun.controller.abort();
    }

    async dispose(): Promise<void> {
        this.benchRun?.controller.abort();
        await this.unload();
        await this.engine.llama.dispose();
    }

    private async loadPlaced(options: {
        path: string; model: InspectedModel; taskId: string; placement: Placement; settings: RuntimeSettings;
        strategy: PlacementStrategy; gpuLayers: number | "max"; overrides: readonly {pattern: string; bufferType: string}[];
        llamaCppFlags: string; prediction: LoadedModelState["prediction"]; predictRequest?: RequestPredictor;
    }): Promise<LoadedModelState> {
        this.refuseWhileBenching("load a model");
        await this.unload();
        this.progress(options.taskId, "load", 0, "loading weights");
        const placed = await PlacedModel.load(this.engine, {
            modelPath: options.path,
            gpuLayers: options.gpuLayers,
            overrides: options.overrides,
            useMmap: options.settings.useMmap ?? undefined,
            contextSize: options.settings.contextSize,
            batchSize: options.settings.batchSize,
            threads: options.settings.threads ?? undefined,
            sequences: this.sequences,
            onProgress: (progress) => this.progress(options.taskId, "load", progress, "loading weights")
        });
        this.progress(options.taskId, "load", 1, "loaded");
        const state: LoadedModelState = {
            card: toModelCard(options.path, options.model),
            placement: toPlacementView({
                strategy: options.strategy, placement: options.placement, model: options.model, overrides: options.overrides,
                gpuLayers: options.gpuLayers, llamaCppFlags: options.llamaCppFlags
            }),
            prediction: options.prediction,
            measured: placed.memory(),
            settings: options.settings,
            loadMs: placed.loadMs
        };
        this.loaded = {placed, state, ...(options.predictRequest != null ? {predictRequest: options.predictRequest} : {})};
        return state;
    }

    private refuseWhileBenching(what: string): void {
        if (this.benchRun != null)
            throw new TensorwiseError("bench-running", `a benchmark is running: cannot ${what} until it finishes or is stopped`);
    }

    private async inspectForTask(modelPath: string, taskId: string): Promise<InspectedModel> {
        this.progress(taskId, "inspect", null, "validating the GGUF file");
        const model = await this.inspectCached(modelPath);
        assertLoadable(model);
        return model;
    }

    private async inspectCached(modelPath: string): Promise<InspectedModel> {
        const {size, mtimeMs} = await stat(modelPath);
        const key = `${modelPath}\0${size}\0${mtimeMs}`;
        const cached = this.inspected.get(key);
        if (cached != null)
            return cached;
        const model = await inspectModelFile(modelPath);
        this.inspected.set(key, model);
        return model;
    }

    private progress(taskId: string, step: string, progress: number | null, detail?: string): void {
        this.onProgress({taskId, step, progress, detail});
    }
}
