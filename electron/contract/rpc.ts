/** Remote rpc-servers (llama.cpp's `rpc-server`) whose devices join this machine's, as the settings list them. */

/** The one-sentence caveat shown wherever rpc-servers are added (ggml-rpc's protocol has no authentication). */
export const RPC_SECURITY_NOTE = "The RPC protocol has no authentication or encryption: add only rpc-servers on a network you trust.";

/** One rpc-server the user added. */
export type RpcServerEntry = {
    /** `"host:port"` as parseRpcEndpoint (electron/engine/rpc/parseRpcEndpoint.ts) writes it. */
    endpoint: string;
    /** Whether it accepted a connection when last probed; the engine uses only reachable ones. */
    reachable: boolean;
    /** Why it is not reachable, in one sentence; `null` when it is. */
    problem: string | null;
};

/** The rpc-servers the user added, in the order the engine registers them. */
export type RpcServersState = {servers: RpcServerEntry[]};
