import {spawn, type ChildProcess} from "node:child_process";
import fs from "node:fs";
import {parseRpcEndpoint, type RpcEndpoint} from "./parseRpcEndpoint.js";
import {probeRpcServer} from "./probeRpcServer.js";
import {rpcBuildPaths} from "./rpcBuildPaths.js";

/** How long a starting rpc-server may take to accept connections. */
export const RPC_START_TIMEOUT_MS = 30_000;
/** Interval between connection attempts while it starts. */
const READY_POLL_MS = 100;
/** Lines of the server's stderr kept for an error message. */
const STDERR_LINES = 8;

export type RpcServerOptions = {
    /** Defaults to `"127.0.0.1"`: the protocol has no authentication, so any other address lets that network run code on it. */
    host?: string;
    /** Defaults to llama.cpp's 50052. */
    port?: number;
    /** Device(s) to serve, as rpc-server's `--device` takes them (`"CPU"`, `"Vulkan0"`). Defaults to rpc-server's choice. */
    device?: string;
    /** CPU threads of the server. Defaults to rpc-server's (half the cores). */
    threads?: number;
    /** `"inherit"` shows the server's own output (CLI); `"pipe"` keeps it (tests, the app). Defaults to `"pipe"`. */
    stdio?: "inherit" | "pipe";
    /** Extra environment, e.g. `GGML_VK_VISIBLE_DEVICES`. */
    env?: NodeJS.ProcessEnv;
};

export type RunningRpcServer = {
    endpoint: RpcEndpoint;
    child: ChildProcess;
    /** Resolves with the exit code (or signal) when the server process ends. */
    exited: Promise<number | NodeJS.Signals | null>;
    /** Stops the server (SIGTERM, then SIGKILL after 2 s) and waits for it. */
    stop(): Promise<void>;
};

/** Whether the host is a loopback address, the only place an unauthenticated rpc-server is safe to listen. */
export function isLoopbackHost(host: string): boolean {
    return host === "127.0.0.1" || host === "::1" || host === "localhost";
}

/** The build whose backends an rpc-server for `device` needs: Vulkan/CUDA devices live in their own builds. */
function buildFor(device: string | undefined): "cpu" | "vulkan" | "cuda" {
    if (device != null && /^Vulkan/i.test(device))
        return "vulkan";
    if (device != null && /^CUDA/i.test(device))
        return "cuda";
    return "cpu";
}

/**
 * Starts llama.cpp's rpc-server (built by native/buildRpc.mjs) and resolves once it accepts connections. Rejects with
 * a sentence the user can act on when the binary is missing or the server ends before it listens (port taken, no
 * such device).
 */
export async function startRpcServer(options: RpcServerOptions = {}): Promise<RunningRpcServer> {
    const host = options.host ?? "127.0.0.1";
    const port = options.port ?? 50052;
    const endpoint = parseRpcEndpoint(host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);
    const {server} = rpcBuildPaths(buildFor(options.device));
    if (!fs.existsSync(server))
        throw new Error(`rpc-server is not built (${server} is missing): run \`npm run native\` to build it`);
    const taken = await probeRpcServer(endpoint, 500).then(() => true, () => false);
    if (taken)
        throw new Error(`something already listens on ${endpoint.text}: stop it or choose another --port`);
    const args = ["--host", endpoint.host, "--port", String(port)];
    if (options.device != null)
        args.push("--device", options.device);
    if (options.threads != null)
        args.push("--threads", String(options.threads));
    const child = spawn(server, args, {
        stdio: options.stdio === "inherit" ? "inherit" : ["ignore", "pipe", "pipe"],
        env: {...process.env, ...options.env}
    });
    const stderrTail: string[] = [];
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        stderrTail.push(...chunk.split("\n").filter((line) => line.trim() !== ""));
        stderrTail.splice(0, Math.max(0, stderrTail.length - STDERR_LINES));
    });
    child.stdout?.resume();
    let exitedWith: number | NodeJS.Signals | null | undefined;
    const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
        child.once("exit", (code, signal) => {
            exitedWith = signal ?? code;
            resolve(exitedWith);
        });
        child.once("error", () => {
            exitedWith = null;
            resolve(null);
        });
    });
    const stop = async (): Promise<void> => {
        if (exitedWith !== undefined)
            return;
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
        await exited;
        clearTimeout(timer);
    };

    const deadline = Date.now() + RPC_START_TIMEOUT_MS;
    for (;;) {
        if (exitedWith !== undefined)
            throw new Error(`rpc-server ended before it listened on ${endpoint.text} (${String(exitedWith)})` +
                (stderrTail.length > 0 ? `: ${stderrTail.join(" / ")}` : ""));
        try {
            await probeRpcServer(endpoint, 500);
            return {endpoint, child, exited, stop};
        } catch {
            if (Date.now() > deadline) {
                await stop();
                throw new Error(`rpc-server did not listen on ${endpoint.text} within ${RPC_START_TIMEOUT_MS / 1000} s`);
            }
            await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
        }
    }
}
