/**
 * The engine host behind the contract: checks every request of the contract (checkRequest.ts), serves it through the
 * handlers of its domain (model/, conversations/, chat/, bench/, dialogs/, rpc/, server/), and pushes events to the clients (Electron
 * windows, web-mode event streams) attached to it. Owns the state the domains share (see {@link HostContext}).
 * Shared by Electron main and web mode; imports nothing from `electron`.
 */
import path from "node:path";
import type {ChatMessage, EngineState, EventName, Events, LoadedModelState, RequestName, RequestResult} from "../contract/ipc.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import type {EngineEvents} from "../contract/engineProtocol.js";
import {BenchRunner} from "./bench/BenchRunner.js";
import {benchRequests} from "./bench/benchRequests.js";
import {BenchStore} from "./bench/BenchStore.js";
import {chatRequests} from "./chat/chatRequests.js";
import {ChatStream, type ChatStreamSink} from "./chat/ChatStream.js";
import {checkRequest} from "./checkRequest.js";
import {conversationRequests} from "./conversations/conversationRequests.js";
import type {ConversationStore} from "./conversations/ConversationStore.js";
import {dialogRequests} from "./dialogs/dialogRequests.js";
import type {EngineClient, EngineClientState} from "./engineChild/EngineClient.js";
import {
    REPLY_RUNNING_MESSAGE, toLibraryLoad, type HostClient, type HostContext, type HostPlatform, type LoadRequest, type ReplyRequest, type ReplySlot, type RequestHandlers,
    type SharedHostState
} from "./HostContext.js";
import {modelRequests} from "./model/modelRequests.js";
import {ModelAccess, type ModelAccessOptions} from "./model/ModelAccess.js";
import {serverRequests} from "./server/serverRequests.js";
import {SERVER_SETTINGS_FILE, ServerControl} from "./server/ServerControl.js";
import {ModelFolders} from "./model/ModelFolders.js";
import {LIBRARY_FILE, ModelLibrary} from "./model/ModelLibrary.js";
import {libraryRequests} from "./model/libraryRequests.js";
import {hubRequests} from "./model/hubRequests.js";
import {UploadedCopies} from "./model/UploadedCopies.js";
import {rpcRequests} from "./rpc/rpcRequests.js";
import {RpcServers} from "./rpc/RpcServers.js";
import {RPC_SERVERS_FILE} from "./rpc/RpcServerList.js";

export type HostServiceOptions = {
    /** Where benchmarks are kept. Defaults to `bench/` beside the conversation store's folder. */
    benchDir?: string;
    /** Which model files clients may open. Defaults to only `models/` beside the conversation store's folder. */
    modelAccess?: ModelAccessOptions;
    /** The model library's file. Defaults to `recent-models.json` beside the conversation store's folder. */
    libraryFile?: string;
    /** The rpc-servers' list. Defaults to `rpc-servers.json` beside the conversation store's folder. */
    rpcServersFile?: string;
    /** Where the server's settings and key are kept. Defaults to {@link SERVER_SETTINGS_FILE} beside the conversations folder. */
    serverSettingsFile?: string;
};

export class HostService {
    private readonly clients = new Map<string, HostClient>();
    private readonly streams = new Map<string, ChatStream>();
    /** Reply slots by conversation id: taken before a reply's request reads anything, given back when it ends. */
    private readonly replySlots = new Map<string, ReplySlot>();
    /** The loaded model and the last successful load (replayed after an engine restart). */
    private readonly shared: SharedHostState = {loaded: null, lastLoad: null};
    private busyTask: string | null = null;
    private readonly unsubscribe: (() => void)[] = [];
    private readonly benchStore: BenchStore;
    private readonly bench: BenchRunner;
    private readonly access: ModelAccess;
    private readonly server: ServerControl;
    private readonly library: ModelLibrary;
    private readonly modelFolders: ModelFolders;
    private readonly rpc: RpcServers;
    private readonly uploads = new UploadedCopies();
    private readonly hostTasks = new Map<string, AbortController>();
    /** Every request's handler, one file per domain; a request missing from them fails to compile here. */
    private readonly handlers: RequestHandlers<RequestName>;

