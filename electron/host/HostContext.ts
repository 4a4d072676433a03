/**
 * What the per-domain request handlers (model/, conversations/, chat/, bench/, dialogs/, rpc/, server/) share: the host's stores,
 * the engine, and the few pieces of state that cross domains (the loaded model, running replies, the busy task).
 * {@link HostService} owns it and builds one; each domain file turns it into handlers for its requests.
 */
import {TensorwiseError} from "../contract/TensorwiseError.js";
import type {EngineState, EventName, Events, LibraryLoad, LoadedModelState, RequestArg, RequestName, RequestResult, Requests} from "../contract/ipc.js";
import type {BenchRunner} from "./bench/BenchRunner.js";
import type {BenchStore} from "./bench/BenchStore.js";
import type {ChatStream, StreamRequest} from "./chat/ChatStream.js";
import type {ConversationStore} from "./conversations/ConversationStore.js";
import type {EngineClient} from "./engineChild/EngineClient.js";
import type {ModelAccess} from "./model/ModelAccess.js";
import type {ServerControl} from "./server/ServerControl.js";
import type {ModelFolders} from "./model/ModelFolders.js";
import type {ModelLibrary} from "./model/ModelLibrary.js";
import type {UploadedCopies} from "./model/UploadedCopies.js";
import type {RpcServers} from "./rpc/RpcServers.js";
import type {McpServers} from "./tools/McpServers.js";

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

/** A load the host can replay after an engine restart. */
export type LoadRequest =
    | {name: "autoOffload"; arg: Requests["model.autoOffload"][0]}
    | {name: "load"; arg: Requests["model.load"][0]};

/** `request` as the library keeps it, to repeat later (without its path and task id). */
export function toLibraryLoad(request: LoadRequest): LibraryLoad {
    if (request.name === "autoOffload") {
        const {budget, settings, strategy, speculative} = request.arg;
        return {name: "autoOffload", budget, settings, ...(strategy != null && {strategy}), ...(speculative != null && {speculative})};
    }
    const {gpuLayers, settings, speculative} = request.arg;
    return {name: "load", gpuLayers, settings, ...(speculative != null && {speculative})};
}

/** A reply to start: the history before it, the message it answers, its system prompt, sampling options and tools. */
export type ReplyRequest = StreamRequest;

/**
 * The one reply a conversation may have: taken atomically (check and register in one synchronous step) before the
 * first `await` of a request that starts a reply, so two requests racing for the same conversation cannot both pass.
 * The stream it becomes writes to `conversationId` and no other; `release` gives it back (on failure, or when the
 * reply has ended).
 */
/**
 * A conversation's reply, held from before it is prepared (its tools' servers may take long to start) until it ends;
 * `stopped` is aborted by a Stop that lands while it is still being prepared.
 */
export type ReplySlot = {readonly conversationId: string; readonly streamId: string; readonly stopped: AbortSignal; release(): void};

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
    /** Every model in the models folders, watched. */
    readonly modelFolders: ModelFolders;
    /** Web-mode uploads not yet opened: deleted when validation rejects them. */
    readonly uploads: UploadedCopies;
    readonly benchStore: BenchStore;
    readonly bench: BenchRunner;
    /** Running replies by stream id. */
    readonly streams: ReadonlyMap<string, ChatStream>;
    readonly shared: SharedHostState;
    /** The app's OpenAI-compatible server. */
    readonly server: ServerControl;
    /** Tasks the host itself runs (a model download), by task id, for `task.cancel`. */
    readonly hostTasks: Map<string, AbortController>;
    /** The rpc-servers of the settings, and the engine's share of them. */
    readonly rpc: RpcServers;
    /** The MCP servers the chat's tools come from. */
    readonly tools: McpServers;
    engineState(): EngineState;
    broadcastState(): void;
    /** Marks the engine busy with `task` while it loads (stopping replies first); remembered for a replay. */
    runLoad(request: LoadRequest, task: string): Promise<LoadedModelState>;
    /** Throws the coded reason why no reply can start now (a benchmark, a crashed engine, no model). */
    requireModel(): void;
    /**
     * Takes the reply slot of `conversationId` for stream `streamId`; throws `busy` ("a reply is already being written
     * in this conversation") while another request or reply holds it, and `bad-request` for a stream id in use.
     */
    reserveReply(conversationId: string, streamId: string): ReplySlot;
    /** Stops the reply `streamId` that is still being prepared (not yet streaming); whether there was one. */
    stopPreparing(streamId: string): boolean;
    /** Whether a reply is being prepared or written in `conversationId`. */
    isReplying(conversationId: string): boolean;
    /** Starts the reply of `slot`, which it then owns (released when the reply ends). */
    startStream(client: HostClient, slot: ReplySlot, request: ReplyRequest): void;
};

/** The refusal of a second reply, or of a change, while a reply is written in the conversation. */
export const REPLY_RUNNING_MESSAGE = "a reply is already being written in this conversation: stop it or wait for it to finish";

/** Refuses a change to a conversation while a reply is still writing to it (it would interleave its messages). */
export function checkConversationFree(host: Pick<HostContext, "isReplying">, conversationId: string): void {
    if (host.isReplying(conversationId))
        throw new TensorwiseError("busy", REPLY_RUNNING_MESSAGE);
}

/** Handlers of the requests `Name`, each given its checked argument and the client that sent it. */
export type RequestHandlers<Name extends RequestName> = {
    [N in Name]: (arg: RequestArg<N>, client: HostClient) => Promise<RequestResult<N>>;
};
