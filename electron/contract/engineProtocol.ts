/**
 * The protocol between the engine host (Electron main, or the web-mode server) and the engine child process, which
 * owns llama.cpp. Carried over Node's child-process IPC channel as {@link EngineMessage}s (the contract's envelope). A native crash ends only
 * the child; the host sees the exit and reports it.
 */
import type {
    Budget, LoadedModelState, MachineDescription, ModelCard, Requests, TaskProgress
} from "./ipc.js";
import type {BenchRun, BenchSample, BenchVariant} from "./bench.js";
import type {MemoryReport} from "./memory.js";
import type {Envelope} from "./envelope.js";
import type {ChatReply, ChatTurn, PromptProgress, SamplingSettings} from "./chat.js";
import type {ContextOverflowPolicy} from "./contextOverflow.js";
import type {ServedRequest, ServerStartupStep} from "./server.js";
import type {HubQuantList} from "./hub.js";
import type {ToolChoiceSetting} from "./tools.js";

export type EngineRequests = {
    describe: [void, MachineDescription];
    inspect: [{path: string}, ModelCard];
    autoOffload: [Requests["model.autoOffload"][0], LoadedModelState];
    /** A hub repository's quants, each planned here from its header (electron/engine/hub/planRemoteQuants.ts); cancelTask stops it. */
    hubQuants: [{repo: string; profile: boolean; taskId: string}, HubQuantList];
    /** Stops a running autoOffload before its weights load. */
    cancelTask: [{taskId: string}, void];
    load: [Requests["model.load"][0], LoadedModelState];
    unload: [void, void];
    current: [void, LoadedModelState | null];
    /** Streams `delta` events with the same streamId while it runs. */
    chat: [EngineChatRequest, ChatReply];
    stop: [{streamId: string}, void];
    /**
     * Unloads the chat model, runs a benchmark writing its reports into `outDir` after every run, and streams
     * `benchProgress` events with the same benchId. Chat and loads are refused until it ends.
     */
    bench: [EngineBenchRequest, EngineBenchResult];
    /** Stops the benchmark after the current measurement; what finished is kept. */
    benchStop: [{benchId: string}, void];
    /**
     * Serves the loaded model over the OpenAI-compatible API (electron/serve/serveOpenAi.ts) on `parallel` sequences
     * (its context is made again with them); the app's own replies then go through the server's scheduler. Restarts
     * the server when it already runs. Ends when the model is unloaded.
     */
    serveStart: [EngineServeRequest, EngineServeState];
    /** Stops the server; the model keeps one sequence for the app's replies again. */
    serveStop: [void, void];
    /** The running server's keys, replaced without a restart (a client key added or revoked on the Server screen). */
    serveKeys: [{apiKeys: string[]}, void];
};

/** Where and how the engine serves the loaded model. */
export type EngineServeRequest = {
    host: string; port: number; parallel: number;
    /** Keys clients must send, each its own tenant; empty: no key required (loopback only). */
    apiKeys: string[];
    /** Disk for swapped-out KV state files, MiB; `null`: the server's default share of free space. */
    kvDiskBudgetMiB: number | null;
    /** Web origins allowed to call it from a browser (CorsPolicy.ts); empty: no CORS headers. */
    corsOrigins: string[];
};

/** The running server: its base URL, the model name clients see, and the memory the new context measured. */
export type EngineServeState = {url: string; port: number; modelId: string; measured: MemoryReport};

/** One reply: the conversation so far, the new message, its system prompt and sampling settings. */
export type EngineChatRequest = SamplingSettings & {
    streamId: string;
    /** The app's conversation, so its KV cache can be kept per conversation when replies go through the server. */
    conversationId?: string;
    history: ChatTurn[];
    message: string;
    systemPrompt?: string;
    maxTokens?: number;
    /** What to do when the conversation does not fit in the context. Defaults to `DEFAULT_CONTEXT_OVERFLOW`. */
    contextOverflow?: ContextOverflowPolicy;
    /** Also return the prompt's and the reply's token ids (`ChatReply.tokenIds`; `chat --json`). Defaults to `false`. */
    withTokenIds?: boolean;
    /**
     * Functions the model may call, and the choice; the reply is then templated, constrained and parsed by llama.cpp's
     * chat layer (electron/serve/appToolReply.ts). Absent: no tools (the chat layer still templates tool turns).
     */
    tools?: EngineToolUse;
    /** This reply's earlier rounds (assistant turns with their calls and results), after `message`. */
    replyRounds?: ChatTurn[];
};

/** One function as the model sees it. */
export type EngineTool = {name: string; description: string | null; parameters: Record<string, unknown>};

export type EngineToolUse = {tools: EngineTool[]; choice: ToolChoiceSetting};

/** A benchmark the host asks the engine to run. */
export type EngineBenchRequest = {
    benchId: string;
    path: string;
    budgets: {label: string; budget: Budget}[];
    prompts: number[];
    gens: number[];
    variants: BenchVariant[];
    repeats: number;
    outDir: string;
};

export type EngineBenchResult = {interrupted: boolean; runs: number; plannedRuns: number; failedRuns: number};

/** Progress of a benchmark: `done` of `total` timed requests; `run` is set when a budget × strategy run finished. */
export type EngineBenchProgress = {
    benchId: string; done: number; total: number; cell: string; step: string;
    lastSample?: BenchSample;
    run?: BenchRun;
};

export type EngineEvents = {
    progress: TaskProgress;
    /** `tokens`: tokens generated so far in this reply (engine count). */
    delta: {streamId: string; text: string; elapsedMs: number; tokens: number};
    /** Prompt processing of a reply, after every chunk. */
    promptProgress: {streamId: string} & PromptProgress;
    log: {level: string; message: string};
    benchProgress: EngineBenchProgress;
    /** A request the app's server answered (or refused). */
    served: ServedRequest;
    /** A step of a server start as it begins, and its progress where known (contract/server.ts ServerStartup). */
    serveStartup: {step: ServerStartupStep; fraction: number | null};
};

export type EngineRequestName = keyof EngineRequests;

/** The contract's envelope (electron/contract/envelope.ts), plus the child's lifecycle signals. */
export type EngineMessage =
    | Envelope<EngineRequestName, keyof EngineEvents>
    | {kind: "ready"}
    /** Host → engine: dispose llama.cpp and exit (a utility process has no IPC disconnect to signal it). */
    | {kind: "shutdown"};

/** Environment variable that hands the engine child its rpc-servers: `host:port` entries separated by commas. */
export const ENGINE_RPC_ENV = "TENSORWISE_RPC";
