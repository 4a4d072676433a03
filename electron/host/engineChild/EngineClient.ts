/**
 * The host's handle on the engine child process: forks `engineMain.js`, sends typed requests with ids, dispatches
 * engine events, and survives the child dying — every pending request then rejects with code `"engine-crashed"` and
 * {@link EngineClient.state} says why, until {@link EngineClient.restart} brings a fresh child up.
 *
 * Imports nothing from `electron`: Electron main and the web-mode server share it.
 */
import {existsSync} from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {explainRpcAbort} from "../../engine/rpc/explainRpcAbort.js";
import {
    ENGINE_RPC_ENV, type EngineEvents, type EngineMessage, type EngineRequestName, type EngineRequests
} from "../../contract/engineProtocol.js";
import type {ErrorCode} from "../../contract/errorCodes.js";
import type {Reply} from "../../contract/envelope.js";
import {forkEngineProcess, type EngineProcess, type EngineSpawner} from "./forkEngineProcess.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";

/** Lines of the child's stderr kept for a crash report. */
const STDERR_TAIL_LINES = 12;
/** How long the child may take to say `ready`. */
const DEFAULT_START_TIMEOUT_MS = 60_000;
/** How long `stop()` waits for the child to exit after `shutdown` before sending SIGTERM. */
const STOP_GRACE_MS = 3_000;
/** How long after SIGTERM `stop()` waits before SIGKILL. */
const TERM_GRACE_MS = 2_000;

export type EngineClientState =
    | {state: "stopped"}
    | {state: "starting"}
    | {state: "running"; pid: number}
    | {state: "crashed"; reason: string; at: number};

export type EngineClientOptions = {
    /** The engine entry script. Defaults to `dist/electron/engineProcess/engineMain.js` of this package. */
    entry?: string;
    /** Environment of the child. Defaults to this process's environment. */
    env?: NodeJS.ProcessEnv;
    /** Node binary that runs the entry with the default spawner. Defaults to this process's. */
    execPath?: string;
    /**
     * Starts the engine process. Defaults to Node's `child_process.fork` ({@link forkEngineProcess} with `execPath`);
     * Electron main passes a `utilityProcess` spawner.
     */
    spawner?: EngineSpawner;
    /** Defaults to 60 s. */
    startTimeoutMs?: number;
    /** Called with every line the child writes to stdout/stderr. */
    onLog?: (stream: "stdout" | "stderr", line: string) => void;
};

type Pending = {resolve: (value: unknown) => void; reject: (error: Error) => void; cleanup: () => void};
type EventListener = <Name extends keyof EngineEvents>(name: Name, payload: EngineEvents[Name]) => void;

/** Finds the compiled engine entry whether this file runs from `dist/` or from sources (Vitest). */
export function defaultEngineEntry(): string {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const sibling = path.resolve(here, "../../engineProcess/engineMain.js");
    if (existsSync(sibling))
        return sibling;
    // running from sources: <root>/electron/host/engineChild → <root>/dist/electron/engineProcess/engineMain.js
    return path.resolve(here, "../../../dist/electron/engineProcess/engineMain.js");
}

export class EngineClient {
    private child: EngineProcess | null = null;
    private nextId = 1;
    private readonly pending = new Map<number, Pending>();
    private readonly stderrTail: string[] = [];
    private currentState: EngineClientState = {state: "stopped"};
    private readonly eventListeners = new Set<EventListener>();
    private readonly stateListeners = new Set<(state: EngineClientState) => void>();
    private starting: Promise<void> | null = null;
    private rpcEndpoints: readonly string[] = [];

    constructor(private readonly options: EngineClientOptions = {}) {}

    get state(): EngineClientState {
        return this.currentState;
    }

    /** The child's process id while it runs. */
    get pid(): number | null {
        return this.currentState.state === "running" ? this.currentState.pid : null;
    }

    /** Listens to engine events (progress, delta, log). Returns an unsubscribe function. */
    onEvent(listener: EventListener): () => void {
        this.eventListeners.add(listener);
        return () => this.eventListeners.delete(listener);
    }

