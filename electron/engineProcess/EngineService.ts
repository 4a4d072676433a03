import {randomUUID} from "node:crypto";
import type {ServedRequest, ServerStartupStep} from "../contract/server.js";
import type {MemoryReport} from "../contract/memory.js";
import {defaultProfileCacheDir} from "../engine/profiler/profileMachine.js";
import type {
    Budget, LoadedModelState, MachineDescription, ModelCard, PlacementStrategy, PlacementView, RuntimeSettings, TaskProgress
} from "../contract/ipc.js";
import {assertLoadable, type InspectedModel} from "../engine/gguf/inspectGguf.js";
import {describeMachine} from "../engine/hardware/describeMachine.js";
import {getEngineLlama, type EngineGpu, type EngineLlama, type EngineLlamaOptions} from "../engine/native/getEngineLlama.js";
import {compilePlacement} from "../engine/placement/compilePlacement.js";
import {renderLlamaCppFlags} from "../engine/placement/llamaCppFlags.js";
import type {Placement} from "../engine/placement/Placement.js";
import {loadFailure} from "../engine/runtime/loadFailure.js";
import {PlacedModel, settingsLoadOptions} from "../engine/runtime/PlacedModel.js";
import {streamChatReply, type ChatReply, type PromptProgress} from "../engine/runtime/streamChatReply.js";
import {inspectModelHeader, toModelCard} from "./modelCard.js";
import {ValidatedFileCache} from "../engine/gguf/ValidatedFileCache.js";
import {pinModelFile, type PinnedModelFile} from "../engine/gguf/pinModelFile.js";
import type {
    EngineBenchProgress, EngineBenchRequest, EngineBenchResult, EngineChatRequest, EngineServeRequest, EngineServeState
} from "../contract/engineProtocol.js";
import {comparePlannedMemory, type PlannedMemoryInputs} from "./comparePlannedMemory.js";
import {toPlacementView} from "./placementView.js";
import {layerSplit, toPlacement} from "../engine/planner/resolvePlacement.js";
import {plannerModelFrom} from "../engine/planner/types.js";
import {planForBudget} from "./planForBudget.js";
import {planDevicesForBudget} from "./planDevicesForBudget.js";
import {plannedSpeculative, unplannedSpeculative, type LoadSpeculative} from "./speculativeLoad.js";
import type {CommandComparisonView, LlamaCommandRequest} from "../contract/llamaCommand.js";
import {predictionModelKey, recordPredictionError} from "../engine/planner/predictionErrors.js";
import type {SpeculativeRequest} from "../contract/speculative.js";
import {recordAcceptance} from "../engine/speculative/acceptance.js";
import {speculativeFlags, withSpeculativeOverrides} from "../engine/speculative/speculativeFlags.js";
import {planDeviceCount} from "../engine/planner/devices/autoPlanDevices.js";
import {runBenchJob} from "./runBenchJob.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import {resolveSettings, type ResolvedSettings} from "../contract/settings.js";
import {fairPolicy} from "../serve/scheduling/schedulingPolicies.js";
import {scheduledChatReply} from "../serve/scheduledChatReply.js";
import {PromptWorker} from "../serve/generation/promptWorker/PromptWorker.js";
import {appToolReply, needsChatLayer} from "../serve/appToolReply.js";
import {serveOpenAi, type OpenAiServer} from "../serve/serveOpenAi.js";

/** The app's server: requests that may wait for a sequence, and each one's time limit (as `tensorwise serve`'s defaults). */
const APP_SERVER_QUEUE = 64;
/** Sequences kept for the app's own chat while the server is on (none when there is only one). */
const APP_RESERVED_SEQUENCES = 1;
const APP_SERVER_TIMEOUT_MS = 600_000;
import type {RequestPredictor} from "../engine/planner/requestPredictor.js";
import type {HubQuantList} from "../contract/hub.js";
import {listHubQuants} from "../engine/hub/listHubQuants.js";
import {progressDetail, progressStep} from "../engine/planner/progressStep.js";


/**
 * `predictRequest`: the plan's cost model for a reply's own token counts; absent for a load without a plan.
 * `planned`: what the memory comparison compares against, kept to compare again when the memory changes (the server's
 * context of several sequences, its embedding context); `embeddings`: the embedding context's report it last counted.
 */
