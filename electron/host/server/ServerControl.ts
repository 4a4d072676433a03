/**
 * The app's OpenAI-compatible server as the host keeps it: the user's settings and key, and the reconciliation that
 * makes the engine serve exactly when the server is on and a model is loaded (the engine child owns the model, so it
 * listens itself: tokens go from its sequences to the socket without crossing the host). The host calls
 * {@link ServerControl.reconcile} whenever the engine's state changes (a load, an unload, a crash, a benchmark).
 * The settings and the key are kept in one JSON file in the data folder, so clients configured with the key keep
 * working after a restart, and a server left on comes back on with the next model.
 */
import {randomBytes} from "node:crypto";
import type {LoadedModelState} from "../../contract/ipc.js";
import {
    CLIENT_KEY_NAME_PATTERN, DEFAULT_SERVER_SETTINGS, MAX_CLIENT_KEYS, RECENT_SERVED_REQUESTS, refuseOpenHost, type ClientKey, type ServedRequest, type ServerChange, type ServerSettings, type ServerStartup, type ServerStartupStep, type ServerState, type ServerStatus
} from "../../contract/server.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import type {EngineServeRequest} from "../../contract/engineProtocol.js";
import type {EngineClient} from "../engineChild/EngineClient.js";
import {checkRequest} from "../checkRequest.js";
import {readJsonFile, writeJsonFile} from "../storage/JsonFileStore.js";

/** The settings file's name in the data folder. */
export const SERVER_SETTINGS_FILE = "server.json";
const FORMAT_VERSION = 1;

/** Random bytes in a generated key (base64url: 32 characters). */
const API_KEY_BYTES = 24;
/** What {@link generateApiKey} makes. */
const API_KEY_PATTERN = /^tw-[A-Za-z0-9_-]{32}$/;

export type ServerControlOptions = {
    engine: Pick<EngineClient, "request" | "state">;
    /** The model the engine holds (null: none), and whether it is busy with a load or a benchmark. */
    loaded(): LoadedModelState | null;
    busy(): boolean;
    /** Pushes the state to every client (`server.state`). */
    broadcast(state: ServerState): void;
    /** Where the settings and key are kept ({@link SERVER_SETTINGS_FILE} in the data folder); `null`: not kept. */
    file: string | null;
};

/** What the engine serves: the request it got and the model it was loaded for. */
type Running = {request: EngineServeRequest; model: LoadedModelState; url: string; modelId: string};

export class ServerControl {
    private settings: ServerSettings = {...DEFAULT_SERVER_SETTINGS};
    private apiKey = generateApiKey();
    private clientKeys: ClientKey[] = [];
    private running: Running | null = null;
    private status: ServerStatus = "off";
    /** The start under way (while `status` is `starting`). */
    private startup: ServerStartup | null = null;
    private error: string | null = null;
    /** The request that failed, not retried until something changes (another model, other settings). */
    private failed: {signature: string; model: LoadedModelState} | null = null;
    private queue: Promise<void> = Promise.resolve();
    private reading: Promise<void> | null = null;
    private recent: ServedRequest[] = [];
    private served = 0;

    constructor(private readonly options: ServerControlOptions) {}

    /** Reads the kept settings and key once (a missing file: the defaults and a new key). Call before anything else. */
    ready(): Promise<void> {
        this.reading ??= this.read();
        return this.reading;
    }

    get state(): ServerState {
        return {
            ...this.settings, corsOrigins: [...this.settings.corsOrigins], apiKey: this.apiKey, clientKeys: this.clientKeys.map((entry) => ({...entry})), status: this.status,
            startup: this.startup == null ? null : {...this.startup, steps: [...this.startup.steps]}, url: this.running?.url ?? null,
            modelId: this.running?.modelId ?? null, error: this.error, recent: [...this.recent], served: this.served
        };
    }

    /** A request the engine's server answered: listed on the Server screen, newest first. */
    record(served: ServedRequest): void {
        this.recent = [served, ...this.recent].slice(0, RECENT_SERVED_REQUESTS);
        this.served++;
        this.options.broadcast(this.state);
    }