    /** Listens to state changes (starting, running, crashed, stopped). */
    onState(listener: (state: EngineClientState) => void): () => void {
        this.stateListeners.add(listener);
        return () => this.stateListeners.delete(listener);
    }

    /**
     * The rpc-servers (`host:port`) the next child registers when it starts; the running child keeps its own until
     * {@link restart}.
     */
    set rpcServers(endpoints: readonly string[]) {
        this.rpcEndpoints = [...endpoints];
    }

    get rpcServers(): readonly string[] {
        return this.rpcEndpoints;
    }

    /** Forks the child and waits for its `ready`. Idempotent while starting or running. */
    start(): Promise<void> {
        if (this.currentState.state === "running")
            return Promise.resolve();
        this.starting ??= this.spawn().finally(() => {
            this.starting = null;
        });
        return this.starting;
    }

    /** Ends the current child (if any) and starts a fresh one. */
    async restart(): Promise<void> {
        await this.stop();
        await this.start();
    }

    /**
     * Asks the child to exit (`shutdown` → it disposes llama.cpp and the server's KV files), then SIGTERM after
     * {@link STOP_GRACE_MS}, then SIGKILL after {@link TERM_GRACE_MS}. Resolves when it has exited.
     */
    async stop(): Promise<void> {
        const child = this.child;
        if (child == null) {
            if (this.currentState.state !== "crashed")
                this.setState({state: "stopped"});
            return;
        }
        this.child = null;
        this.rejectAll("engine-stopped", "the engine was stopped");
        this.setState({state: "stopped"});
        if (child.exited)
            return;
        await new Promise<void>((resolve) => {
            let kill: NodeJS.Timeout | undefined;
            const term = setTimeout(() => {
                child.kill("SIGTERM");
                kill = setTimeout(() => child.kill("SIGKILL"), TERM_GRACE_MS);
            }, STOP_GRACE_MS);
            child.onExit(() => {
                clearTimeout(term);
                clearTimeout(kill);
                resolve();
            });
            // the engine disposes llama.cpp and exits on `shutdown`
            if (!child.send({kind: "shutdown"}))
                child.kill();
        });
    }

    /**
     * Sends one request and resolves with the engine's result. Rejects with a {@link TensorwiseError}: the engine's own
     * error code, `"engine-crashed"` when the child dies first, `"engine-not-running"`, or `"aborted"`.
     */
    request<Name extends EngineRequestName>(name: Name, arg: EngineRequests[Name][0], signal?: AbortSignal): Promise<EngineRequests[Name][1]> {
        const child = this.child;
        if (child == null || this.currentState.state !== "running" || child.exited)
            return Promise.reject(this.notRunningError());
        if (signal?.aborted)
            return Promise.reject(new TensorwiseError("aborted", `${name} was cancelled`));
        const id = this.nextId++;
        return new Promise<EngineRequests[Name][1]>((resolve, reject) => {
            const onAbort = () => {
                this.pending.delete(id);
                reject(new TensorwiseError("aborted", `${name} was cancelled`));
            };
            signal?.addEventListener("abort", onAbort, {once: true});
            this.pending.set(id, {
                resolve: resolve as (value: unknown) => void,
                reject,
                cleanup: () => signal?.removeEventListener("abort", onAbort)
            });
            const message: EngineMessage = {kind: "request", id, name, arg};
            try {
                if (!child.send(message))
                    this.settle(id, {ok: false, error: {code: "engine-crashed", message: "could not reach the engine: its channel is closed"}});
            } catch (error) {
                this.settle(id, {ok: false, error: {code: "bad-request", message: `could not send ${name} to the engine: ${(error as Error).message}`}});
            }
        });
    }

    private notRunningError(): TensorwiseError {
        const state = this.currentState;
        if (state.state === "crashed")
            return new TensorwiseError("engine-crashed", `the engine process is not running (${state.reason})`);
        return new TensorwiseError("engine-not-running", "the engine process is not running");
    }

