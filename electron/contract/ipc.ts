/**
 * The one contract between the UI and the engine host: every request with its argument and result types, and every
 * pushed event with its payload. Electron IPC and web mode (HTTP + Server-Sent Events on 127.0.0.1) both carry exactly
 * this. Like every file of electron/contract it imports nothing from outside the folder (eslint.config.js).
 */
import type {SpeculativeKind, SpeculativeRequest, SpeculativeState} from "./speculative.js";
import type {CommandComparisonView, LlamaCommandRequest} from "./llamaCommand.js";
import type {PredictionRangeView} from "./predictionRange.js";
import type {
    BenchDetail, BenchExportFormat, BenchProgress, BenchStartRequest, BenchSummary
} from "./bench.js";
import type {ErrorCode} from "./errorCodes.js";
import type {MachineDescription} from "./machine.js";
import type {MemoryComparison, MemoryReport} from "./memory.js";
import type {Budget, RuntimeSettings} from "./settings.js";
import type {RpcServersState} from "./rpc.js";
import type {ServerChange, ServerState} from "./server.js";
import type {PlacementStrategyName} from "./strategies.js";
import type {GenerationTiming} from "./timing.js";
import type {PlanExplanation} from "./planExplanation.js";
import type {HubQuantList, HubSearchResult} from "./hub.js";
import type {ConversationExport, ConversationExportFormat, ConversationSearchHit} from "./conversationFile.js";
import type {ChatToolSettings, McpServerConfig, ToolCallRecord, ToolDecision, ToolServersState} from "./tools.js";

export type {
    BenchDetail, BenchExportFormat, BenchLoad, BenchPlan, BenchPoint, BenchProgress, BenchReport, BenchRun, BenchStartRequest,
    BenchStrategy, BenchSummary, BenchVariant, ErrorStat, PointKind, SpeedupCell
} from "./bench.js";
export type {ErrorCode} from "./errorCodes.js";
export type {BufferTypeDescription, DeviceDescription, MachineDescription} from "./machine.js";
export type {BufferTypeMemory, BufferTypeUse, DeviceMemory, MemoryComparison, MemoryReport, PlannedTotals} from "./memory.js";
export type {Budget, FixedBudget, RuntimeSettings} from "./settings.js";
export type {RpcServerEntry, RpcServersState} from "./rpc.js";
export type {ServerChange, ServerSettings, ServerStartup, ServerStartupStep, ServerState, ServerStatus} from "./server.js";
export type {ContractError} from "./TensorwiseError.js";
export type {GenerationTiming} from "./timing.js";
export type {PlanExplanation} from "./planExplanation.js";
export type {HubQuant, HubQuantList, HubQuantPlacement, HubQuantPlan, HubSearchResult} from "./hub.js";
export type {ConversationExport, ConversationExportFormat, ConversationSearchHit, SearchMatch} from "./conversationFile.js";
export type {
    ChatToolSettings, McpServerConfig, McpServerLaunch, McpServerState, McpServerStatus, McpTool, ToolCallRecord, ToolCallState, ToolChoiceSetting,
    ToolDecision, ToolRef, ToolResult, ToolResultPart, ToolServersState
} from "./tools.js";
import type {KvRestore, PromptProgress, ReplyStopReason, SamplingSettings} from "./chat.js";
import type {ContextOverflowPolicy} from "./contextOverflow.js";

export type {ChatTurn, KvRestore, PromptProgress, ReplyStopReason, SamplingSettings} from "./chat.js";

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
    /** The roles in `roles` that are routed expert weights (GGML_OP_MUL_MAT_ID), shown as their own group; absent or empty for a dense model. */
    expertRoles?: string[];
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
    /** The range each figure is expected in, from this machine's measured prediction errors (predictionErrors.ts). */
    ranges?: {ttft: PredictionRangeView; tpot: PredictionRangeView};
};

