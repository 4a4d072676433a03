import net from "node:net";
import type {RpcEndpoint} from "./parseRpcEndpoint.js";

/** How long to wait for an rpc-server to accept a connection. */
export const RPC_CONNECT_TIMEOUT_MS = 3000;

/**
 * Resolves when `endpoint` accepts a TCP connection, rejects with a sentence the user can act on otherwise.
 * Needed before handing the endpoint to llama.cpp: ggml-rpc aborts the process when it cannot connect
 * (rpc_dispatcher::start, "Failed to connect to …").
 */
export function probeRpcServer(endpoint: RpcEndpoint, timeoutMs = RPC_CONNECT_TIMEOUT_MS): Promise<void> {
    return new Promise((resolve, reject) => {
        const socket = net.connect({host: endpoint.host, port: endpoint.port});
        const fail = (why: string): void => {
            socket.destroy();
            reject(Object.assign(
                new Error(`no rpc-server answers at ${endpoint.text} (${why}): start one there with \`tensorwise rpc-server --port ${endpoint.port}\` or check the address`),
                {code: "rpc-unreachable"}
            ));
        };
        socket.setTimeout(timeoutMs, () => fail(`no answer within ${timeoutMs} ms`));
        socket.once("error", (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
        socket.once("connect", () => {
            socket.end();
            socket.destroy();
            resolve();
        });
    });
}
