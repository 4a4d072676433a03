/**
 * The engine child process: owns llama.cpp, so a native crash takes down only this process. Speaks
 * {@link EngineMessage} with its parent: over Node's IPC channel when forked by `child_process.fork` (web mode, CLI,
 * tests), over `process.parentPort` when Electron main started it with `utilityProcess.fork`.
 *
 * Signals: SIGINT is ignored — a Ctrl-C in the terminal reaches the whole process group, and the host, not the
 * terminal, decides when the engine stops (it sends `shutdown`, so the server's KV files and llama.cpp are cleaned
 * up). SIGTERM, `shutdown` and a lost parent (the IPC channel disconnects: the host was killed) all dispose and exit,
 * within {@link EXIT_DEADLINE_MS} even if disposing hangs.
 *
 * Env: TENSORWISE_GPU (auto|cpu|cuda|vulkan, default auto), TENSORWISE_THREADS, TENSORWISE_RPC (rpc-servers as
 * `host:port,host:port`, registered before any model loads).
 */
import {eventEnvelope} from "../contract/envelope.js";
import {toContractError} from "../contract/TensorwiseError.js";
import type {EngineGpu} from "../engine/native/getEngineLlama.js";
import {EngineService} from "./EngineService.js";
import {ENGINE_RPC_ENV, type EngineEvents, type EngineMessage, type EngineRequestName, type EngineRequests} from "../contract/engineProtocol.js";

/** How long disposing may take before the process exits anyway. */
const EXIT_DEADLINE_MS = 5_000;

type Handler<Name extends EngineRequestName> = (arg: EngineRequests[Name][0]) => Promise<EngineRequests[Name][1]> | EngineRequests[Name][1];

/** Electron's `process.parentPort` in a utility process (typed here: the engine imports nothing from `electron`). */
type ParentPort = {
    postMessage(message: unknown): void;
    on(event: "message", listener: (event: {data: unknown}) => void): unknown;
};
const parentPort = (process as {parentPort?: ParentPort | null}).parentPort ?? null;

function send(message: EngineMessage): void {
    if (parentPort != null)
        parentPort.postMessage(message);
    else
        process.send?.(message);
}

function onParentMessage(listener: (message: unknown) => void): void {
    if (parentPort != null)
        parentPort.on("message", (event) => listener(event.data));
    else
        process.on("message", listener);
}

function emit<Name extends keyof EngineEvents>(name: Name, payload: EngineEvents[Name]): void {
    send(eventEnvelope(name, payload));
}

/** Where the engine's end begins: `dispose` once the service exists (until then there is nothing to clean up). */
let dispose: (() => Promise<void>) | null = null;
let exiting = false;

/** Disposes (bounded by {@link EXIT_DEADLINE_MS}) and exits; once only. */
function exit(): void {
    if (exiting)
        return;
    exiting = true;
    const deadline = setTimeout(() => process.exit(0), EXIT_DEADLINE_MS);
    deadline.unref();
    void (dispose?.() ?? Promise.resolve()).catch(() => {}).finally(() => process.exit(0));
}

async function main(): Promise<void> {
    if (process.send == null && parentPort == null) {
        console.error("engineMain must be started as a child process with an IPC channel, or as an Electron utility process");
        process.exit(2);
    }
    process.on("SIGINT", () => {});
    process.on("SIGTERM", exit);
    // the parent went away (Node IPC only; Electron ends a utility process together with its parent)
    process.on("disconnect", exit);
    const service = await EngineService.create({
        gpu: (process.env.TENSORWISE_GPU as EngineGpu | undefined) ?? "auto",
        maxThreads: process.env.TENSORWISE_THREADS != null ? Number(process.env.TENSORWISE_THREADS) : undefined,
        rpcServers: (process.env[ENGINE_RPC_ENV] ?? "").split(",").filter((entry) => entry !== ""),
        // the host probed them just before; one that stopped answering since is left out, not a failed start
        onRpcUnreachable: (endpoint, problem) => console.error(`rpc-server ${endpoint} left out of this engine: ${problem}`),
        onProgress: (progress) => emit("progress", progress)
    });
    dispose = () => service.dispose();
    // the parent may have gone while llama.cpp was starting (an exit then already ran without a service to dispose)
    if (parentPort == null && process.connected !== true) {
        exit();
        return;
    }

    const handlers: {[Name in EngineRequestName]: Handler<Name>} = {
        describe: () => service.describe(),
        inspect: ({path}) => service.inspect(path),
        autoOffload: (arg) => service.autoOffload(arg),
        cancelTask: ({taskId}) => service.cancelTask(taskId),
        hubQuants: (arg) => service.hubQuants(arg),
        load: (arg) => service.load(arg),
        unload: () => service.unload(),
        current: () => service.current(),
        chat: (arg) => service.chat(arg, (text, elapsedMs, tokens) => emit("delta", {streamId: arg.streamId, text, elapsedMs, tokens}),
            (progress) => emit("promptProgress", {streamId: arg.streamId, ...progress})),
        stop: ({streamId}) => service.stop(streamId),
        bench: (arg) => service.bench(arg, (progress) => emit("benchProgress", progress)),
        benchStop: ({benchId}) => service.benchStop(benchId),
        serveStart: (arg) => service.serveStart(arg, (served) => emit("served", served), (step, fraction) => emit("serveStartup", {step, fraction})),
        serveStop: () => service.serveStop(),
        serveKeys: (arg) => service.serveKeys(arg.apiKeys)
    };

    onParentMessage((raw: unknown) => {
        const message = raw as EngineMessage;
        if (message?.kind === "shutdown")
            exit();
        if (message?.kind !== "request")
            return;
        const handler = handlers[message.name] as Handler<EngineRequestName> | undefined;
        if (handler == null) {
            send({kind: "response", id: message.id, ok: false, error: {code: "unknown-request", message: `unknown request "${message.name}"`}});
            return;
        }
        Promise.resolve()
            .then(() => handler(message.arg as never))
            .then(
                (result) => send({kind: "response", id: message.id, ok: true, result: result ?? null}),
                (error: unknown) => send({
                    kind: "response", id: message.id, ok: false,
                    error: toContractError(error, "engine-error")
                })
            );
    });
    send({kind: "ready"});
}

main().catch((error: unknown) => {
    console.error("tensorwise engine failed to start:", error);
    process.exit(1);
});