    constructor(
        private readonly store: ConversationStore,
        private readonly engine: EngineClient,
        private readonly platform: HostPlatform = {},
        options: HostServiceOptions = {}
    ) {
        this.benchStore = new BenchStore(options.benchDir ?? path.join(path.dirname(store.dir), "bench"));
        this.access = new ModelAccess(options.modelAccess ?? {folders: [path.join(path.dirname(store.dir), "models")]});
        this.library = new ModelLibrary(options.libraryFile ?? path.join(path.dirname(store.dir), LIBRARY_FILE));
        this.modelFolders = new ModelFolders({
            folders: this.access.folders, access: this.access,
            lastUsed: async () => new Map((await this.library.list()).map((model) => [model.path, model.openedAt])),
            onChange: (models) => this.broadcast("library.files", models)
        });
        this.rpc = new RpcServers(options.rpcServersFile ?? path.join(path.dirname(store.dir), RPC_SERVERS_FILE), engine);
        this.bench = new BenchRunner({
            engine, store: this.benchStore, acquire: (task) => this.acquireEngine(task),
            broadcast: (name, payload) => this.broadcast(name, payload)
        });
        this.server = new ServerControl({
            engine, loaded: () => this.shared.loaded, busy: () => this.busyTask != null || this.bench.runningId != null,
            broadcast: (state) => this.broadcast("server.state", state),
            file: options.serverSettingsFile ?? path.join(path.dirname(store.dir), SERVER_SETTINGS_FILE)
        });
        const context = this.context();
        this.handlers = {
            ...modelRequests(context), ...libraryRequests(context), ...hubRequests(context), ...conversationRequests(context), ...chatRequests(context),
            ...benchRequests(context), ...dialogRequests(context), ...serverRequests(context),
            ...rpcRequests(context)
        };
        this.unsubscribe.push(engine.onState((state) => this.onEngineState(state)));
        this.unsubscribe.push(engine.onEvent((name, payload) => this.onEngineEvent(name, payload)));
    }

    /** Registers a client for events. The returned function detaches it and stops its streams. */
    attach(client: HostClient): () => void {
        this.clients.set(client.id, client);
        return () => {
            this.clients.delete(client.id);
            for (const stream of this.streams.values())
                if (stream.clientId === client.id)
                    void stream.stop();
        };
    }

    /**
     * Serves one request of the contract for `client`: `arg` is checked first (checkRequest.ts), whatever transport it
     * came over. Throws {@link TensorwiseError}s.
     */
    async handle<Name extends RequestName>(name: Name, arg: unknown, client: HostClient): Promise<RequestResult<Name>> {
        const handler = Object.hasOwn(this.handlers, name)
            ? this.handlers[name] as (arg: unknown, client: HostClient) => Promise<RequestResult<Name>>
            : undefined;
        if (handler == null)
            throw new TensorwiseError("unknown-request", `unknown request "${String(name).slice(0, 60)}"`);
        return await handler(checkRequest(name, arg), client);
    }

    get engineState(): EngineState {
        const state = this.engine.state;
        if (state.state === "crashed")
            return {state: "crashed", reason: state.reason, at: state.at};
        if (state.state !== "running")
            return {state: "starting"};
        if (this.busyTask != null)
            return {state: "busy", task: this.busyTask};
        return this.shared.loaded != null ? {state: "ready"} : {state: "idle"};
    }

    /**
     * Starts the engine with the reachable rpc-servers of the settings (a stopped one is left out: ggml-rpc would abort
     * the engine on it). What startHost.ts calls instead of starting the engine itself.
     */
    async startEngine(): Promise<void> {
        await this.rpc.prepareEngine().catch(() => {});
        await this.engine.start();
    }

    /** Web mode stored an upload as a new file at `modelPath`: deleted if validation rejects it (see {@link UploadedCopies}). */
    noteUpload(modelPath: string): void {
        this.uploads.add(modelPath);
    }

    /** A benchmark's report file, for web mode's download endpoint. */
    async benchExportFile(id: string, format: string): Promise<{path: string; fileName: string}> {
        return await this.benchStore.exportFile(id, format);
    }

    async dispose(): Promise<void> {
        for (const stream of this.streams.values())
            await stream.stop();
        for (const off of this.unsubscribe)
            off();
        this.modelFolders.close();
        await this.server.dispose();
        await this.store.flush();
    }

    /** The view of this host the domain handlers work on: its stores, the shared state object, and its helpers. */
    private context(): HostContext {
        return {
            store: this.store, engine: this.engine, platform: this.platform, access: this.access,
            library: this.library, modelFolders: this.modelFolders, uploads: this.uploads, rpc: this.rpc, hostTasks: this.hostTasks,
            benchStore: this.benchStore, bench: this.bench, streams: this.streams, shared: this.shared, server: this.server,
            engineState: () => this.engineState,
            broadcastState: () => this.broadcastState(),
            runLoad: (request, task) => this.runLoad(request, task),
            requireModel: () => this.requireModel(),
            reserveReply: (conversationId, streamId) => this.reserveReply(conversationId, streamId),
            isReplying: (conversationId) => this.replySlots.has(conversationId),
            startStream: (client, slot, request) => this.startStream(client, slot, request)
        };
    }

    /**
     * Takes the engine for a long job that loads its own models (a benchmark): replies stop, the model is unloaded by
     * the job, and the returned function gives the engine back and reloads the model the user had.
     */
    private async acquireEngine(task: string): Promise<() => Promise<void>> {
        if (this.busyTask != null)
            throw new TensorwiseError("busy", `the engine is busy (${this.busyTask})`);
        if (this.engine.state.state !== "running")
            throw this.engine.state.state === "crashed"
                ? new TensorwiseError("engine-crashed", "the engine is not running: restart it first")
                : new TensorwiseError("engine-not-running", "the engine is still starting");
        for (const stream of this.streams.values())
            await stream.stop();
        const replay = this.shared.lastLoad;
        this.busyTask = task;
        this.shared.loaded = null;
        this.broadcastState();
        return async () => {
            this.busyTask = null;
            this.broadcastState();
            if (replay != null && this.engine.state.state === "running")
                await this.runLoad(replay, "reloading the model").catch(() => {});
        };
    }

