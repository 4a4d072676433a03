/**
 * The app's OpenAI-compatible server as the host keeps it: the user's settings and key, and the reconciliation that
 * makes the engine serve exactly when the server is on and a model is loaded (the engine child owns the model, so it
 * listens itself: tokens go from its sequences to the socket without crossing the host). The host calls
 * {@link ServerControl.reconcile} whenever the engine's state changes (a load, an unload, a crash, a benchmark).
 */
import {randomBytes} from "node:crypto";
import type {LoadedModelState} from "../../contract/ipc.js";
import {DEFAULT_SERVER_SETTINGS, refuseOpenHost, type ServerChange, type ServerSettings, type ServerState, type ServerStatus} from "../../contract/server.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import type {EngineServeRequest} from "../../engine/service/engineProtocol.js";
import type {EngineClient} from "../EngineClient.js";

/** Random bytes in a generated key (base64url: 32 characters). */
const API_KEY_BYTES = 24;

export type ServerControlOptions = {
    engine: Pick<EngineClient, "request" | "state">;
    /** The model the engine holds (null: none), and whether it is busy with a load or a benchmark. */
    loaded(): LoadedModelState | null;
    busy(): boolean;
    /** Pushes the state to every client (`server.state`). */
    broadcast(state: ServerState): void;
};

/** What the engine serves: the request it got and the model it was loaded for. */
type Running = {request: EngineServeRequest; model: LoadedModelState; url: string; modelId: string};

export class ServerControl {
    private settings: ServerSettings = {...DEFAULT_SERVER_SETTINGS};
    private apiKey = generateApiKey();
    private running: Running | null = null;
    private status: ServerStatus = "off";
    private error: string | null = null;
    /** The request that failed, not retried until something changes (another model, other settings). */
    private failed: {signature: string; model: LoadedModelState} | null = null;
    private queue: Promise<void> = Promise.resolve();

    constructor(private readonly options: ServerControlOptions) {}

    get state(): ServerState {
        return {
            ...this.settings, apiKey: this.apiKey, status: this.status, url: this.running?.url ?? null,
            modelId: this.running?.modelId ?? null, error: this.error
        };
    }

    /**
     * Applies a change from the Server screen and brings the engine in line. Throws a `bad-request` error, changing
     * nothing, when the result would let other machines in without a key.
     */
    async set(change: ServerChange): Promise<ServerState> {
        const current = this.settings;
        const next: ServerSettings = {
            enabled: change.enabled ?? current.enabled, port: change.port ?? current.port, bindAddress: change.bindAddress ?? current.bindAddress,
            requireKey: change.requireKey ?? current.requireKey, parallel: change.parallel ?? current.parallel
        };
        const refused = refuseOpenHost(next.bindAddress, next.requireKey, "keep \"Require API key\" on");
        if (refused != null)
            throw new TensorwiseError("bad-request", refused);
        this.settings = next;
        if (change.regenerateKey === true)
            this.apiKey = generateApiKey();
        this.failed = null;
        await this.reconcile();
        return this.state;
    }

    /** Starts, restarts or stops the engine's server to match the settings and the loaded model; one at a time. */
    reconcile(): Promise<void> {
        const run = this.queue.then(() => this.reconcileNow());
        this.queue = run.catch(() => {});
        return run;
    }

    /** Stops the engine's server (the host is shutting down). */
    async dispose(): Promise<void> {
        this.settings = {...this.settings, enabled: false};
        await this.reconcile().catch(() => {});
    }

    private async reconcileNow(): Promise<void> {
        const before = JSON.stringify(this.state);
        const model = this.options.loaded();
        const engineUp = this.options.engine.state.state === "running";
        const wanted = this.settings.enabled && model != null && engineUp && !this.options.busy() ? this.request() : null;
        const signature = JSON.stringify(wanted);
        if (this.running != null && (wanted == null || JSON.stringify(this.running.request) !== signature || this.running.model !== model)) {
            this.running = null;
            // a crashed engine took its server with it; a loading one closes it itself
            if (engineUp)
                await this.options.engine.request("serveStop", undefined).catch(() => {});
        }
        if (wanted != null && model != null && this.running == null && !(this.failed?.signature === signature && this.failed.model === model)) {
            this.status = "starting";
            this.error = null;
            this.options.broadcast(this.state);
            try {
                const started = await this.options.engine.request("serveStart", wanted);
                // the context now holds `parallel` sequences: the Memory screen shows their KV cache
                model.measured = started.measured;
                this.running = {request: wanted, model, url: started.url, modelId: started.modelId};
                this.failed = null;
            } catch (error) {
                this.failed = {signature, model};
                this.error = error instanceof Error ? error.message : String(error);
            }
        }
        this.status = this.running != null ? "serving"
            : !this.settings.enabled ? "off"
                : this.failed != null && this.error != null ? "failed" : "waiting-for-model";
        if (this.status !== "failed")
            this.error = null;
        if (JSON.stringify(this.state) !== before)
            this.options.broadcast(this.state);
    }

    private request(): EngineServeRequest {
        return {
            host: this.settings.bindAddress, port: this.settings.port, parallel: this.settings.parallel,
            apiKey: this.settings.requireKey ? this.apiKey : null
        };
    }
}

/** A fresh random key (base64url, no characters a shell or a header would mangle). */
function generateApiKey(): string {
    return `tw-${randomBytes(API_KEY_BYTES).toString("base64url")}`;
}
