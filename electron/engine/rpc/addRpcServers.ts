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
 * Every address is parsed, and every server probed with a real RPC hello (probeRpcServer.ts) first: llama.cpp aborts
 * the process on a server it cannot reach and waits forever on one that stays silent. A server that fails the probe
 * rejects the call, naming it and why, or — given `onUnreachable` (an engine that must start without it) — is left
 * out and reported there. Must run before a model is loaded: llama.cpp picks its devices when it loads a model.
 */
export async function addRpcServers(engine: EngineLlama, endpoints: readonly string[],
    onUnreachable?: (endpoint: string, problem: string) => void): Promise<RpcServerDevices[]> {
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
    const probed = await Promise.all(parsed.map((endpoint) => probeRpcServer(endpoint).then(() => null, (error: Error) => error.message)));
    const failed = probed.findIndex((problem) => problem != null);
    if (failed >= 0 && onUnreachable == null)
        throw Object.assign(new Error(probed[failed]!), {code: "rpc-unreachable"});
    const result: RpcServerDevices[] = [];
    for (const [i, endpoint] of parsed.entries()) {
        if (probed[i] != null) {
            onUnreachable?.(endpoint.text, probed[i]);
            continue;
        }
        const names = bindings.tensorwiseAddRpcServer(endpoint.text);
        const devices = bindings.tensorwiseGetDevices().filter((device) => names.includes(device.name));
        result.push({endpoint: endpoint.text, devices});
    }
    return result;
}
