import net from "node:net";
import type {RpcEndpoint} from "./parseRpcEndpoint.js";
import {
    helloRequest, readHelloReply, RPC_CMD_DEVICE_COUNT, RPC_HELLO_REPLY_BYTES, RPC_REPLY_HEADER_BYTES, RPC_REQUEST_HEADER_BYTES,
    type RpcVersion
} from "./rpcProtocol.js";

/**
 * How long the probe waits for the connection and the hello reply together. An rpc-server answers a hello in well
 * under a millisecond on a LAN; 3 s leaves room for a slow link and keeps an engine start that skips a silent port short.
 */
export const RPC_PROBE_TIMEOUT_MS = 3000;

/** The error a failed probe rejects with: `code` `"rpc-unreachable"`, the message one sentence naming the endpoint. */
export type RpcUnreachableError = Error & {code: "rpc-unreachable"};

/** The whole reply to RPC_CMD_DEVICE_COUNT: its size, then rpc_msg_device_count_rsp (a uint32). */
const DEVICE_COUNT_REPLY_BYTES = RPC_REPLY_HEADER_BYTES + 4;

/**
 * Resolves with the server's protocol version when `endpoint` answers a real RPC hello (rpcProtocol.ts) with a version
 * this build's client accepts, and then the request a client sends first (RPC_CMD_DEVICE_COUNT), within `timeoutMs`
 * from the connect. The request matters behind tensorwise's front (RpcFront.ts): it answers hellos itself, and only
 * the worker answers a request, once no other client holds it. Rejects with a sentence the user can act on
 * otherwise: nothing listens, the port stays silent (not an rpc-server, or one busy with another client: llama.cpp's
 * rpc-server serves one at a time), something else answers (an HTTP server), or the version differs.
 * Needed before handing the endpoint to llama.cpp: ggml-rpc aborts the process when it cannot connect or the hello
 * fails (rpc_dispatcher::start), and waits forever on a port that accepts and stays silent.
 */
export function probeRpcServer(endpoint: RpcEndpoint, timeoutMs = RPC_PROBE_TIMEOUT_MS): Promise<RpcVersion> {
    return new Promise((resolve, reject) => {
        // IPv4, as ggml-rpc connects (socket_t::connect: AF_INET, gethostbyname): a name must resolve to what llama.cpp will reach
        const socket = net.connect({host: endpoint.host, port: endpoint.port, family: 4});
        let connected = false;
        let reply = Buffer.alloc(0);
        let version: RpcVersion | null = null;
        const fail = (why: string): void => {
            clearTimeout(timer);
            socket.destroy();
            reject(Object.assign(new Error(why), {code: "rpc-unreachable" as const}));
        };
        const timer = setTimeout(() => fail(version != null
            ? `${endpoint.text} answered the RPC hello but not a request within ${timeoutMs} ms: the rpc-server is busy serving another client (it serves one at a time)`
            : connected
            ? `${endpoint.text} accepted the connection but sent no RPC hello reply within ${timeoutMs} ms: it is not an rpc-server, or one busy serving another client (rpc-server serves one at a time)`
            : `no rpc-server answers at ${endpoint.text} (no connection within ${timeoutMs} ms): check the address and that nothing blocks the port`), timeoutMs);
        socket.once("error", (error: NodeJS.ErrnoException) => fail(
            `no rpc-server answers at ${endpoint.text} (${error.code ?? error.message}): start one there with \`tensorwise rpc-server --port ${endpoint.port}\` or check the address`));
        socket.once("connect", () => {
            connected = true;
            socket.write(helloRequest());
        });
        socket.on("data", (chunk: Buffer) => {
            reply = Buffer.concat([reply, chunk]);
            if (version != null) {
                if (reply.length < DEVICE_COUNT_REPLY_BYTES)
                    return;
                clearTimeout(timer);
                socket.destroy();
                if (reply.readBigUInt64LE(0) === BigInt(DEVICE_COUNT_REPLY_BYTES - RPC_REPLY_HEADER_BYTES))
                    resolve(version);
                else
                    fail(`${endpoint.text} answered the RPC hello but not the device count request as an rpc-server does`);
                return;
            }
            if (reply.length < RPC_REPLY_HEADER_BYTES)
                return;
            const read = readHelloReply(reply);
            if (read.version == null && reply.length < RPC_REPLY_HEADER_BYTES + RPC_HELLO_REPLY_BYTES && read.problem === "a hello reply cut short")
                return;
            if (read.problem != null) {
                fail(read.version == null
                    ? `${endpoint.text} is not an rpc-server: it answered a hello with ${read.problem}`
                    : `the rpc-server at ${endpoint.text} speaks ${read.problem}: run the rpc-server of this tensorwise's llama.cpp there`);
                return;
            }
            version = read.version;
            reply = reply.subarray(RPC_REPLY_HEADER_BYTES + RPC_HELLO_REPLY_BYTES);
            const request = Buffer.alloc(RPC_REQUEST_HEADER_BYTES);
            request.writeUInt8(RPC_CMD_DEVICE_COUNT, 0);
            socket.write(request);
        });
        socket.once("end", () => fail(
            `${endpoint.text} closed the connection without an RPC hello reply: it is not an rpc-server of this protocol, or it refused this client`));
    });
}
