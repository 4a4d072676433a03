import {getLlama, LlamaLogLevel, NoBinaryFoundError, type Llama} from "node-llama-cpp";
import {addRpcServers} from "../rpc/addRpcServers.js";
import {getTensorwiseBindings, type TensorwiseBindings} from "./tensorwiseBindings.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";

/** Which llama.cpp build to load. `"auto"` lets node-llama-cpp pick the best GPU build that works here. */
export type EngineGpu = "auto" | "cpu" | "cuda" | "vulkan" | "metal";

export type EngineLlamaOptions = {
    /** Defaults to `"auto"`. */
    gpu?: EngineGpu;
    /** CPU threads for llama.cpp. Defaults to the number of cores (node-llama-cpp's default oversubscribes small machines). */
    maxThreads?: number;
    /** Receives every llama.cpp log line at `logLevel` or above. */
    onLog?: (level: LlamaLogLevel, message: string) => void;
    /** Defaults to `LlamaLogLevel.warn`; `debug` is needed to see llama.cpp's "buffer type overridden" lines. */
    logLevel?: LlamaLogLevel;
    /**
     * rpc-servers (`"host:port"`) whose devices join this process's llama.cpp before any model loads
     * (electron/engine/rpc/addRpcServers.ts). Defaults to none.
     */
    rpcServers?: readonly string[];
    /**
     * Given, an rpc-server that fails its probe is left out of this engine and reported here (the app's engine must
     * start without it); absent, it fails the start with its reason (the CLI's `--rpc` names it explicitly).
     */
    onRpcUnreachable?: (endpoint: string, problem: string) => void;
};

export type EngineLlama = {
    llama: Llama;
    bindings: TensorwiseBindings;
};

/**
 * Loads llama.cpp through node-llama-cpp, only ever from the tensorwise-patched local build (never downloads or
 * compiles llama.cpp itself), and checks the extension is present.
 */
export async function getEngineLlama(options: EngineLlamaOptions = {}): Promise<EngineLlama> {
    const {gpu = "auto", maxThreads, onLog, logLevel = LlamaLogLevel.warn} = options;
    const {availableParallelism} = await import("node:os");
    const llama = await getLlama({
        gpu: gpu === "cpu" ? false : gpu,
        build: "never",
        skipDownload: true,
        progressLogs: false,
        maxThreads: maxThreads ?? availableParallelism(),
        logLevel,
        logger: onLog == null
            ? undefined
            : (level, message) => onLog(level, message)
    }).catch((error: unknown) => {
        // node-llama-cpp's NoBinaryFoundError names a class, not the problem: say what the user can do instead
        if (error instanceof NoBinaryFoundError)
            throw new TensorwiseError("no-backend", gpu === "auto" || gpu === "cpu"
                ? "No usable llama.cpp build was found: run `npm install` again to build tensorwise's native addon."
                : `The ${gpu} build of llama.cpp cannot run on this machine (no ${gpu} device or driver found): use --gpu auto or --gpu cpu.`);
        throw error;
    });
    try {
        const engine = {llama, bindings: getTensorwiseBindings(llama)};
        if (options.rpcServers != null && options.rpcServers.length > 0)
            await addRpcServers(engine, options.rpcServers, options.onRpcUnreachable);
        return engine;
    } catch (error) {
        await llama.dispose();
        throw error;
    }
}

export {LlamaLogLevel};
