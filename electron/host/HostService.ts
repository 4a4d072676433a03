/**
 * The engine host behind the contract: implements every request of {@link Requests} by combining the conversation
 * store and the engine child process, and pushes {@link Events} to the clients (Electron windows, web-mode event
 * streams) attached to it. Shared by Electron main and web mode; imports nothing from `electron`.
 */
import {randomUUID} from "node:crypto";
import {promises as fs} from "node:fs";
import path from "node:path";
import type {
    ChatMessage, EngineState, EventName, Events, LoadedModelState, RequestArg, RequestName, RequestResult, Requests
} from "../contract/ipc.js";
import type {EngineEvents} from "../engine/service/engineProtocol.js";
import {BenchRunner} from "./bench/BenchRunner.js";
import {BenchStore} from "./bench/BenchStore.js";
import {benchGrid} from "./bench/benchGrid.js";
import {ChatStream, type ChatStreamSink} from "./ChatStream.js";
import type {ConversationStore} from "./ConversationStore.js";
import type {EngineClient, EngineClientState} from "./EngineClient.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import {checkRequest} from "./checkRequest.js";
import {ModelAccess, type ModelAccessOptions} from "./ModelAccess.js";

/** One window or browser tab: where its events go. Chat streams die with their client. */
export type HostClient = {
    readonly id: string;
    emit<Name extends EventName>(name: Name, payload: Events[Name]): void;
};

/** What only the shell (Electron or web) can do. */
export type HostPlatform = {
    /** Native file dialog; absent in web mode (the page offers upload and a path field instead). */
    openModelDialog?: () => Promise<string | null>;
    /** Native save dialog for a file named `defaultName`; the chosen path or `null`. Absent in web mode. */
    saveFileDialog?: (defaultName: string) => Promise<string | null>;
};

export type HostServiceOptions = {
    /** Where benchmarks are kept. Defaults to `bench/` beside the conversation store's folder. */
    benchDir?: string;
    /** Which model files clients may open. Defaults to only `models/` beside the conversation store's folder. */
    modelAccess?: ModelAccessOptions;
};

type Handlers = {[Name in RequestName]: (arg: RequestArg<Name>, client: HostClient) => Promise<RequestResult<Name>>};
type LoadRequest =
    | {name: "autoOffload"; arg: Requests["model.autoOffload"][0]}
    | {name: "load"; arg: Requests["model.load"][0]};

export class HostService {
    private readonly clients = new Map<string, HostClient>();
    private readonly streams = new Map<string, ChatStream>();
    private loaded: LoadedModelState | null = null;
    private busyTask: string | null = null;
    /** The last successful load, replayed after an engine restart so the user is back where the crash left them. */
    private lastLoad: LoadRequest | null = null;
    private readonly unsubscribe: (() => void)[] = [];
    private readonly benchStore: BenchStore;
    private readonly bench: BenchRunner;
    private readonly access: ModelAccess;

    constructor(
        private readonly store: ConversationStore,
        private readonly engine: EngineClient,
        private readonly platform: HostPlatform = {},
        options: HostServiceOptions = {}
    ) {
        this.benchStore = new BenchStore(options.benchDir ?? path.join(path.dirname(store.dir), "bench"));
        this.access = new ModelAccess(options.modelAccess ?? {folders: [path.join(path.dirname(store.dir), "models")]});
        this.bench = new BenchRunner({
            engine, store: this.benchStore, acquire: (task) => this.acquireEngine(task),
            broadcast: (name, payload) => this.broadcast(name, payload)
        });
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
        const handler = this.handlers[name] as ((arg: RequestArg<Name>, client: HostClient) => Promise<RequestResult<Name>>) | undefined;
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
        return this.loaded != null ? {state: "ready"} : {state: "idle"};
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
        await this.store.flush();
    }