    /**
     * A step of the engine's server start (its `serveStartup` event): shown while the server is starting, ignored
     * otherwise (a late event of a start that has ended).
     */
    onStartup(progress: {step: ServerStartupStep; fraction: number | null}): void {
        if (this.status !== "starting" || this.startup == null)
            return;
        const {steps} = this.startup;
        this.startup = {step: progress.step, fraction: progress.fraction, steps: steps.at(-1) === progress.step ? steps : [...steps, progress.step]};
        this.options.broadcast(this.state);
    }

    /**
     * Applies a change from the Server screen and brings the engine in line. Throws a `bad-request` error, changing
     * nothing, when the result would let other machines in without a key.
     */
    async set(change: ServerChange): Promise<ServerState> {
        await this.ready();
        const current = this.settings;
        const next: ServerSettings = {
            enabled: change.enabled ?? current.enabled, port: change.port ?? current.port, bindAddress: change.bindAddress ?? current.bindAddress,
            requireKey: change.requireKey ?? current.requireKey, parallel: change.parallel ?? current.parallel,
            kvDiskBudgetMiB: change.kvDiskBudgetMiB !== undefined ? change.kvDiskBudgetMiB : current.kvDiskBudgetMiB,
            corsOrigins: change.corsOrigins ?? current.corsOrigins
        };
        const refused = refuseOpenHost(next.bindAddress, next.requireKey, "keep \"Require API key\" on");
        if (refused != null)
            throw new TensorwiseError("bad-request", refused);
        const apiKey = change.regenerateKey === true ? generateApiKey() : this.apiKey;
        const clientKeys = changedClientKeys(this.clientKeys, change);
        // kept before it takes effect: a change that cannot be saved (a full disk) is refused, not half made
        await this.save(next, apiKey, clientKeys);
        this.settings = next;
        this.apiKey = apiKey;
        this.clientKeys = clientKeys;
        this.failed = null;
        await this.reconcile();
        return this.state;
    }