    private spawn(): Promise<void> {
        const entry = this.options.entry ?? defaultEngineEntry();
        if (!existsSync(entry))
            return Promise.reject(new TensorwiseError("engine-missing", `engine entry not found at ${entry}; run \`npm run build\``));
        this.stderrTail.length = 0;
        this.setState({state: "starting"});
        const spawner = this.options.spawner ?? forkEngineProcess(this.options.execPath);
        let child: EngineProcess;
        try {
            child = spawner(entry, {env: {...this.options.env ?? process.env, [ENGINE_RPC_ENV]: this.rpcEndpoints.join(",")}});
        } catch (error) {
            this.setState({state: "crashed", reason: `could not start: ${(error as Error).message}`, at: Date.now()});
            return Promise.reject(new TensorwiseError("engine-start-failed", (error as Error).message));
        }
        this.child = child;
        this.pipeLines(child, "stdout");
        this.pipeLines(child, "stderr");

        return new Promise<void>((resolve, reject) => {
            let ready = false;
            const timer = setTimeout(() => {
                if (!ready) {
                    reject(new TensorwiseError("engine-start-timeout", `the engine did not start within ${this.startTimeoutMs / 1000} s`));
                    child.kill();
                }
            }, this.startTimeoutMs);

            child.onMessage((raw: unknown) => {
                const message = raw as EngineMessage;
                if (message == null || typeof message !== "object" || this.child !== child)
                    return;
                if (message.kind === "ready") {
                    ready = true;
                    clearTimeout(timer);
                    this.setState({state: "running", pid: child.pid ?? -1});
                    resolve();
                } else if (message.kind === "response")
                    this.settle(message.id, message);
                else if (message.kind === "event")
                    for (const listener of this.eventListeners)
                        listener(message.name, message.payload as never);
            });
            child.onError((error) => {
                if (!ready) {
                    clearTimeout(timer);
                    reject(new TensorwiseError("engine-start-failed", error.message));
                }
            });
            child.onExit((code, signal) => {
                clearTimeout(timer);
                if (this.child !== child)
                    return; // stopped on purpose
                this.child = null;
                const reason = this.describeExit(code, signal);
                this.rejectAll("engine-crashed", `the engine process ended: ${reason}`);
                this.setState({state: "crashed", reason, at: Date.now()});
                if (!ready)
                    reject(new TensorwiseError("engine-crashed", `the engine failed to start: ${reason}`));
            });
        });
    }

    private get startTimeoutMs(): number {
        return this.options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    }

    private describeExit(code: number | null, signal: NodeJS.Signals | null): string {
        const how = signal != null ? `killed by ${signal}` : `exit code ${code ?? "unknown"}`;
        const tail = this.stderrTail.join("\n").trim();
        // a lost rpc-server aborts llama.cpp: say so first, in words the user can act on
        const rpc = explainRpcAbort(tail);
        const reason = rpc == null ? how : `${rpc} (${how})`;
        return tail === "" ? reason : `${reason}\n${tail}`;
    }

    private settle(id: number, response: Reply<unknown>): void {
        const pending = this.pending.get(id);
        if (pending == null)
            return;
        this.pending.delete(id);
        pending.cleanup();
        if (response.ok)
            pending.resolve(response.result);
        else
            pending.reject(new TensorwiseError(response.error.code, response.error.message));
    }

    private rejectAll(code: ErrorCode, message: string): void {
        const all = [...this.pending.values()];
        this.pending.clear();
        for (const pending of all) {
            pending.cleanup();
            pending.reject(new TensorwiseError(code, message));
        }
    }

    private pipeLines(child: EngineProcess, stream: "stdout" | "stderr"): void {
        let buffered = "";
        child[stream]?.setEncoding("utf8");
        child[stream]?.on("data", (chunk: string) => {
            buffered += chunk;
            const lines = buffered.split("\n");
            buffered = lines.pop() ?? "";
            for (const line of lines) {
                if (stream === "stderr") {
                    this.stderrTail.push(line);
                    if (this.stderrTail.length > STDERR_TAIL_LINES)
                        this.stderrTail.shift();
                }
                this.options.onLog?.(stream, line);
            }
        });
    }

    private setState(state: EngineClientState): void {
        this.currentState = state;
        for (const listener of this.stateListeners)
            listener(state);
    }
}
