/**
 * The engine child process: owns llama.cpp, so a native crash takes down only this process. Speaks
 * {@link EngineMessage} with its parent (Electron main or the web-mode host) over the IPC channel.
 *
 * Env: TENSORWISE_GPU (auto|cpu|cuda|vulkan, default auto), TENSORWISE_THREADS.
 */
import type {EngineGpu} from "../native/getEngineLlama.js";
import {EngineService} from "./EngineService.js";
import type {EngineEvents, EngineMessage, EngineRequestName, EngineRequests} from "./engineProtocol.js";

type Handler<Name extends EngineRequestName> = (arg: EngineRequests[Name][0]) => Promise<EngineRequests[Name][1]> | EngineRequests[Name][1];

function send(message: EngineMessage): void {
    process.send?.(message);
}

function emit<Name extends keyof EngineEvents>(name: Name, payload: EngineEvents[Name]): void {
    send({kind: "event", name, payload});
}

function errorCode(error: unknown): string {
    if (error != null && typeof error === "object" && "code" in error && typeof error.code === "string")
        return error.code;
    if (error instanceof Error && error.name !== "Error")
        return error.name;
    return "engine-error";
}

async function main(): Promise<void> {
    if (process.send == null) {
        console.error("engineMain must be started as a child process with an IPC channel");
        process.exit(2);
    }
    const service = await EngineService.create({
        gpu: (process.env.TENSORWISE_GPU as EngineGpu | undefined) ?? "auto",
        maxThreads: process.env.TENSORWISE_THREADS != null ? Number(process.env.TENSORWISE_THREADS) : undefined,
        onProgress: (progress) => emit("progress", progress)
    });

    const handlers: {[Name in EngineRequestName]: Handler<Name>} = {
        describe: () => service.describe(),
        inspect: ({path}) => service.inspect(path),
        autoOffload: (arg) => service.autoOffload(arg),
        load: (arg) => service.load(arg),
        unload: () => service.unload(),
        current: () => service.current(),
        chat: (arg) => service.chat(arg, (text, elapsedMs, tokens) => emit("delta", {streamId: arg.streamId, text, elapsedMs, tokens})),
        stop: ({streamId}) => service.stop(streamId),
        bench: (arg) => service.bench(arg, (progress) => emit("benchProgress", progress)),
        benchStop: ({benchId}) => service.benchStop(benchId)
    };

    process.on("message", (raw: unknown) => {
        const message = raw as EngineMessage;
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
                    error: {code: errorCode(error), message: error instanceof Error ? error.message : String(error)}
                })
            );
    });
    process.on("disconnect", () => {
        void service.dispose().finally(() => process.exit(0));
    });
    send({kind: "ready"});
}

main().catch((error: unknown) => {
    console.error("tensorwise engine failed to start:", error);
    process.exit(1);
});
