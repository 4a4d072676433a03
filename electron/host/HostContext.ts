/**
 * What the per-domain request handlers (model/, conversations/, chat/, bench/, dialogs/) share: the host's stores,
 * the engine, and the few pieces of state that cross domains (the loaded model, running replies, the busy task).
 * {@link HostService} owns it and builds one; each domain file turns it into handlers for its requests.
 */
import {TensorwiseError} from "../contract/TensorwiseError.js";
import type {EngineState, LibraryLoad, LoadedModelState, RequestArg, RequestName, RequestResult, Requests} from "../contract/ipc.js";
import type {EngineChatRequest} from "../engine/service/engineProtocol.js";
import type {BenchRunner} from "./bench/BenchRunner.js";
import type {BenchStore} from "./bench/BenchStore.js";
import type {ChatStream} from "./ChatStream.js";
import type {ConversationStore} from "./ConversationStore.js";
import type {EngineClient} from "./EngineClient.js";
import type {HostClient, HostPlatform} from "./HostService.js";
import type {ModelAccess} from "./ModelAccess.js";
import type {ServerControl} from "./server/ServerControl.js";
import type {ModelLibrary} from "./ModelLibrary.js";
import type {UploadedCopies} from "./model/UploadedCopies.js";
import type {RpcServers} from "./rpc/RpcServers.js";

/** A load the host can replay after an engine restart. */
export type LoadRequest =
    | {name: "autoOffload"; arg: Requests["model.autoOffload"][0]}
    | {name: "load"; arg: Requests["model.load"][0]};

/** `request` as the library keeps it, to repeat later (without its path and task id). */
export function toLibraryLoad(request: LoadRequest): LibraryLoad {
    if (request.name === "autoOffload") {
        const {budget, settings, strategy} = request.arg;
        return {name: "autoOffload", budget, settings, ...(strategy != null && {strategy})};
    }
    return {name: "load", gpuLayers: request.arg.gpuLayers, settings: request.arg.settings};
}

/** A reply to start: the history before it, the message it answers, its system prompt and sampling options. */
export type StreamRequest = EngineChatRequest & {conversationId: string};

/** State several domains read and change. */
export type SharedHostState = {
    /** The model the engine holds, as the clients see it. */
    loaded: LoadedModelState | null;
    /** The last successful load, replayed after an engine restart so the user is back where the crash left them. */
    lastLoad: LoadRequest | null;
};

export type HostContext = {
    readonly store: ConversationStore;
    readonly engine: EngineClient;
    readonly platform: HostPlatform;
    readonly access: ModelAccess;
    /** Recent models and how each was last loaded. */
    readonly library: ModelLibrary;
    /** Web-mode uploads not yet opened: deleted when validation rejects them. */
    readonly uploads: UploadedCopies;
    readonly benchStore: BenchStore;
    readonly bench: BenchRunner;
    /** Running replies by stream id. */
    readonly streams: ReadonlyMap<string, ChatStream>;
    readonly shared: SharedHostState;
    /** The app's OpenAI-compatible server. */
    readonly server: ServerControl;
    /** The rpc-servers of the settings, and the engine's share of them. */
    readonly rpc: RpcServers;
    engineState(): EngineState;
    broadcastState(): void;
    /** Marks the engine busy with `task` while it loads (stopping replies first); remembered for a replay. */
    runLoad(request: LoadRequest, task: string): Promise<LoadedModelState>;
    /** Throws the coded reason why no reply can start now (a benchmark, a crashed engine, no model). */
    requireModel(): void;
    startStream(client: HostClient, request: StreamRequest): void;
};

/** Refuses a change to a conversation while a reply is still writing to it (it would interleave its messages). */
export function checkConversationFree(host: Pick<HostContext, "streams">, conversationId: string): void {
    for (const stream of host.streams.values())
        if (stream.conversationId === conversationId)
            throw new TensorwiseError("busy", "this conversation is still replying: stop the reply or wait for it to finish");
}

/** Handlers of the requests `Name`, each given its checked argument and the client that sent it. */
export type RequestHandlers<Name extends RequestName> = {
    [N in Name]: (arg: RequestArg<N>, client: HostClient) => Promise<RequestResult<N>>;
};
