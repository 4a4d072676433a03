import fs from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";

/** Where native/buildRpc.mjs installs the RPC backend and rpc-server for one llama.cpp build. */
export type RpcBuildPaths = {
    /** The local build's folder (addon, prebuilt libraries, RPC files). */
    releaseDir: string;
    /** `libggml-rpc.so`, llama.cpp's RPC backend as a loadable backend. */
    library: string;
    /** llama.cpp's `rpc-server` (tools/rpc/rpc-server.cpp). */
    server: string;
};

/**
 * The RPC files of the node-llama-cpp local build for `gpu` (`"cpu"`, `"vulkan"`, `"cuda"`), as native/install.mjs
 * names its folders (`linux-x64`, `linux-x64-vulkan`, …). They may not exist: check before use.
 */
export function rpcBuildPaths(gpu: "cpu" | "vulkan" | "cuda"): RpcBuildPaths {
    // the package's own folder: the entry point's nearest package.json named node-llama-cpp (its exports hide package.json)
    let nlcDir = path.dirname(createRequire(import.meta.url).resolve("node-llama-cpp"));
    while (path.dirname(nlcDir) !== nlcDir && !isNodeLlamaCppRoot(nlcDir))
        nlcDir = path.dirname(nlcDir);
    const folder = `${process.platform}-${process.arch}${gpu === "cpu" ? "" : "-" + gpu}`;
    const releaseDir = path.join(nlcDir, "llama", "localBuilds", folder, "Release");
    return {releaseDir, library: path.join(releaseDir, "libggml-rpc.so"), server: path.join(releaseDir, "rpc-server")};
}

function isNodeLlamaCppRoot(dir: string): boolean {
    try {
        return (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as {name?: string}).name === "node-llama-cpp";
    } catch {
        return false;
    }
}