    /** Starts, restarts or stops the engine's server to match the settings and the loaded model; one at a time. */
    reconcile(): Promise<void> {
        const run = this.queue.then(() => this.ready()).then(() => this.reconcileNow());
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
        // keys alone change without a restart (same port, no new calibration): a client key added or revoked
        if (this.running != null && wanted != null && this.running.model.loadId === model?.loadId && this.running.request.apiKeys.length > 0 === wanted.apiKeys.length > 0 &&
            restartSignature(this.running.request) === restartSignature(wanted) && JSON.stringify(this.running.request.apiKeys) !== JSON.stringify(wanted.apiKeys)) {
            try {
                await this.options.engine.request("serveKeys", {apiKeys: wanted.apiKeys});
                this.running = {...this.running, request: wanted};
            } catch {
                // the engine's server could not take them: start it again with them below
            }
        }
        if (this.running != null && (wanted == null || JSON.stringify(this.running.request) !== signature || this.running.model.loadId !== model?.loadId)) {
            this.running = null;
            // a crashed engine took its server with it; a loading one closes it itself
            if (engineUp)
                await this.options.engine.request("serveStop", undefined).catch(() => {});
        }
        if (wanted != null && model != null && this.running == null && !(this.failed?.signature === signature && this.failed.model.loadId === model.loadId)) {
            this.status = "starting";
            this.startup = {step: null, fraction: null, steps: []};
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
        this.startup = null;
        this.status = this.running != null ? "serving"
            : !this.settings.enabled ? "off"
                : this.failed != null && this.error != null ? "failed" : "waiting-for-model";
        if (this.status !== "failed")
            this.error = null;
        if (JSON.stringify(this.state) !== before)
            this.options.broadcast(this.state);
    }

    private async save(settings: ServerSettings, apiKey: string, clientKeys: ClientKey[]): Promise<void> {
        if (this.options.file == null) return;
        try {
            await writeJsonFile(this.options.file, FORMAT_VERSION, {settings, apiKey, clientKeys});
        } catch (error) {
            throw new TensorwiseError("io-error", `the server settings cannot be saved to ${this.options.file}: ${(error as Error).message}`);
        }
    }

    private async read(): Promise<void> {
        const file = this.options.file;
        if (file == null) return;
        // none yet: the defaults and a new key; the first change writes it
        const kept = await readJsonFile(file, "the server settings", (parsed) => {
            const stored = parsed as {version?: unknown; settings?: unknown; apiKey?: unknown; clientKeys?: unknown};
            // the same checks as a change from the Server screen
            const settings = checkRequest("server.set", stored.settings);
            const complete = {...DEFAULT_SERVER_SETTINGS, ...settings};
            if (stored.version !== FORMAT_VERSION || typeof stored.apiKey !== "string" || !API_KEY_PATTERN.test(stored.apiKey) ||
                refuseOpenHost(complete.bindAddress, complete.requireKey, "") != null)
                return null;
            // a file from before client keys has none
            return {complete, apiKey: stored.apiKey, clientKeys: stored.clientKeys === undefined ? [] : readClientKeys(stored.clientKeys)};
        });
        if (kept == null)
            return;
        const {complete} = kept;
        this.settings = {
            enabled: complete.enabled, port: complete.port, bindAddress: complete.bindAddress, requireKey: complete.requireKey, parallel: complete.parallel,
            kvDiskBudgetMiB: complete.kvDiskBudgetMiB, corsOrigins: [...complete.corsOrigins]
        };
        this.apiKey = kept.apiKey;
        this.clientKeys = kept.clientKeys;
    }


    private request(): EngineServeRequest {
        return {
            host: this.settings.bindAddress, port: this.settings.port, parallel: this.settings.parallel,
            apiKeys: this.settings.requireKey ? [this.apiKey, ...this.clientKeys.map((entry) => entry.key)] : [],
            kvDiskBudgetMiB: this.settings.kvDiskBudgetMiB, corsOrigins: [...this.settings.corsOrigins]
        };
    }
}

/** What makes a running server start again when it changes: everything but the keys themselves. */
function restartSignature(request: EngineServeRequest): string {
    const {apiKeys: _keys, ...rest} = request;
    return JSON.stringify(rest);
}

/** The client keys after `change` (a key added, one revoked); a name taken, unknown or one key too many is refused by name. */
function changedClientKeys(current: readonly ClientKey[], change: ServerChange): ClientKey[] {
    let keys = [...current];
    if (change.revokeClientKey != null) {
        const name = change.revokeClientKey;
        if (!keys.some((entry) => entry.name === name))
            throw new TensorwiseError("bad-request", `There is no client key named "${name}" to revoke.`);
        keys = keys.filter((entry) => entry.name !== name);
    }
    if (change.addClientKey != null) {
        const name = change.addClientKey;
        if (keys.some((entry) => entry.name === name))
            throw new TensorwiseError("bad-request", `A client key named "${name}" exists already: revoke it first, or choose another name.`);
        if (keys.length >= MAX_CLIENT_KEYS)
            throw new TensorwiseError("bad-request", `The server keeps at most ${MAX_CLIENT_KEYS} client keys: revoke one first.`);
        keys.push({name, key: generateApiKey()});
    }
    return keys;
}

/** Client keys as kept in the settings file, checked as the Server screen's changes are; anything else throws. */
function readClientKeys(value: unknown): ClientKey[] {
    if (!Array.isArray(value) || value.length > MAX_CLIENT_KEYS)
        throw new Error("clientKeys is not a list of at most " + MAX_CLIENT_KEYS);
    const keys = value.map((entry: unknown) => {
        const {name, key} = (entry ?? {}) as {name?: unknown; key?: unknown};
        if (typeof name !== "string" || !CLIENT_KEY_NAME_PATTERN.test(name) || typeof key !== "string" || !API_KEY_PATTERN.test(key))
            throw new Error("a client key is not {name, key}");
        return {name, key};
    });
    if (new Set(keys.map((entry) => entry.name)).size !== keys.length || new Set(keys.map((entry) => entry.key)).size !== keys.length)
        throw new Error("client keys repeat a name or a key");
    return keys;
}

/** A fresh random key (base64url, no characters a shell or a header would mangle). */
function generateApiKey(): string {
    return `tw-${randomBytes(API_KEY_BYTES).toString("base64url")}`;
}
