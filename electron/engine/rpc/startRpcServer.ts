import {spawn, type ChildProcess} from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import {parseRpcEndpoint, type RpcEndpoint} from "./parseRpcEndpoint.js";
import {probeRpcServer} from "./probeRpcServer.js";
import {rpcBuildPaths} from "./rpcBuildPaths.js";
import {RpcFront, type RpcFrontOptions} from "./RpcFront.js";
import type {RpcVersion} from "./rpcProtocol.js";

/** How long a starting rpc-server may take to accept connections. */
export const RPC_START_TIMEOUT_MS = 30_000;
/** Interval between connection attempts while it starts. */
const READY_POLL_MS = 100;
/** Lines of the server's stderr kept for an error message. */
const STDERR_LINES = 8;
/** Where the stock worker listens: loopback only, behind the front (RpcFront.ts). */
const WORKER_HOST = "127.0.0.1";

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
    /** The front's deadlines and limits (RpcFront.ts); each defaults to the constant named there. */
    front?: Pick<RpcFrontOptions, "helloTimeoutMs" | "messageIdleTimeoutMs" | "maxMessageBytes" | "maxWaitingClients" | "onLog">;
};

export type RunningRpcServer = {
    /** The public address (the front's). */
    endpoint: RpcEndpoint;
    /** The stock rpc-server's private loopback address; clients use {@link endpoint}. */
    workerEndpoint: RpcEndpoint;
    /** The stock rpc-server process (SIGPIPE ignored, so a client that leaves cannot kill it). */
    child: ChildProcess;
    front: RpcFront;
    /** Resolves with the worker's exit code, or the signal that ended it, when it ends; the front closes then. */
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

/** A loopback port nobody listens on now (the kernel's choice). */
async function freeLoopbackPort(): Promise<number> {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, WORKER_HOST, resolve);
    });
    const {port} = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
}

/**
 * Starts llama.cpp's rpc-server (built by native/buildRpc.mjs) on a private loopback port behind an {@link RpcFront}
 * on the public address, and resolves once both accept connections. Rejects with a sentence the user can act on when
 * the binary is missing, the public port is taken, or the server ends before it listens (no such device).
 */
export async function startRpcServer(options: RpcServerOptions = {}): Promise<RunningRpcServer> {
    const host = options.host ?? "127.0.0.1";
    const port = options.port ?? 50052;
    const endpoint = parseRpcEndpoint(host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);
    const {server} = rpcBuildPaths(buildFor(options.device));
    if (!fs.existsSync(server))
        throw new Error(`rpc-server is not built (${server} is missing): run \`npm run native\` to build it`);
    const workerEndpoint = parseRpcEndpoint(`${WORKER_HOST}:${await freeLoopbackPort()}`);
    const args = ["--host", workerEndpoint.host, "--port", String(workerEndpoint.port)];
    if (options.device != null)
        args.push("--device", options.device);
    if (options.threads != null)
        args.push("--threads", String(options.threads));
    // rpc-server writes replies with send() and no MSG_NOSIGNAL (ggml-rpc/transport.cpp), so a peer that is gone kills
    // it with SIGPIPE. Node resets every signal to its default in a spawned child; a disposition set to "ignore" by
    // the shell survives exec, so the stock binary runs with SIGPIPE ignored and sees EPIPE instead.
    const child = spawn("/bin/sh", ["-c", "trap '' PIPE; exec \"$0\" \"$@\"", server, ...args], {
        stdio: options.stdio === "inherit" ? "inherit" : ["ignore", "pipe", "pipe"],
        env: {...process.env, ...options.env}
    });
    const stderrTail: string[] = [];
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        stderrTail.push(...chunk.split("\n").filter((line) => line.trim() !== ""));
        stderrTail.splice(0, Math.max(0, stderrTail.length - STDERR_LINES));
    });
    child.stdout?.resume();
    let front: RpcFront | null = null;
    let exitedWith: number | NodeJS.Signals | null | undefined;
    const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
        const done = (result: number | NodeJS.Signals | null): void => {
            exitedWith = result;
            void front?.close();
            resolve(result);
        };
        child.once("exit", (code, signal) => done(signal ?? code));
        child.once("error", () => done(null));
    });
    const stop = async (): Promise<void> => {
        await front?.close();
        if (exitedWith !== undefined)
            return;
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
        await exited;
        clearTimeout(timer);
    };

    const deadline = Date.now() + RPC_START_TIMEOUT_MS;
    let workerVersion: RpcVersion;
    for (;;) {
        if (exitedWith !== undefined)
            throw new Error(`rpc-server ended before it listened on ${workerEndpoint.text} (${String(exitedWith)})` +
                (stderrTail.length > 0 ? `: ${stderrTail.join(" / ")}` : ""));
        try {
            workerVersion = await probeRpcServer(workerEndpoint, 500);
            break;
        } catch {
            if (Date.now() > deadline) {
                await stop();
                throw new Error(`rpc-server did not listen on ${workerEndpoint.text} within ${RPC_START_TIMEOUT_MS / 1000} s`);
            }
            await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
        }
    }
    try {
        front = await RpcFront.listen({...options.front, host: endpoint.host, port: endpoint.port, worker: workerEndpoint, workerVersion});
    } catch (error) {
        await stop();
        const code = (error as NodeJS.ErrnoException).code;
        throw new Error(code === "EADDRINUSE"
            ? `something already listens on ${endpoint.text}: stop it or choose another --port`
            : `cannot listen on ${endpoint.text} (${code ?? (error as Error).message}): check --host and --port`);
    }
    if (exitedWith !== undefined)
        await front.close();
    return {endpoint, workerEndpoint, child, front, exited, stop};
}
