import os from "node:os";
import {RPC_MAX_MESSAGE_BYTES} from "../../engine/rpc/RpcFront.js";
import {isLoopbackHost, startRpcServer} from "../../engine/rpc/startRpcServer.js";
import type {CliIo} from "../CliIo.js";

/**
 * `tensorwise rpc-server [--host H] [--port N] [--device D] [--threads N] [--max-message-mib N]`: runs llama.cpp's
 * rpc-server behind tensorwise's front (RpcFront.ts) so another tensorwise (or llama.cpp) can place tensors on this
 * machine's devices with `--rpc host:port`. Runs until stopped (Ctrl-C, SIGTERM: exit code 0). Returns the worker's
 * exit code; a worker ended by a signal nobody here sent (a crash, the OOM killer, `kill -9`) is a failure:
 * 128 + the signal's number, as a shell reports it, with a sentence naming the signal.
 */
export async function rpcServerCommand(io: CliIo, options: {host: string; port: number; device?: string; threads?: number; maxMessageBytes?: number}): Promise<number> {
    if (!isLoopbackHost(options.host))
        io.err(`warning: the RPC protocol has no authentication or encryption: anyone who can reach ${options.host}:${options.port} ` +
            "can run computations on this machine and read what it holds. Bind to 127.0.0.1 (the default) unless this network is yours alone.");
    const {maxMessageBytes = RPC_MAX_MESSAGE_BYTES, ...rest} = options;
    const server = await startRpcServer({...rest, stdio: "inherit", front: {maxMessageBytes, onLog: (line) => io.err(line)}});
    io.out(`rpc-server listening on ${server.endpoint.text} (llama.cpp's rpc-server, pid ${server.child.pid}, behind it on ` +
        `${server.workerEndpoint.text}): use it with --rpc ${server.endpoint.text}`);
    let stopping: NodeJS.Signals | null = null;
    const forward = (signal: NodeJS.Signals): void => {
        stopping = signal;
        server.child.kill(signal);
    };
    process.once("SIGINT", forward);
    process.once("SIGTERM", forward);
    try {
        const result = await server.exited;
        if (typeof result === "number")
            return result;
        if (result == null) {
            io.err("rpc-server could not be run: check that it is built (`npm run native`)");
            return 1;
        }
        if (result === stopping)
            return 0;
        io.err(`rpc-server ended on signal ${result}, which tensorwise did not send (a crash, the out-of-memory killer, or another process): ` +
            "clients using it lost their state; start it again");
        return 128 + (os.constants.signals[result] ?? 0);
    } finally {
        process.off("SIGINT", forward);
        process.off("SIGTERM", forward);
        await server.stop();
    }
}