/** Fewest prompt tokens, and reply tokens, for a reply's TTFT, and TPOT, to count as a measurement of the prediction. */
const MIN_TIMED_PROMPT = 16;
const MIN_TIMED_REPLY = 8;

type Loaded = {
    placed: PlacedModel; state: LoadedModelState; predictRequest?: RequestPredictor;
    /** The model file, held while the model is loaded: whatever opens it later (the server's prompt worker) reads what was validated. */
    file: PinnedModelFile;
    planned: Pick<PlannedMemoryInputs, "plannedWeights" | "prediction" | "budgetBytes">; embeddings: MemoryReport | null;
    /** Where this load's speculation records the α its replies measure (engine/speculative/acceptance.ts). */
    acceptanceKey?: string;
    /** Where its replies' prediction errors are kept (engine/planner/predictionErrors.ts); absent for a load without a plan. */
    predictionKey?: {deviceKind: string; modelKey: string};
    /** Templates the app's replies with tools off this thread (an MCP server's schemas are untrusted); made on first use, closed with the model. */
    toolPrompts?: PromptWorker;
};

/** Everything the engine process does, one model at a time. Owned by engineMain; callable directly in tests. */
export class EngineService {
    private loaded: Loaded | null = null;
    /** Replies being written, by stream id: how to stop each, and when it has really stopped using the context. */
    private readonly streams = new Map<string, {controller: AbortController; settled: Promise<unknown>}>();
    private readonly inspected = new ValidatedFileCache<InspectedModel>();
    /** Running auto-offloads by task id, for {@link cancelTask}. */
    private readonly tasks = new Map<string, AbortController>();
    /** The benchmark running in this process; it loads its own models, so chat and loads wait for it. */
    private benchRun: {benchId: string; controller: AbortController} | null = null;
    /** The OpenAI-compatible server on the loaded model, while the app has it on. */
    private serving: {server: OpenAiServer; request: EngineServeRequest} | null = null;
    /** Loads, unloads and server starts/stops, one at a time (each replaces the context the others use). */
    private lifecycle: Promise<unknown> = Promise.resolve();

    private constructor(readonly engine: EngineLlama, private readonly onProgress: (progress: TaskProgress) => void,
        private readonly sequences: number) {}

