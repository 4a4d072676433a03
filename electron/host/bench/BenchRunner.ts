/**
 * The host's side of a benchmark: one at a time, run by the engine process into `<dataDir>/bench/<id>/`, its progress
 * forwarded to every client, ending in `bench.done` or `bench.error`. The engine is taken for the whole run (chat
 * refused, model unloaded) and given back afterwards, when the host reloads the model the user had.
 */
import path from "node:path";
import type {EventName, Events} from "../../contract/ipc.js";
import type {EngineBenchProgress, EngineBenchRequest} from "../../contract/engineProtocol.js";
import type {EngineClient} from "../engineChild/EngineClient.js";
import {toContractError, TensorwiseError} from "../../contract/TensorwiseError.js";
import type {BenchStore} from "./BenchStore.js";

export type BenchRunnerHooks = {
    engine: EngineClient;
    store: BenchStore;
    broadcast<Name extends EventName>(name: Name, payload: Events[Name]): void;
    /** Takes the engine for the benchmark (stops replies, marks it busy); the returned function gives it back. */
    acquire(task: string): Promise<() => Promise<void>>;
};

export class BenchRunner {
    private running: {benchId: string} | null = null;

    constructor(private readonly hooks: BenchRunnerHooks) {}

    /** The id of the benchmark running now, or `null`. */
    get runningId(): string | null {
        return this.running?.benchId ?? null;
    }

    /** Starts `request` (output folder chosen here) and returns once the engine has been taken for it. */
    async start(request: Omit<EngineBenchRequest, "outDir">): Promise<void> {
        const {engine, store, broadcast} = this.hooks;
        if (this.running != null)
            throw new TensorwiseError("bench-running", "a benchmark is already running: stop it first");
        const outDir = store.folder(request.benchId);
        if ((await store.list(null)).some((summary) => summary.id === request.benchId))
            throw new TensorwiseError("bad-request", `benchmark ${request.benchId} exists already`);
        const release = await this.hooks.acquire("benchmark");
        const {benchId} = request;
        this.running = {benchId};
        void engine.request("bench", {...request, outDir: path.resolve(outDir)})
            .then(async () => {
                this.running = null;
                broadcast("bench.done", {benchId, summary: (await store.get(benchId, null)).summary});
            })
            .catch((error: unknown) => {
                this.running = null;
                const {code, message} = toContractError(error);
                broadcast("bench.error", {benchId, code, error: message});
            })
            .finally(() => {
                this.running = null;
                void release();
            });
    }

    async stop(benchId: string): Promise<void> {
        if (this.running?.benchId === benchId)
            await this.hooks.engine.request("benchStop", {benchId});
    }

    /** An engine `benchProgress` event, passed on as the contract's `bench.progress`. */
    onProgress({run, ...progress}: EngineBenchProgress): void {
        this.hooks.broadcast("bench.progress", {...progress, ...(run != null ? {lastResult: run} : {})});
    }
}