export type LoadedModelState = {
    card: ModelCard;
    placement: PlacementView;
    prediction: Prediction | null;
    measured: MemoryReport;
    /** Planned against measured memory per physical memory, with free memory measured after the load. */
    memory: MemoryComparison;
    settings: RuntimeSettings;
    loadMs: number;
    /** Which load this is (new at every load, kept while the model stays): the state may be read again as a new object. */
    loadId: string;
    /** Speculative decoding of this load (absent: none was asked about). */
    speculative?: SpeculativeState;
    /** The user's llama.cpp command priced beside the plan (absent: none was given). */
    command?: CommandComparisonView;
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
    /** The file name of the model that wrote this reply (absent on replies saved before it was recorded). */
    model?: string;
    /** Set when the reply was stopped by the user or cut by an engine crash. */
    stopped?: "user" | "crash";
    /** Why a finished reply ended (absent on replies saved before it was recorded, and on crashed ones). */
    stopReason?: ReplyStopReason;
    /** The prompt of this reply in tokens, and how many of them the KV cache already held. */
    prompt?: {tokens: number; reused: number};
    /** Tokens in the context after this reply, of `size`. */
    context?: {usedTokens: number; size: number};
    /**
     * How the conversation's KV cache got into its sequence when the reply ran on the server's scheduler: still there
     * (`resident`), fresh (`new`), swapped back in or recomputed, and the ms that took (part of the TTFT).
     */
    restore?: KvRestore;
    /** How many earlier messages were left out of this reply's prompt so that it fit the context (absent when none). */
    leftOutMessages?: number;
    /**
     * The tools this reply called, each with its state and result. A reply that calls tools is one round: the next round
     * (the model reading the results) is the next assistant message.
     */
    toolCalls?: ToolCallRecord[];
    /** Prompt tokens of this reply taken by the tool definitions (part of `prompt.tokens`). */
    toolTokens?: number;
    /** What speculative decoding did in this reply: its kind, draft tokens proposed and accepted (absent without it). */
    speculative?: ReplySpeculation;
};

/** A reply's speculation as a conversation keeps it. */
export type ReplySpeculation = {kind: SpeculativeKind; drafted: number; accepted: number};

/** How a conversation's replies are generated, kept with it; unset fields take the engine's defaults. */
export type ChatSettings = SamplingSettings & {
    systemPrompt?: string;
    maxTokens?: number;
    /** What a reply does when the conversation no longer fits in the context; unset: `DEFAULT_CONTEXT_OVERFLOW`. */
    contextOverflow?: ContextOverflowPolicy;
    /** The MCP tools this conversation turns on, and the tool choice; unset: no tools. */
    tools?: ChatToolSettings;
};

export type ConversationSummary = {id: string; title: string; updatedAt: number; messageCount: number};
export type Conversation = ConversationSummary & {messages: ChatMessage[]; settings?: ChatSettings};
/**
 * Something about the saved conversations the user must be told: the data folder cannot be written (chats are not
 * saved), or a conversation file could not be read (the message says why and where it was moved).
 */
export type ConversationNotice = {code: "not-writable" | "disk-full" | "damaged-conversation"; message: string};

/** How a library model was last loaded: Load in the library repeats it (the request minus its path and task id). */
export type LibraryLoad =
    | {name: "autoOffload"; budget: Budget; settings: Partial<RuntimeSettings>; strategy?: PlacementStrategy; speculative?: SpeculativeRequest}
    | {name: "load"; gpuLayers: number | "max"; settings: Partial<RuntimeSettings>; speculative?: SpeculativeRequest};

/**
 * A model in the library (recently opened, newest first). Opened = validated and inspected, shown on the Model
 * screen; loaded = in the engine's memory with a placement, ready to chat. One model is loaded at a time.
 */
export type RecentModel = {
    path: string;
    fileName: string;
    name: string | null;
    architecture: string;
    fileBytes: number;
    /** When it was last opened or loaded (ms since the epoch). */
    openedAt: number;
    /** When it was last loaded, or `null` when it was only opened. */
    loadedAt: number | null;
    lastLoad: LibraryLoad | null;
    /** Set by `library.list` when the file is no longer there. */
    missing?: boolean;
};

/** A `.gguf` file found in one of the models folders (the app's own, then each `--model-dir`). */
export type FolderModel = {
    path: string;
    fileName: string;
    /** The models folder it was found in. */
    folder: string;
    fileBytes: number;
    /** When the library last opened or loaded it (ms since the epoch), or `null` when it never did. */
    lastUsedAt: number | null;
};

