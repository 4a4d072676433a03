import net from "node:net";

/** An rpc-server's address as llama.cpp's RPC backend takes it (`"host:port"`). */
export type RpcEndpoint = {host: string; port: number; /** `"host:port"`, as llama.cpp is given it. */ text: string};

/** Most rpc-servers one process connects to (GGML_RPC_MAX_SERVERS in ggml/include/ggml-rpc.h). */
export const MAX_RPC_SERVERS = 16;

/** Longest host name accepted (DNS's limit). */
const MAX_HOST_LENGTH = 253;
/** A DNS host name (RFC 1123 labels: letters, digits, inner hyphens, 1–63 characters each). */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

const EXPECTED = "write it as host:port, e.g. 127.0.0.1:50052";

/**
 * Parses `"host:port"`, host an IPv4 address or a host name. Throws an error a user can act on for anything else
 * (any value that is not such a string), before llama.cpp sees it: ggml-rpc aborts the whole process on an endpoint
 * it cannot parse (rpc_dispatcher::start: parse_endpoint splits at the first ':'), and its client connects over IPv4
 * only (ggml-rpc/transport.cpp, socket_t::connect: AF_INET and gethostbyname), so an IPv6 address is refused too.
 */
export function parseRpcEndpoint(text: unknown): RpcEndpoint {
    if (typeof text !== "string")
        throw new Error(`an rpc-server address must be text: ${EXPECTED}`);
    const trimmed = text.trim();
    const ipv6 = /^\[[^\]]*\](?::|$)/.test(trimmed) || (/^[0-9A-Fa-f:.]+$/.test(trimmed) && (trimmed.match(/:/g)?.length ?? 0) > 1);
    if (ipv6)
        throw new Error(`"${trimmed.slice(0, 80)}" is an IPv6 address, and llama.cpp's RPC client connects over IPv4 only: ` +
            "use the machine's IPv4 address or a host name that resolves to one");
    const match = /^([^:]+):([0-9]{1,5})$/.exec(trimmed);
    const host = match?.[1] ?? "";
    const port = Number(match?.[2]);
    const looksNumeric = /^[0-9.]+$/.test(host);
    const hostOk = host.length <= MAX_HOST_LENGTH && (looksNumeric ? net.isIPv4(host) : HOST_NAME.test(host));
    if (match == null || !hostOk || !(port >= 1 && port <= 65535))
        throw new Error(`"${trimmed.slice(0, 80)}" is not an rpc-server address: ${EXPECTED}`);
    return {host, port, text: `${host}:${port}`};
}
