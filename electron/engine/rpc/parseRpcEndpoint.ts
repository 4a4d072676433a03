/** An rpc-server's address as llama.cpp's RPC backend takes it (`"host:port"`). */
export type RpcEndpoint = {host: string; port: number; /** `"host:port"`, IPv6 hosts in brackets. */ text: string};

/** Most rpc-servers one process connects to (GGML_RPC_MAX_SERVERS in ggml/include/ggml-rpc.h). */
export const MAX_RPC_SERVERS = 16;

/** Longest host name accepted (DNS's limit). */
const MAX_HOST_LENGTH = 253;

/**
 * Parses `"host:port"` (`"[::1]:50052"` for IPv6). Throws an error a user can act on for anything else, before
 * llama.cpp sees it: ggml-rpc aborts the whole process on an endpoint it cannot parse (rpc_dispatcher::start).
 */
export function parseRpcEndpoint(text: string): RpcEndpoint {
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/.exec(text.trim());
    const host = match?.[1] ?? match?.[2];
    const port = Number(match?.[3]);
    if (match == null || host == null || host.length > MAX_HOST_LENGTH || !(port >= 1 && port <= 65535))
        throw new Error(`"${text.slice(0, 80)}" is not an rpc-server address: write it as host:port, e.g. 127.0.0.1:50052`);
    return {host, port, text: match[1] != null ? `[${host}]:${port}` : `${host}:${port}`};
}
