import {isLoopbackHost, startRpcServer} from "../../engine/rpc/startRpcServer.js";
import type {CliIo} from "../CliIo.js";

/**
 * `tensorwise rpc-server [--host H] [--port N] [--device D] [--threads N]`: runs llama.cpp's rpc-server so another
 * tensorwise (or llama.cpp) can place tensors on this machine's devices with `--rpc host:port`. Runs until stopped
 * (Ctrl-C); returns the server's exit code.
 */
export async function rpcServerCommand(io: CliIo, options: {host: string; port: number; device?: string; threads?: number}): Promise<number> {
    if (!isLoopbackHost(options.host))
        io.err(`warning: the RPC protocol has no authentication or encryption: anyone who can reach ${options.host}:${options.port} ` +
            "can run computations on this machine and read what it holds. Bind to 127.0.0.1 (the default) unless this network is yours alone.");
    const server = await startRpcServer({...options, stdio: "inherit"});
    io.out(`rpc-server listening on ${server.endpoint.text}: use it with --rpc ${server.endpoint.text}`);
    const forward = (signal: NodeJS.Signals): void => {
        server.child.kill(signal);
    };
    process.once("SIGINT", forward);
    process.once("SIGTERM", forward);
    try {
        const result = await server.exited;
        return typeof result === "number" ? result : 0;
    } finally {
        process.off("SIGINT", forward);
        process.off("SIGTERM", forward);
    }
}