    private async runLoad(request: LoadRequest, task: string): Promise<LoadedModelState> {
        if (this.busyTask != null)
            throw new TensorwiseError("busy", `the engine is busy (${this.busyTask})`);
        for (const stream of this.streams.values())
            await stream.stop();
        this.busyTask = task;
        this.shared.loaded = null;
        this.broadcastState();
        try {
            const state = request.name === "autoOffload"
                ? await this.engine.request("autoOffload", request.arg)
                : await this.engine.request("load", request.arg);
            this.shared.loaded = state;
            // a replay after an engine restart reuses the profile this load measured
            this.shared.lastLoad = request.name === "autoOffload" && request.arg.refreshProfile === true
                ? {name: "autoOffload", arg: {...request.arg, refreshProfile: false}} : request;
            this.uploads.accepted(request.arg.path);
            await this.library.loaded(state.card, toLibraryLoad(request)).catch(() => {});
            return state;
        } catch (error) {
            // a load refused or stopped before its weights loaded (a malformed file, a bad setting, cancelled, no plan)
            // leaves the engine's model in place
            if (this.engine.state.state === "running")
                this.shared.loaded = await this.engine.request("current", undefined).catch(() => null);
            throw await this.uploads.rejected(request.arg.path, error);
        } finally {
            this.busyTask = null;
            this.broadcastState();
        }
    }

    /** Checks and registers in one synchronous step (no `await` between them), so a racing request sees the slot taken. */
    private reserveReply(conversationId: string, streamId: string): ReplySlot {
        if (this.replySlots.has(conversationId))
            throw new TensorwiseError("busy", REPLY_RUNNING_MESSAGE);
        if (this.streams.has(streamId) || [...this.replySlots.values()].some((slot) => slot.streamId === streamId))
            throw new TensorwiseError("bad-request", `stream ${streamId} is already running`);
        const slot: ReplySlot = {
            conversationId, streamId,
            release: () => {
                if (this.replySlots.get(conversationId) === slot)
                    this.replySlots.delete(conversationId);
            }
        };
        this.replySlots.set(conversationId, slot);
        return slot;
    }

    /** The reply of `slot`: its stream id and conversation id come from the slot alone, never from `request`. */
    private startStream(client: HostClient, slot: ReplySlot, request: ReplyRequest): void {
        const {conversationId, streamId} = slot;
        const sink: ChatStreamSink = {
            emit: (name, payload) => this.clients.get(client.id)?.emit(name, payload as never),
            checkpoint: (message: ChatMessage) => this.store.upsert(conversationId, message).then(() => {}),
            chat: (arg) => this.engine.request("chat", arg),
            stop: (id) => this.engine.request("stop", {streamId: id}),
            settled: () => {
                this.streams.delete(streamId);
                slot.release();
            }
        };
        const stream = new ChatStream(streamId, conversationId, client.id, sink, this.shared.loaded?.card.fileName);
        this.streams.set(streamId, stream);
        void stream.run(request)
            .finally(() => {
                if (this.streams.get(streamId) === stream)
                    this.streams.delete(streamId);
                slot.release();
            });
    }

    private requireModel(): void {
        if (this.bench.runningId != null)
            throw new TensorwiseError("bench-running", "a benchmark is running: chat is back when it finishes, or stop it on the Benchmark screen");
        if (this.engine.state.state === "crashed")
            throw new TensorwiseError("engine-crashed", "the engine is not running: restart it first");
        if (this.shared.loaded == null)
            throw new TensorwiseError("no-model", "no model is loaded: open one on the Model screen and press Auto-offload");
    }

    private onEngineState(state: EngineClientState): void {
        if (state.state === "crashed" || state.state === "stopped")
            this.shared.loaded = null;
        this.broadcastState();
    }

    private onEngineEvent<Name extends keyof EngineEvents>(name: Name, payload: EngineEvents[Name]): void {
        if (name === "progress")
            this.broadcast("task.progress", payload as EngineEvents["progress"]);
        else if (name === "delta") {
            const delta = payload as EngineEvents["delta"];
            this.streams.get(delta.streamId)?.onDelta(delta.text, delta.elapsedMs, delta.tokens);
        } else if (name === "promptProgress") {
            const {streamId, ...progress} = payload as EngineEvents["promptProgress"];
            this.streams.get(streamId)?.onPromptProgress(progress);
        } else if (name === "benchProgress")
            this.bench.onProgress(payload as EngineEvents["benchProgress"]);
        else if (name === "served")
            this.server.record(payload as EngineEvents["served"]);
        else if (name === "serveStartup")
            this.server.onStartup(payload as EngineEvents["serveStartup"]);
    }

    private broadcastState(): void {
        this.broadcast("engine.state", this.engineState);
        // a load, an unload, a crash or a benchmark: the server follows the model
        void this.server.reconcile().catch(() => {});
    }

    private broadcast<Name extends EventName>(name: Name, payload: Events[Name]): void {
        for (const client of this.clients.values())
            client.emit(name, payload);
    }
}
