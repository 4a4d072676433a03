import {spawn} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {parseRpcEndpoint, type RpcEndpoint} from "../parseRpcEndpoint.js";
import {RPC_START_TIMEOUT_MS} from "../startRpcServer.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
/** The CLI the tests run (bin/tensorwise.mjs needs `dist/`). */
export const TENSORWISE_CLI = path.join(root, "bin", "tensorwise.mjs");
const CLI_ENTRY = path.join(root, "dist", "electron", "cli", "main.js");

/** Why {@link startRpcServerProcess} cannot run here, or `null`. */
export function rpcServerProcessMissing(): string | null {
    return fs.existsSync(CLI_ENTRY) ? null : `${CLI_ENTRY} is not built (npm run build)`;
}

export type RpcServerProcess = {
    endpoint: RpcEndpoint;
    /** Sends `signal` to the CLI and the stock worker it runs (their own process group). */
    kill(signal: NodeJS.Signals): void;
    /** SIGTERM (the CLI stops its worker) and waits for the exit. */
    stop(): Promise<void>;
};

/**
 * `tensorwise rpc-server` on 127.0.0.1:`port` in its own process, for tests whose engine runs in the test's process.
 * ggml-rpc's client waits for each reply in a blocking socket call on the caller's thread, so a front (RpcFront.ts)
 * started in the same process by `startRpcServer` could never relay it: the test would hang with the event loop
 * blocked. This is also how users run it: a separate command.
 */
export async function startRpcServerProcess(options: {port: number; device?: string; threads?: number}): Promise<RpcServerProcess> {
    const args = [TENSORWISE_CLI, "rpc-server", "--host", "127.0.0.1", "--port", String(options.port)];
    if (options.device != null)
        args.push("--device", options.device);
    if (options.threads != null)
        args.push("--threads", String(options.threads));
    const child = spawn(process.execPath, args, {stdio: ["ignore", "pipe", "pipe"], detached: true});
    let output = "";
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const listening = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`tensorwise rpc-server did not listen within ${RPC_START_TIMEOUT_MS} ms:\n${output}`)), RPC_START_TIMEOUT_MS);
        const onData = (chunk: Buffer): void => {
            output += chunk.toString();
            if (/rpc-server listening on /.test(output)) {
                clearTimeout(timer);
                resolve();
            }
        };
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        void exited.then(() => {
            clearTimeout(timer);
            reject(new Error(`tensorwise rpc-server ended before it listened:\n${output}`));
        });
    });
    await listening;
    // what the server says after it listens — the front's reason for closing a client above all — goes to the test's
    // output, so a client that aborts on a closed connection (ggml-rpc's "Remote RPC server crashed") shows why
    const forward = (chunk: Buffer): void => {
        for (const line of chunk.toString().split("\n").filter((text) => text.trim() !== "" && !/^(Accepted client connection|Client connection closed)$/.test(text.trim())))
            process.stderr.write(`[rpc-server :${options.port}] ${line}\n`);
    };
    child.stdout.on("data", forward);
    child.stderr.on("data", forward);
    const kill = (signal: NodeJS.Signals): void => {
        try {
            process.kill(-child.pid!, signal);
        } catch { /* already gone */ }
    };
    return {
        endpoint: parseRpcEndpoint(`127.0.0.1:${options.port}`),
        kill,
        async stop() {
            if (child.exitCode == null && child.signalCode == null)
                kill("SIGTERM");
            await exited;
        }
    };
}