/** Every model in the models folders, and a sentence for each folder that could not be read. */
export type FolderModels = {models: FolderModel[]; notices: string[]};

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
    "model.autoOffload": [{
        path: string; budget: Budget; settings: Partial<RuntimeSettings>; strategy?: PlacementStrategy; taskId: string; refreshProfile?: boolean;
        /** Speculative decoding to plan with the placement; absent: none. */
        speculative?: SpeculativeRequest;
        /** A llama.cpp command to price beside the plan, and which of the two to load; absent: none. */
        llamaCommand?: LlamaCommandRequest;
    }, LoadedModelState];
    /** Stops a running auto-offload at its next step (the profiler stops at its next measurement); the model loaded before stays. */
    "task.cancel": [{taskId: string}, void];
    "model.load": [{path: string; gpuLayers: number | "max"; settings: Partial<RuntimeSettings>; taskId: string; speculative?: SpeculativeRequest}, LoadedModelState];
    "model.unload": [void, void];
    /**
     * Writes a small demo model with random weights (electron/engine/writer/makeSyntheticModel.ts: it replies with
     * gibberish, but every screen works with it) into the app's models folder, or reuses the one written before, and
     * opens it like a dropped file.
     */
    "model.makeDemo": [void, ModelCard];
    "model.current": [void, LoadedModelState | null];
    "conversations.list": [void, ConversationSummary[]];
    /** What the user must know about the saved conversations (see {@link ConversationNotice}); empty when all is well. */
    "conversations.notices": [void, ConversationNotice[]];
    "conversations.get": [{id: string}, Conversation];
    /** `settings`: the new conversation's system prompt and sampling (the app passes the last ones used). */
    "conversations.create": [{title?: string; settings?: ChatSettings}, Conversation];
    "conversations.delete": [{id: string}, void];
    "conversations.rename": [{id: string; title: string}, ConversationSummary];
    /** Replaces the conversation's settings (system prompt, sampling); later replies use them. */
    "conversations.setSettings": [{id: string; settings: ChatSettings}, Conversation];
    /** Removes one message (not while the conversation is replying). */
    "conversations.deleteMessage": [{id: string; messageId: string}, Conversation];
    /**
     * The conversation as a file to save: Markdown to read, or JSON (the stored conversation with a format and version)
     * that `conversations.import` restores.
     */
    "conversations.export": [{id: string; format: ConversationExportFormat}, ConversationExport];
    /**
     * A JSON export (the file's text) as a new conversation: checked as a conversation file on disk is, refused whole
     * in one sentence otherwise; the new conversation has a new id, everything else as exported.
     */
    "conversations.import": [{text: string}, Conversation];
    /** Saved conversations whose title or message text contains `query` (case-insensitive), newest first. */
    "conversations.search": [{query: string}, ConversationSearchHit[]];
    /** Starts a reply; deltas arrive as `chat.delta` events with this stream id. */
    /**
     * Appends the user's message and streams the reply. Returns the message as saved (with the id the host gave it),
     * before the reply ends, so the message can be edited or deleted by that id.
     */
    "chat.send": [{conversationId: string; text: string; streamId: string; maxTokens?: number; temperature?: number}, ChatMessage];
    /** Replaces the last assistant message with a new reply. */
    "chat.regenerate": [{conversationId: string; streamId: string; maxTokens?: number; temperature?: number}, void];
    "chat.stop": [{streamId: string}, void];
    /** Replaces user message `messageId` with `text`, drops everything after it, and replies to it. Returns the new message as saved. */
    "chat.edit": [{conversationId: string; messageId: string; text: string; streamId: string}, ChatMessage];
    /** The model library: recent models, newest first. */
    "library.list": [void, RecentModel[]];
    /** Every `.gguf` in the models folders (kept current while the app runs: see the `library.files` event). */
    "library.files": [void, FolderModels];
    /** Loads a library model the way it was last loaded (Auto-offload with the default budget when it never was). */
    "library.load": [{path: string; taskId: string}, LoadedModelState];
    /** GGUF model repositories on the hub (`HF_ENDPOINT`) whose name matches `query`, most downloaded first. */
    "hub.search": [{query: string}, HubSearchResult[]];
    /**
     * A repository's quants, each planned on this machine from its header alone (no download; `profile`: measure this
     * machine where no profile is cached). Progress as `task.progress`; `task.cancel` stops it.
     */
    "hub.quants": [{repo: string; profile: boolean; taskId: string}, HubQuantList];
    /**
     * Downloads one quant into the app's models folder (resumable, sha256-checked, validated) and opens it into the
     * library; progress as `task.progress` (step "download"), `task.cancel` stops it (what came is kept for a retry).
     */
    "hub.pull": [{repo: string; quant: string; taskId: string}, ModelCard];
    /** Removes a model from the library (its file stays); the library after. */
    "library.forget": [{path: string}, RecentModel[]];
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
    /** The app's OpenAI-compatible server: settings, key and status. */
    "server.get": [void, ServerState];
    /**
     * Changes the server's settings (turning it on or off, port, bind address, key); it serves the loaded model once
     * on. Refused in one sentence when the combination is unsafe (another address without a key).
     */
    "server.set": [ServerChange, ServerState];
    /** The rpc-servers the user added, each probed again for reachability. */
    "rpc.list": [void, RpcServersState];
    /**
     * Adds an rpc-server (`host:port`) and restarts the engine with every reachable one (the loaded model reloads).
     * Refused in one sentence when the address is malformed or nothing answers there.
     */
    "rpc.add": [{endpoint: string}, RpcServersState];
    /** Removes an rpc-server and restarts the engine without it (the loaded model reloads). */
    "rpc.remove": [{endpoint: string}, RpcServersState];
    /**
     * Answers a tool call of reply `streamId` waiting for approval: run it, run it and every later call of that tool
     * without asking (kept with the server), or deny it (the model is told so).
     */
    "chat.decideTool": [{streamId: string; callId: string; decision: ToolDecision}, void];
    /** The MCP servers: configuration, state, tools, log tail. */
    "tools.list": [void, ToolServersState];
    /**
     * Adds a server, or replaces the one named `replaces` (a running server is stopped; it starts again when needed).
     * Refused in one sentence when a field is wrong or the name is taken.
     */
    "tools.save": [{config: McpServerConfig; replaces?: string}, ToolServersState];
    /** Stops and forgets a server. */
    "tools.remove": [{name: string}, ToolServersState];
    /** Starts a server (or starts it again) and lists its tools; a failure is in its state. */
    "tools.start": [{name: string}, ToolServersState];
    "tools.stop": [{name: string}, ToolServersState];
    /**
     * Adds the servers of an `mcpServers` JSON (Claude Desktop's, LM Studio's and Cursor's format), each disabled until
     * the user enables it; refused whole in one sentence when it is not one. Nothing is started.
     */
    "tools.import": [{text: string}, {state: ToolServersState; added: string[]}];
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
    /** `code`: the error's code where it had one (`conversation-too-long` when the chat does not fit its context). */
    "chat.error": {streamId: string; conversationId: string; error: string; code?: ErrorCode};
    "bench.progress": BenchProgress;
    "bench.done": {benchId: string; summary: BenchSummary};
    /** The benchmark could not run or the engine died; any finished cells are still on disk (see `bench.list`). */
    "bench.error": {benchId: string; code: ErrorCode; error: string};
    /** The server's state changed (turned on or off, started serving a model, failed). */
    "server.state": ServerState;
    /** A models folder changed (a file added, removed or renamed, a folder gone or back): every model in them now. */
    "library.files": FolderModels;
    /**
     * A message of reply `streamId` saved or changed before its end: a round that called tools (its calls waiting for
     * approval), a call that started, finished, failed or was denied. The reply's next round streams as a new message.
     */
    "chat.message": {streamId: string; conversationId: string; message: ChatMessage};
    /** The MCP servers changed (configuration, state, tools, log). */
    "tools.state": ToolServersState;
};

export type RequestName = keyof Requests;
export type RequestArg<Name extends RequestName> = Requests[Name][0];
export type RequestResult<Name extends RequestName> = Requests[Name][1];
export type EventName = keyof Events;
