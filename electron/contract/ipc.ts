/**
 * The one contract between the UI and the engine host: every request with its argument and result types, and every
 * pushed event with its payload. Electron IPC and web mode (HTTP + Server-Sent Events on 127.0.0.1) both carry exactly
 * this. Like every file of electron/contract it imports nothing from outside the folder (eslint.config.js).
 */
import type {
    BenchDetail, BenchExportFormat, BenchProgress, BenchStartRequest, BenchSummary
} from "./bench.js";
import type {ErrorCode} from "./errorCodes.js";
import type {MachineDescription} from "./machine.js";
import type {MemoryReport} from "./memory.js";
import type {Budget, RuntimeSettings} from "./settings.js";
import type {PlacementStrategyName} from "./strategies.js";
import type {GenerationTiming} from "./timing.js";
import type {PlanExplanation} from "./planExplanation.js";

export type {
    BenchDetail, BenchExportFormat, BenchLoad, BenchPlan, BenchPoint, BenchProgress, BenchReport, BenchRun, BenchStartRequest,
    BenchStrategy, BenchSummary, BenchVariant, ErrorStat, PointKind, SpeedupCell
} from "./bench.js";
export type {ErrorCode} from "./errorCodes.js";
export type {BufferTypeDescription, DeviceDescription, MachineDescription} from "./machine.js";
export type {BufferTypeMemory, MemoryReport} from "./memory.js";
export type {Budget, FixedBudget, RuntimeSettings} from "./settings.js";
export type {ContractError} from "./TensorwiseError.js";
export type {GenerationTiming} from "./timing.js";
export type {PlanExplanation} from "./planExplanation.js";
import type {PromptProgress, ReplyStopReason, SamplingSettings} from "./chat.js";

export type {ChatTurn, PromptProgress, ReplyStopReason, SamplingSettings} from "./chat.js";

/** A tensor row of the model card. */
export type ModelTensor = {
    name: string;
    layer: number | null;
    role: string;
    type: string;
    shape: number[];
    bytes: number;
};

/** What the model card shows. */
export type ModelCard = {
    path: string;
    fileName: string;
    fileBytes: number;
    architecture: string;
    name: string | null;
    parameterCount: number;
    layerCount: number | null;
    contextLength: number | null;
    embeddingLength: number | null;
    vocabularySize: number | null;
    /** A mixture-of-experts model's routed experts per layer (`expert_count`) and experts per token (`expert_used_count`); absent or null for a dense model. */
    experts?: {count: number; used: number} | null;
    /** Bytes and tensor count per ggml type, largest first. */
    quantMix: {type: string; bytes: number; tensors: number}[];
    tensors: ModelTensor[];
};

export type PlacementStrategy = PlacementStrategyName;

/** A placement the UI can draw: layers × roles grid coloured by buffer type, plus bytes per buffer type. */
export type PlacementView = {
    strategy: PlacementStrategy;
    defaultBufferType: string;
    /** `grid[layer][role]` = buffer type; roles in `roles` order; non-layer tensors in `globals`. */
    roles: string[];
    grid: (string | null)[][];
    globals: {name: string; bufferType: string}[];
    bytesPerBufferType: Record<string, number>;
    overrides: {pattern: string; bufferType: string}[];
    gpuLayers: number | "max";
    llamaCppFlags: string;
};

/** What the planner expects before loading. */
export type Prediction = {
    ttftMs: number | null;
    tpotMs: number | null;
    promptTokens: number;
    /** Planned bytes per buffer type: weights, KV cache and scratch. */
    memory: MemoryReport;
    /** Why the plan is what it is, one sentence per decision; absent for loads that were not planned. */
    explanation?: PlanExplanation;
};

export type LoadedModelState = {
    card: ModelCard;
    placement: PlacementView;
    prediction: Prediction | null;
    measured: MemoryReport;
    settings: RuntimeSettings;
    loadMs: number;
};

export type EngineState =
    | {state: "starting"}
    | {state: "idle"}
    | {state: "busy"; task: string}
    | {state: "crashed"; reason: string; at: number}
    | {state: "ready"};

export type ChatMessage = {
    id: string;
    role: "user" | "assistant";
    text: string;
    createdAt: number;
    /** Engine-side timing, for assistant messages. */
    timing?: GenerationTiming;
    /** Set when the reply was stopped by the user or cut by an engine crash. */
    stopped?: "user" | "crash";
    /** Why a finished reply ended (absent on replies saved before it was recorded, and on crashed ones). */
    stopReason?: ReplyStopReason;
    /** The prompt of this reply in tokens, and how many of them the KV cache already held. */
    prompt?: {tokens: number; reused: number};
    /** Tokens in the context after this reply, of `size`. */
    context?: {usedTokens: number; size: number};
};

/** How a conversation's replies are generated, kept with it; unset fields take the engine's defaults. */
export type ChatSettings = SamplingSettings & {
    systemPrompt?: string;
    maxTokens?: number;
};

export type ConversationSummary = {id: string; title: string; updatedAt: number; messageCount: number};
export type Conversation = ConversationSummary & {messages: ChatMessage[]; settings?: ChatSettings};