    /** `sequences`: parallel sequences in each loaded model's context (see `PlacedModelOptions.sequences`). Defaults to 1. */
    static async create(options: {
        gpu?: EngineGpu; maxThreads?: number; onProgress?: (progress: TaskProgress) => void;
        onLog?: EngineLlamaOptions["onLog"]; logLevel?: EngineLlamaOptions["logLevel"]; sequences?: number;
        rpcServers?: EngineLlamaOptions["rpcServers"]; onRpcUnreachable?: EngineLlamaOptions["onRpcUnreachable"];
    } = {}): Promise<EngineService> {
        const engine = await getEngineLlama({
            gpu: options.gpu, maxThreads: options.maxThreads, onLog: options.onLog, logLevel: options.logLevel, rpcServers: options.rpcServers,
            onRpcUnreachable: options.onRpcUnreachable
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
        const loaded = this.loaded;
        // the server makes its embedding context on its first /v1/embeddings request: counted from then on (while the
        // server runs its context stays; closeServer counts it out)
        const embeddings = this.serving?.server.embeddings.memory ?? null;
        if (loaded != null && this.serving != null && embeddings !== loaded.embeddings)
            this.remeasure(loaded, embeddings);
        return loaded?.state ?? null;
    }

    /** Measures the loaded model's context again and compares it with its plan, with `embeddings` (the server's embedding context) beside it. */
    private remeasure(loaded: Loaded, embeddings: MemoryReport | null): void {
        const measured = loaded.placed.memory();
        loaded.embeddings = embeddings;
        loaded.state = {...loaded.state, measured, memory: comparePlannedMemory({...loaded.planned, measured, machine: this.describe(), embeddings})};
    }

    /** The loaded model itself, for servers that run their own sequences on its context; `null` when none is loaded. */
    placedModel(): PlacedModel | null {
        return this.loaded?.placed ?? null;
    }

    /**
     * Loads with llama.cpp's plain layer split (`-ngl`), the way other apps do. Like every load here, the file is
     * pinned (pinModelFile.ts) before it is validated, and llama.cpp loads the pinned file: what was validated.
     */
    async load(request: {path: string; gpuLayers: number | "max"; settings: Partial<RuntimeSettings>; taskId: string; speculative?: SpeculativeRequest}): Promise<LoadedModelState> {
        return await this.withPinned(request.path, async (file) => await this.loadPinned(request, file));
    }

    /**
     * Runs a load with `modelPath` pinned (pinModelFile.ts): validation, planning and llama.cpp read the pinned file.
     * The model loaded keeps it until it is unloaded; a load that fails releases it.
     */
    private async withPinned(modelPath: string, load: (file: PinnedModelFile) => Promise<LoadedModelState>): Promise<LoadedModelState> {
        const file = await pinModelFile(modelPath);
        try {
            return await load(file);
        } catch (error) {
            if (this.loaded?.file !== file)
                await file.release();
            throw error;
        }
    }

    private async loadPinned(request: Parameters<EngineService["load"]>[0],
        file: PinnedModelFile): Promise<LoadedModelState> {
        const model = await this.inspectForTask(request.path, request.taskId, file.path);
        const machine = this.describe();
        const layerCount = model.layerCount ?? 0;
        const gpuLayers = machine.gpu == null ? 0 : request.gpuLayers === "max" ? layerCount + 1 : request.gpuLayers;
        const speculative = await unplannedSpeculative(request.path, model, request.speculative, {modelWhollyOnGpu: gpuLayers > layerCount, unpricedBecause: "a load with a layer count"});
        const plannerModel = plannerModelFrom(model);
        const placement = toPlacement(plannerModel, layerSplit(plannerModel, gpuLayers), machine.gpu?.bufferType ?? null);
        const settings = this.resolve(request.settings, gpuLayers !== 0, model);
        return await this.loadPlaced({
            path: request.path, file, model, taskId: request.taskId, placement, settings, strategy: "layers",
            gpuLayers, overrides: [], prediction: null, ...(speculative != null ? {speculative} : {})
        });
    }

    /**
     * Profile (the cached profile of this machine when one fits, unless `refreshProfile`) → plan → load with the best
     * strategy (default `optimal`), within the budget. The plan, with its memory per device, is sent as progress
     * before the weights load. {@link cancelTask} stops it until then; the model loaded before stays loaded.
     */
    async autoOffload(request: {
        path: string; budget: Budget; settings: Partial<RuntimeSettings>; strategy?: PlacementStrategy; taskId: string; refreshProfile?: boolean;
        /** Speculative decoding to plan with the placement (contract/speculative.ts). Defaults to none. */
        speculative?: SpeculativeRequest;
        /** A llama.cpp command to price beside the plan, and which of the two to load (contract/llamaCommand.ts). */
        llamaCommand?: LlamaCommandRequest;
    }): Promise<LoadedModelState> {
        const {taskId} = request;
        const controller = new AbortController();
        this.tasks.set(taskId, controller);
        try {
            return await this.withPinned(request.path, async (file) => await this.autoOffloadPinned(request, file, controller));
        } catch (error) {
            if (controller.signal.aborted)
                throw new TensorwiseError("aborted", "Auto-offload was cancelled before loading; the model loaded before, if any, is still loaded.");
            throw error;
        } finally {
            this.tasks.delete(taskId);
        }
    }

    /** {@link autoOffload} on the pinned `file`: the planner's llama.cpp simulations and the load read it, not the path. */
    private async autoOffloadPinned(request: Parameters<EngineService["autoOffload"]>[0], file: PinnedModelFile,
        controller: AbortController): Promise<LoadedModelState> {
        const {taskId} = request;
        // validated and inspected once here; the planner is handed the result
        const model = await this.inspectForTask(request.path, taskId, file.path);
        const onProgress = (message: string, fraction?: number): void => {
            this.progress(taskId, progressStep(message), fraction ?? null, progressDetail(message));
        };
        const common = {
            engine: this.engine, modelPath: file.path, model, budget: request.budget, settings: request.settings,
            signal: controller.signal, onProgress
        };
        // several devices (a second GPU, an rpc-server): the K-device planner (planner/devices/planDevices.ts)
        const multiDevice = planDeviceCount(this.engine.bindings.tensorwiseGetDevices()) > 1 && (request.strategy ?? "optimal") === "optimal";
        if (multiDevice && request.llamaCommand != null)
            throw new TensorwiseError("bad-request", "A llama.cpp command is priced against one GPU and the CPU; this machine plans across several devices. " +
                "Price it with `tensorwise plan MODEL --gpu <kind> --llama-args \"…\"` on one device.");
        const plan = multiDevice
            ? await planDevicesForBudget(common)
            : await planForBudget({...common, strategy: request.strategy, refreshProfile: request.refreshProfile,
                // α is kept under the model's own path, not the pinned file's (pinModelFile.ts)
                ...(request.speculative != null ? {speculative: {...request.speculative, acceptancePath: request.path}} : {}),
                ...(request.llamaCommand != null ? {llamaCommand: request.llamaCommand} : {}),
                ranges: {dir: defaultProfileCacheDir(), modelKey: predictionModelKey(request.path)}});
        controller.signal.throwIfAborted();
        // the K-device planner does not price speculation: a kind named runs unpriced, "auto" declines
        const speculative = plan.speculative != null ? plannedSpeculative(request.path, plan.speculative)
            : await unplannedSpeculative(request.path, model, request.speculative,
                {modelWhollyOnGpu: false, unpricedBecause: "a plan across several devices", signal: controller.signal});
        const load = {
            path: request.path, file, model, taskId, placement: plan.placement, settings: plan.settings,
            strategy: plan.strategy, gpuLayers: plan.gpuLayers, overrides: plan.overrides, prediction: plan.prediction,
            budgetBytes: "result" in plan ? plan.result.budgetBytes : undefined,
            rpcServers: "rpcServers" in plan ? plan.rpcServers : undefined,
            predictRequest: "predictRequest" in plan ? plan.predictRequest : undefined,
            ...(speculative != null ? {speculative} : {}),
            ...("command" in plan && plan.command != null ? {command: plan.command} : {}),
            ...("deviceKind" in plan ? {predictionKey: {deviceKind: plan.deviceKind, modelKey: predictionModelKey(request.path)}} : {})
        };
        this.onProgress({
            taskId, step: "plan", progress: 1, detail: `${plan.strategy}: planned, loading its weights`,
            plan: {placement: this.placementView(load), prediction: plan.prediction, settings: plan.settings}
        });
        return await this.loadPlaced(load);
    }

    /** A hub repository's quants (at `main`), each planned on this machine from its header alone; {@link cancelTask} stops it. */
    async hubQuants(request: {repo: string; profile: boolean; taskId: string}): Promise<HubQuantList> {
        // a profile taken beside a running benchmark would time both wrong
        this.refuseWhileBenching("plan a model's quants");
        const controller = new AbortController();
        this.tasks.set(request.taskId, controller);
        try {
            return await listHubQuants(this.engine, {...request, revision: "main", signal: controller.signal,
                onProgress: (message) => this.progress(request.taskId, "plan", null, message)});
        } catch (error) {
            if (controller.signal.aborted) throw new TensorwiseError("aborted", "Planning the quants was cancelled.");
            throw error;
        } finally {
            this.tasks.delete(request.taskId);
        }
    }

    /** Cancels a running auto-offload (see {@link autoOffload}); an unknown or finished task is ignored. */
    cancelTask(taskId: string): void {
        this.tasks.get(taskId)?.abort();
    }

    /** Loads with an explicit per-tensor placement: every layer offloaded, then overrides move tensors back. */
    async loadWithPlacement(request: {
        path: string; placement: Placement; settings: Partial<RuntimeSettings>; taskId: string;
        strategy?: PlacementStrategy; prediction?: LoadedModelState["prediction"]; speculative?: SpeculativeRequest;
    }): Promise<LoadedModelState> {
        return await this.withPinned(request.path, async (file) => await this.loadWithPlacementPinned(request, file));
    }

    private async loadWithPlacementPinned(request: Parameters<EngineService["loadWithPlacement"]>[0], file: PinnedModelFile): Promise<LoadedModelState> {
        const model = await this.inspectForTask(request.path, request.taskId, file.path);
        // a placement file may send any tensor back to the host: a draft model goes there too
        const speculative = await unplannedSpeculative(request.path, model, request.speculative, {modelWhollyOnGpu: false, unpricedBecause: "a load from a placement file"});
        // every layer is offloaded to the first GPU (or stays on the CPU without one): a file naming another default
        // would be silently ignored, so it is refused
        const device = this.describe().gpu?.bufferType ?? "CPU";
        if (request.placement.defaultBufferType !== device)
            throw new TensorwiseError("bad-placement", `The placement's defaultBufferType is ${JSON.stringify(request.placement.defaultBufferType.slice(0, 40))}, ` +
                `but this machine loads models onto ${device}: set "defaultBufferType": "${device}" (or run with the matching --gpu).`);
        const settings = this.resolve(request.settings, true, model);
        const compiled = compilePlacement(request.placement, model.tensors);
        return await this.loadPlaced({
            path: request.path, file, model, taskId: request.taskId, placement: request.placement, settings,
            strategy: request.strategy ?? "manual", gpuLayers: "max", overrides: compiled.overrides,
            prediction: request.prediction ?? null, ...(speculative != null ? {speculative} : {})
        });
    }

    async unload(): Promise<void> {
        await this.exclusive(() => this.unloadNow());
    }

    private async unloadNow(): Promise<void> {
        await this.stopReplies();
        await this.closeServer();
        const loaded = this.loaded;
        this.loaded = null;
        await loaded?.toolPrompts?.close();
        await loaded?.placed.dispose();
        await loaded?.file.release();
    }

    /**
     * Serves the loaded model through the OpenAI-compatible API on `request.parallel` sequences (the context is made
     * again with them; the weights stay), restarting a server already running. Replies in flight are stopped.
     */
    async serveStart(request: EngineServeRequest, onServed?: (served: ServedRequest) => void,
        onStartup?: (step: ServerStartupStep, fraction: number | null) => void): Promise<EngineServeState> {
        return await this.exclusive(async () => {
            this.refuseWhileBenching("start the server");
            const loaded = this.loaded;
            if (loaded == null)
                throw new TensorwiseError("no-model", "no model is loaded: load one, and the server starts serving it");
            if (this.streams.size > 0)
                onStartup?.("stopping-reply", null);
            await this.stopReplies();
            await this.closeServer();
            if (loaded.placed.context.totalSequences !== request.parallel)
                onStartup?.("loading-context", null);
            await this.reopenContext(loaded, request.parallel);
            try {
                const server = await serveOpenAi({
                    placed: loaded.placed, modelId: loaded.state.card.fileName, host: request.host, port: request.port,
                    apiKeys: request.apiKeys, corsOrigins: request.corsOrigins, queueLength: APP_SERVER_QUEUE, reservedForApp: APP_RESERVED_SEQUENCES, requestTimeoutMs: APP_SERVER_TIMEOUT_MS,
                    policy: fairPolicy, log: (line) => console.log(`[serve] ${line}`), onServed, onStartup,
                    kv: {cacheDir: defaultProfileCacheDir(), ...(request.kvDiskBudgetMiB != null ? {diskBudget: {kind: "mib", mib: request.kvDiskBudgetMiB}} : {})}
                });
                this.serving = {server, request};
                return {url: server.url, port: server.port, modelId: loaded.state.card.fileName, measured: loaded.state.measured};
            } catch (error) {
                await this.reopenContext(loaded, this.sequences);
                throw new TensorwiseError("server-failed", listenFailure(error, request));
            }
        });
    }

    /** Replaces the running server's keys without a restart; throws when no server runs. */
    serveKeys(apiKeys: string[]): void {
        const serving = this.serving;
        if (serving == null)
            throw new TensorwiseError("server-failed", "the server is not running: its keys change with the next start");
        serving.server.setApiKeys(apiKeys);
        serving.request = {...serving.request, apiKeys};
    }

    /** Stops the server; the model gets its one sequence for the app's replies back. */
    async serveStop(): Promise<void> {
        await this.exclusive(async () => {
            await this.closeServer();
            if (this.loaded != null)
                await this.reopenContext(this.loaded, this.sequences);
        });
    }

    private async closeServer(): Promise<void> {
        const serving = this.serving;
        this.serving = null;
        await serving?.server.close();
        if (this.loaded?.embeddings != null)
            this.remeasure(this.loaded, null);
    }

    /** The loaded model with a context of `sequences` sequences; unloaded (with the reason thrown) when that fails. */
    private async reopenContext(loaded: Loaded, sequences: number): Promise<void> {
        if (loaded.placed.context.totalSequences === sequences)
            return;
        try {
            loaded.placed = await loaded.placed.withSequences(sequences);
            this.remeasure(loaded, null);
        } catch (error) {
            this.loaded = null;
            await loaded.toolPrompts?.close();
            await loaded.placed.model.dispose().catch(() => {});
            await loaded.file.release().catch(() => {});
            throw error;
        }
    }

    /**
     * Stops every reply being written and waits until each has left its sequence: an aborted generation still finishes
     * the batch it is evaluating, and disposing the context (or the model) under it crashes the engine (SIGSEGV).
     */
    private async stopReplies(): Promise<void> {
        const replies = [...this.streams.values()];
        for (const reply of replies)
            reply.controller.abort();
        await Promise.allSettled(replies.map((reply) => reply.settled));
    }

    private exclusive<T>(work: () => Promise<T>): Promise<T> {
        const run = this.lifecycle.catch(() => undefined).then(work);
        this.lifecycle = run;
        return run;
    }

    async chat(request: EngineChatRequest, onDelta: (text: string, elapsedMs: number, tokens: number) => void,
        onPromptProgress?: (progress: PromptProgress) => void): Promise<ChatReply> {
        this.refuseWhileBenching("chat");
        const controller = new AbortController();
        // stoppable while it waits; nothing to wait for until it writes (a lifecycle step waiting on it would deadlock)
        this.streams.set(request.streamId, {controller, settled: Promise.resolve()});
        try {
            // a load, unload or server start/stop in progress replaces the model or its context (a server start
            // calibrates on the new context's first sequence, which the app's own replies also use): start after it
            for (let pending = this.lifecycle; ; pending = this.lifecycle) {
                await pending.catch(() => undefined);
                if (pending === this.lifecycle)
                    break;
            }
            this.refuseWhileBenching("chat");
            const loaded = this.loaded;
            if (loaded == null)
                throw new TensorwiseError("no-model", "no model is loaded: load one first");
            const {streamId: _streamId, conversationId, tools, replyRounds, ...options} = request;
            // tools, or tool turns to template: llama.cpp's chat layer, as the server answers a client's tools
            const toolReply = needsChatLayer({tools, history: options.history, replyRounds})
                ? {tools: tools ?? null, replyRounds: replyRounds ?? []} : null;
            // while the server is on, the app's reply shares its sequences and scheduler with the API clients
            const writing = toolReply != null
                ? appToolReply(loaded.placed, this.serving?.server ?? null, {...options, ...toolReply, conversationId, signal: controller.signal, onText: onDelta,
                    worker: loaded.toolPrompts ??= new PromptWorker(loaded.placed.options.modelPath)})
                : this.serving != null
                ? scheduledChatReply(this.serving.server, loaded.placed.model, {...options, conversationId, signal: controller.signal, onText: onDelta})
                : streamChatReply(loaded.placed, {...options, signal: controller.signal, onText: onDelta, onPromptProgress});
            this.streams.set(request.streamId, {controller, settled: writing});
            const reply = await writing;
            // α measured on the user's own replies, for the next plan (speculative/acceptance.ts)
            if (reply.speculative != null && loaded.acceptanceKey != null)
                await recordAcceptance(defaultProfileCacheDir(), loaded.acceptanceKey, {...reply.speculative, generated: reply.timing.generatedTokens}).catch(() => undefined);
            if (loaded.predictRequest == null)
                return reply;
            // priced by the tokens this reply really evaluated and generated, not the planning workload; per token
            // with the speculation the plan chose, where it priced one
            const {ttftMs, tpotMs: plainTpotMs} = loaded.predictRequest(reply.timing.promptTokens, reply.timing.generatedTokens);
            const spec = loaded.state.speculative?.predicted;
            const tpotMs = spec != null ? plainTpotMs * spec.tpotMs / spec.plainTpotMs : plainTpotMs;
            if (loaded.predictionKey != null) await this.recordPredictionErrors(loaded.predictionKey, reply.timing, {ttftMs, tpotMs});
            return {...reply, timing: {...reply.timing, predicted: {ttftMs, tpotMs}}};
        } finally {
            this.streams.delete(request.streamId);
        }
    }

    /**
     * Keeps a reply's measured ÷ predicted TTFT and TPOT for later plans' ranges (predictionErrors.ts). A reply too
     * short to time (under {@link MIN_TIMED_PROMPT} prompt or {@link MIN_TIMED_REPLY} reply tokens) says little and is
     * left out; a cache that cannot be written costs the reply nothing.
     */
    private async recordPredictionErrors(key: {deviceKind: string; modelKey: string}, timing: {promptTokens: number; generatedTokens: number;
        ttftMs: number | null; tpotMs: number | null}, predicted: {ttftMs: number; tpotMs: number}): Promise<void> {
        const dir = defaultProfileCacheDir();
        if (timing.ttftMs != null && timing.promptTokens >= MIN_TIMED_PROMPT)
            await recordPredictionError(dir, {figure: "ttft", ...key, predictedMs: predicted.ttftMs, measuredMs: timing.ttftMs}).catch(() => undefined);
        if (timing.tpotMs != null && timing.generatedTokens >= MIN_TIMED_REPLY)
            await recordPredictionError(dir, {figure: "tpot", ...key, predictedMs: predicted.tpotMs, measuredMs: timing.tpotMs}).catch(() => undefined);
    }

    stop(streamId: string): void {
        this.streams.get(streamId)?.controller.abort();
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
        await this.closeServer().catch(() => {});
        await this.unload();
        await this.engine.llama.dispose();
    }

    /**
     * The request's settings with the engine's choices made (threads; mmap off when any weight is on a GPU; without a
     * chosen context, one the model was trained for).
     */
    private resolve(settings: Partial<RuntimeSettings>, offloads: boolean, model: InspectedModel): ResolvedSettings {
        return resolveSettings(settings, {
            maxThreads: this.engine.llama.maxThreads, partlyOnGpu: offloads && this.describe().gpu != null, trainedContextSize: model.contextLength
        });
    }

    /** The placement as the app shows it, with the llama.cpp command that loads the same plan. */
    private placementView(options: Parameters<EngineService["loadPlaced"]>[0]): PlacementView {
        const spec = options.speculative?.load;
        return toPlacementView({
            strategy: options.strategy, placement: options.placement, model: options.model, overrides: options.overrides,
            gpuLayers: options.gpuLayers, llamaCppFlags: renderLlamaCppFlags(withSpeculativeOverrides(options, spec), {
                modelPath: options.path, layerCount: options.model.layerCount ?? undefined,
                tensorNames: options.model.tensors.map((t) => t.name), rpcServers: options.rpcServers
            }).command + (spec != null ? ` ${speculativeFlags(spec)}` : "")
        });
    }

    private async loadPlaced(options: {
        /** The model's path, as the user named it (its card, the rendered llama.cpp command). */
        path: string;
        /** What llama.cpp opens: the file pinned before it was validated (pinModelFile.ts); the loaded model keeps it. */
        file: PinnedModelFile;
        model: InspectedModel; taskId: string; placement: Placement; settings: ResolvedSettings;
        strategy: PlacementStrategy; gpuLayers: number | "max"; overrides: readonly {pattern: string; bufferType: string}[];
        prediction: LoadedModelState["prediction"];
        /** The GPU budget an auto-offload planned under. */
        budgetBytes?: number;
        /** rpc-servers the plan places tensors on (`--rpc` in the rendered llama.cpp command). */
        rpcServers?: readonly string[];
        predictRequest?: RequestPredictor;
        /** Speculative decoding to load with, what the app shows of it, and where its α is kept. */
        speculative?: LoadSpeculative;
        /** The user's llama.cpp command priced beside the plan. */
        command?: CommandComparisonView;
        /** Where its replies' prediction errors are kept. */
        predictionKey?: {deviceKind: string; modelKey: string};
    }): Promise<LoadedModelState> {
        this.refuseWhileBenching("load a model");
        return await this.exclusive(() => this.loadPlacedNow(options));
    }

    private async loadPlacedNow(options: Parameters<EngineService["loadPlaced"]>[0]): Promise<LoadedModelState> {
        await this.unloadNow();
        this.progress(options.taskId, "load", 0, "loading weights");
        const placed = await PlacedModel.load(this.engine, {
            modelPath: options.file.path,
            sourcePath: options.path,
            gpuLayers: options.gpuLayers,
            overrides: options.overrides,
            ...settingsLoadOptions(options.settings),
            ...(options.speculative?.load != null ? {speculative: options.speculative.load} : {}),
            sequences: this.sequences,
            onProgress: (progress) => this.progress(options.taskId, "load", progress, "loading weights")
        }).catch((error: unknown) => {
            throw loadFailure(error);
        });
        this.progress(options.taskId, "load", 1, "loaded");
        const measured = placed.memory();
        const placement = this.placementView(options);
        const planned = {plannedWeights: placement.bytesPerBufferType, prediction: options.prediction?.memory ?? null, budgetBytes: options.budgetBytes ?? null};
        const state: LoadedModelState = {
            card: toModelCard(options.path, options.model),
            placement,
            prediction: options.prediction,
            measured,
            memory: comparePlannedMemory({...planned, measured, machine: this.describe()}),
            settings: options.settings,
            loadMs: placed.loadMs,
            loadId: randomUUID(),
            ...(options.speculative != null ? {speculative: options.speculative.state} : {}),
            ...(options.command != null ? {command: options.command} : {})
        };
        this.loaded = {placed, state, planned, embeddings: null, file: options.file, ...(options.predictRequest != null ? {predictRequest: options.predictRequest} : {}),
            ...(options.speculative?.acceptanceKey != null ? {acceptanceKey: options.speculative.acceptanceKey} : {}),
            ...(options.predictionKey != null ? {predictionKey: options.predictionKey} : {})};
        return state;
    }

    private refuseWhileBenching(what: string): void {
        if (this.benchRun != null)
            throw new TensorwiseError("bench-running", `a benchmark is running: cannot ${what} until it finishes or is stopped`);
    }

    /** Validates and inspects `file` (the pinned `modelPath`), refusing a model llama.cpp would stop the process on. */
    private async inspectForTask(modelPath: string, taskId: string, file: string): Promise<InspectedModel> {
        this.progress(taskId, "inspect", null, "validating the GGUF file");
        const model = await this.inspectCached(modelPath, file);
        assertLoadable(model);
        return model;
    }

    /**
     * Validated once per file content: a file swapped in place is validated again (ValidatedFileCache.ts). `file`, what
     * is read, is `modelPath` pinned for a load (pinModelFile.ts); the result is kept under `modelPath`.
     */
    private async inspectCached(modelPath: string, file = modelPath): Promise<InspectedModel> {
        return await this.inspected.get(file, inspectModelHeader, modelPath);
    }

    private progress(taskId: string, step: string, progress: number | null, detail?: string): void {
        this.onProgress({taskId, step, progress, detail});
    }
}

/** Why the server could not listen, in one sentence the user can act on. */
function listenFailure(error: unknown, request: EngineServeRequest): string {
    const code = (error as {code?: unknown}).code;
    if (code === "EADDRINUSE")
        return `Port ${request.port} is already in use by another program: choose another port.`;
    if (code === "EADDRNOTAVAIL")
        return `${request.host} is not an address of this machine: choose 127.0.0.1, 0.0.0.0 or one of its own addresses.`;
    if (code === "EACCES")
        return `Port ${request.port} needs administrator rights: choose a port above 1023.`;
    return `The server could not start: ${error instanceof Error ? error.message : String(error)}`;
}
