import fs from "node:fs";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {NativeDevice} from "../native/tensorwiseBindings.js";
import {parseRpcEndpoint} from "./parseRpcEndpoint.js";
import {probeRpcServer} from "./probeRpcServer.js";
import {rpcBuildPaths} from "./rpcBuildPaths.js";

/** The devices one rpc-server added to this process. */
export type RpcServerDevices = {endpoint: string; devices: NativeDevice[]};

/**
 * Connects this process's llama.cpp to rpc-servers (`"host:port"` each) and registers their devices, as llama.cpp's
 * `--rpc` does (common/arg.cpp add_rpc_devices). Their devices then appear in `tensorwiseGetDevices()` (named
 * `RPC0`, `RPC1`, … in the order added) with buffer types `RPC<n>[host:port]` that tensor overrides can name.
 * Every address is parsed and probed first, so a typo or a stopped server is an error, not an aborted process.
 * Must run before a model is loaded: llama.cpp picks its devices when it loads a model.
 */
export async function addRpcServers(engine: EngineLlama, endpoints: readonly string[]): Promise<RpcServerDevices[]> {
    const parsed = endpoints.map(parseRpcEndpoint);
    const {bindings, llama} = engine;
    if (parsed.length === 0)
        return [];
    const gpu = llama.gpu === false ? "cpu" : llama.gpu === "vulkan" || llama.gpu === "cuda" ? llama.gpu : null;
    const library = gpu == null ? "" : rpcBuildPaths(gpu).library;
    if (bindings.tensorwiseAddRpcServer == null || bindings.tensorwiseRpcAvailable == null)
        throw new Error("this native build cannot add rpc-servers: run `npm run native` to rebuild it");
    if (!bindings.tensorwiseRpcAvailable(fs.existsSync(library) ? library : undefined))
        throw new Error("llama.cpp's RPC backend (libggml-rpc.so) is not installed: run `npm run native` to build it");
    for (const endpoint of parsed)
        await probeRpcServer(endpoint);
    const result: RpcServerDevices[] = [];
    for (const endpoint of parsed) {
        const names = bindings.tensorwiseAddRpcServer(endpoint.text);
        const devices = bindings.tensorwiseGetDevices().filter((device) => names.includes(device.name));
        result.push({endpoint: endpoint.text, devices});
    }
    return result;
}