/**
 * A long step (profile, plan, load, …): `progress` in 0..1, `null` when unknown. `plan` is sent once a plan is made,
 * before its weights load: the placement and the memory it will take per device (llama.cpp's no-alloc simulation).
 */
export type TaskProgress = {taskId: string; step: string; progress: number | null; detail?: string; plan?: PlannedLoad};

/** A plan about to be loaded, as the Offload screen shows it while the weights load. */
export type PlannedLoad = {placement: PlacementView; prediction: Prediction; settings: RuntimeSettings};

/** Requests: name → [argument, result]. */
export type Requests = {
    "machine.describe": [void, MachineDescription];
    "engine.state": [void, EngineState];
    "engine.restart": [void, EngineState];
    "model.inspect": [{path: string}, ModelCard];
    /**
     * Profiles this machine if its cached profile does not fit (or `refreshProfile`), plans under the budget and loads;
     * progress arrives as `task.progress` with this task id, `task.cancel` stops it before the weights load.
     */
    "model.autoOffload": [{path: string; budget: Budget; settings: Partial<RuntimeSettings>; strategy?: PlacementStrategy; taskId: string; refreshProfile?: boolean}, LoadedModelState];
    /** Stops a running auto-offload at its next step (the profiler stops at its next measurement); the model loaded before stays. */
    "task.cancel": [{taskId: string}, void];
    "model.load": [{path: string; gpuLayers: number | "max"; settings: Partial<RuntimeSettings>; taskId: string}, LoadedModelState];
    "model.unload": [void, void];
    "model.current": [void, LoadedModelState | null];
    "conversations.list": [void, ConversationSummary[]];
    "conversations.get": [{id: string}, Conversation];
    /** `settings`: the new conversation's system prompt and sampling (the app passes the last ones used). */
    "conversations.create": [{title?: string; settings?: ChatSettings}, Conversation];
    "conversations.delete": [{id: string}, void];
    "conversations.rename": [{id: string; title: string}, ConversationSummary];
    /** Replaces the conversation's settings (system prompt, sampling); later replies use them. */
    "conversations.setSettings": [{id: string; settings: ChatSettings}, Conversation];
    /** Removes one message (not while the conversation is replying). */
    "conversations.deleteMessage": [{id: string; messageId: string}, Conversation];
    /** Starts a reply; deltas arrive as `chat.delta` events with this stream id. */
    "chat.send": [{conversationId: string; text: string; streamId: string; maxTokens?: number; temperature?: number}, void];
    /** Replaces the last assistant message with a new reply. */
    "chat.regenerate": [{conversationId: string; streamId: string; maxTokens?: number; temperature?: number}, void];
    "chat.stop": [{streamId: string}, void];
    /** Replaces user message `messageId` with `text`, drops everything after it, and replies to it. */
    "chat.edit": [{conversationId: string; messageId: string; text: string; streamId: string}, void];
    /** Opens the native file dialog for a .gguf; `null` when cancelled or where no dialog exists (web mode). */
    "dialog.openModel": [void, string | null];
    /**
     * Starts a benchmark in the engine: the chat model is unloaded, chat is refused until it ends, and the model is
     * loaded again afterwards. Progress arrives as `bench.progress`, then `bench.done` or `bench.error`.
     */
    "bench.start": [BenchStartRequest, void];
    /** Stops after the current measurement; finished cells are kept and `bench.done` follows (interrupted). */
    "bench.stop": [{benchId: string}, void];
    /** Past and running benchmarks, newest first. */
    "bench.list": [void, BenchSummary[]];
    "bench.get": [{id: string}, BenchDetail];
    /** Where the report file is on the host; web mode downloads it from `GET /api/bench/<id>/<format>`. */
    "bench.export": [{id: string; format: BenchExportFormat}, {path: string; fileName: string}];
    /** Native save dialog, then a copy of the report file there; the saved path, or `null` when cancelled or unavailable. */
    "dialog.saveBenchReport": [{id: string; format: BenchExportFormat}, string | null];
};

/** Pushed events: name → payload. */
export type Events = {
    "engine.state": EngineState;
    "task.progress": TaskProgress;
    /** Token text batched per frame. */
    "chat.delta": {streamId: string; conversationId: string; messageId: string; text: string; elapsedMs: number; tokens: number};
    /** Prompt processing of a reply, after every chunk (before the first token). */
    "chat.prompt": {streamId: string; conversationId: string} & PromptProgress;
    "chat.done": {streamId: string; conversationId: string; message: ChatMessage};
    "chat.error": {streamId: string; conversationId: string; error: string};
    "bench.progress": BenchProgress;
    "bench.done": {benchId: string; summary: BenchSummary};
    /** The benchmark could not run or the engine died; any finished cells are still on disk (see `bench.list`). */
    "bench.error": {benchId: string; code: ErrorCode; error: string};
};

export type RequestName = keyof Requests;
export type RequestArg<Name extends RequestName> = Requests[Name][0];
export type RequestResult<Name extends RequestName> = Requests[Name][1];
export type EventName = keyof Events;