    private readonly handlers: Handlers = {
        "machine.describe": async () => await this.engine.request("describe", undefined),
        "engine.state": async () => this.engineState,
        "engine.restart": async () => {
            this.loaded = null;
            await this.engine.restart();
            const replay = this.lastLoad;
            if (replay != null)
                void this.runLoad(replay, "reloading the model").catch(() => {});
            return this.engineState;
        },
        "model.inspect": async (arg) => {
            return await this.engine.request("inspect", {path: await this.access.check(arg.path)});
        },
        "model.autoOffload": async (arg) => {
            return await this.runLoad({name: "autoOffload", arg: {...arg, path: await this.access.check(arg.path)}}, "auto-offload");
        },
        "model.load": async (arg) => {
            return await this.runLoad({name: "load", arg: {...arg, path: await this.access.check(arg.path)}}, "load");
        },
        "model.unload": async () => {
            for (const stream of this.streams.values())
                await stream.stop();
            await this.engine.request("unload", undefined);
            this.loaded = null;
            this.lastLoad = null;
            this.broadcastState();
        },
        "model.current": async () => {
            if (this.engine.state.state !== "running")
                return null;
            this.loaded = await this.engine.request("current", undefined);
            return this.loaded;
        },
        "conversations.list": async () => this.store.list(),
        "conversations.get": async (arg) => await this.store.get(arg.id),
        "conversations.create": async (arg) => await this.store.create(arg.title),
        "conversations.delete": async ({id}) => {
            for (const stream of this.streams.values())
                if (stream.conversationId === id)
                    await stream.stop();
            await this.store.delete(id);
        },
        "conversations.rename": async (arg) => await this.store.rename(arg.id, arg.title),
        "chat.send": async (arg, client) => {
            const {conversationId, text} = arg;
            const streamId = this.checkNewStream(arg.streamId);
            this.checkConversationFree(conversationId);
            const conversation = await this.store.get(conversationId);
            this.requireModel();
            const history = conversation.messages.map(({role, text: turn}) => ({role, text: turn}));
            await this.store.append(conversationId, {id: randomUUID(), role: "user", text, createdAt: Date.now()});
            this.startStream(client, {
                streamId, conversationId, history, message: text,
                maxTokens: arg.maxTokens, temperature: arg.temperature
            });
        },
        "chat.regenerate": async (arg, client) => {
            const {conversationId} = arg;
            const streamId = this.checkNewStream(arg.streamId);
            this.checkConversationFree(conversationId);
            this.requireModel();
            const conversation = await this.store.dropLastAssistant(conversationId);
            const lastUser = conversation.messages.at(-1);
            if (lastUser?.role !== "user")
                throw new TensorwiseError("bad-request", "there is no message to reply to");
            const history = conversation.messages.slice(0, -1).map(({role, text}) => ({role, text}));
            this.startStream(client, {
                streamId, conversationId, history, message: lastUser.text,
                maxTokens: arg.maxTokens, temperature: arg.temperature
            });
        },
        "chat.stop": async (arg) => {
            await this.streams.get(arg.streamId)?.stop();
        },
        "dialog.openModel": async () => {
            const chosen = await (this.platform.openModelDialog?.() ?? Promise.resolve(null));
            if (chosen != null)
                this.access.approve(chosen);
            return chosen;
        },
        "bench.start": async (arg) => {
            const {path: requested, ...request} = benchGrid(arg);
            if (this.bench.runningId != null)
                throw new TensorwiseError("bench-running", "a benchmark is already running: stop it first");
            const modelPath = requested ?? this.loaded?.card.path ?? null;
            if (modelPath == null)
                throw new TensorwiseError("no-model", "no model is loaded: load one (or name its path) to benchmark it");
            await this.bench.start({...request, path: await this.access.check(modelPath)});
        },
        "bench.stop": async (arg) => await this.bench.stop(arg.benchId),
        "bench.list": async () => await this.benchStore.list(this.bench.runningId),
        "bench.get": async (arg) => await this.benchStore.get(arg.id, this.bench.runningId),
        "bench.export": async (arg) => await this.benchStore.exportFile(arg.id, arg.format),
        "dialog.saveBenchReport": async (arg) => {
            const file = await this.benchStore.exportFile(arg.id, arg.format);
            const target = await (this.platform.saveFileDialog?.(file.fileName) ?? Promise.resolve(null));
            if (target == null)
                return null;
            await fs.copyFile(file.path, target);
            return target;
        }
    };

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
        const replay = this.lastLoad;
        this.busyTask = task;
        this.loaded = null;
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
        this.loaded = null;
        this.broadcastState();
        try {
            const state = request.name === "autoOffload"
                ? await this.engine.request("autoOffload", request.arg)
                : await this.engine.request("load", request.arg);
            this.loaded = state;
            this.lastLoad = request;
            return state;
        } finally {
            this.busyTask = null;
            this.broadcastState();
        }
    }

    private startStream(client: HostClient, request: {
        streamId: string; conversationId: string; history: {role: "user" | "assistant"; text: string}[]; message: string;
        maxTokens: number | undefined; temperature: number | undefined;
    }): void {
        const sink: ChatStreamSink = {
            emit: (name, payload) => this.clients.get(client.id)?.emit(name, payload as never),
            checkpoint: (message: ChatMessage) => this.store.upsert(request.conversationId, message).then(() => {}),
            chat: (arg) => this.engine.request("chat", arg),
            stop: (streamId) => this.engine.request("stop", {streamId})
        };
        const stream = new ChatStream(request.streamId, request.conversationId, client.id, sink);
        this.streams.set(request.streamId, stream);
        void stream.run({history: request.history, message: request.message, maxTokens: request.maxTokens, temperature: request.temperature})
            .finally(() => this.streams.delete(request.streamId));
    }

    /** One reply at a time per conversation: a second send would interleave its messages with the running reply. */
    private checkConversationFree(conversationId: string): void {
        for (const stream of this.streams.values())
            if (stream.conversationId === conversationId)
                throw new TensorwiseError("busy", "this conversation is still replying: stop the reply or wait for it to finish");
    }

    private checkNewStream(streamId: string): string {
        if (this.streams.has(streamId))
            throw new TensorwiseError("bad-request", `stream ${streamId} is already running`);
        return streamId;
    }

    private requireModel(): void {
        if (this.bench.runningId != null)
            throw new TensorwiseError("bench-running", "a benchmark is running: chat is back when it finishes, or stop it on the Benchmark screen");
        if (this.engine.state.state === "crashed")
            throw new TensorwiseError("engine-crashed", "the engine is not running: restart it first");
        if (this.loaded == null)
            throw new TensorwiseError("no-model", "no model is loaded: open one on the Model screen and press Auto-offload");
    }

    private onEngineState(state: EngineClientState): void {
        if (state.state === "crashed" || state.state === "stopped")
            this.loaded = null;
        this.broadcastState();
    }

    private onEngineEvent<Name extends keyof EngineEvents>(name: Name, payload: EngineEvents[Name]): void {
        if (name === "progress")
            this.broadcast("task.progress", payload as EngineEvents["progress"]);
        else if (name === "delta") {
            const delta = payload as EngineEvents["delta"];
            this.streams.get(delta.streamId)?.onDelta(delta.text, delta.elapsedMs, delta.tokens);
        } else if (name === "benchProgress")
            this.bench.onProgress(payload as EngineEvents["benchProgress"]);
    }

    private broadcastState(): void {
        this.broadcast("engine.state", this.engineState);
    }

    private broadcast<Name extends EventName>(name: Name, payload: Events[Name]): void {
        for (const client of this.clients.values())
            client.emit(name, payload);
    }
}
