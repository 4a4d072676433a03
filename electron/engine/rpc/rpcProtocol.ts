/**
 * The framing of llama.cpp's RPC protocol, as far as a probe and a front that admits clients need it. Everything here
 * is read from the source the RPC backend and rpc-server are built from (build/native/llama.cpp):
 * - ggml/include/ggml-rpc.h: RPC_PROTO_MAJOR_VERSION 7, RPC_PROTO_MINOR_VERSION 0.
 * - ggml/src/ggml-rpc/ggml-rpc.cpp: `enum rpc_cmd` (RPC_CMD_HELLO = 14, RPC_CMD_NONE = 18, RPC_CMD_COUNT = 19);
 *   send_rpc_cmd: a request is | command (1 byte) | size (uint64, little-endian on the x86-64/arm64 hosts it runs on) |
 *   payload |; send_msg: a reply is | size (uint64) | payload |; rpc_serve_client: the first request must be HELLO with
 *   a payload of sizeof(rpc_msg_hello_req), and a command ≥ RPC_CMD_COUNT ends the connection.
 * - ggml/src/ggml-rpc/transport.h: RPC_CONN_CAPS_SIZE 24, so rpc_msg_hello_req is 24 bytes (conn_caps) and
 *   rpc_msg_hello_rsp 28 (major, minor, patch, padding, conn_caps).
 * rpcProtocol.test.ts checks these numbers against that source when it is present.
 */

export const RPC_PROTO_MAJOR_VERSION = 7;
export const RPC_PROTO_MINOR_VERSION = 0;

/** `rpc_cmd` values the front and the probe look at. */
export const RPC_CMD_HELLO = 14;
/** The request a client sends first after its hello (ggml_backend_rpc_get_device_count); its reply is a uint32. */
export const RPC_CMD_DEVICE_COUNT = 15;
/** The client's internal "no command" (a synchronisation marker): rpc-server closes the connection on it. */
export const RPC_CMD_NONE = 18;
/** One past the last command: rpc-server closes the connection on anything at or above it. */
export const RPC_CMD_COUNT = 19;

/** Bytes before a request's payload: the command byte and the uint64 size. */
export const RPC_REQUEST_HEADER_BYTES = 9;
/** Bytes before a reply's payload: the uint64 size. */
export const RPC_REPLY_HEADER_BYTES = 8;
/** sizeof(rpc_msg_hello_req): RPC_CONN_CAPS_SIZE bytes of transport capabilities. */
export const RPC_HELLO_REQUEST_BYTES = 24;
/** sizeof(rpc_msg_hello_rsp): major, minor, patch, padding, then RPC_CONN_CAPS_SIZE bytes. */
export const RPC_HELLO_REPLY_BYTES = 28;

/**
 * A HELLO request advertising no transport capabilities (all-zero conn_caps: plain TCP, as a client built without
 * RDMA sends it).
 */
export function helloRequest(): Buffer {
    const request = Buffer.alloc(RPC_REQUEST_HEADER_BYTES + RPC_HELLO_REQUEST_BYTES);
    request.writeUInt8(RPC_CMD_HELLO, 0);
    request.writeBigUInt64LE(BigInt(RPC_HELLO_REQUEST_BYTES), 1);
    return request;
}

/**
 * A hello reply (8-byte size + rpc_msg_hello_rsp) announcing `version` and no transport capabilities (all-zero
 * conn_caps: the peer stays on plain TCP, as rpc_serve_client answers when it was built without RDMA).
 */
export function helloReply(version: RpcVersion): Buffer {
    const reply = Buffer.alloc(RPC_REPLY_HEADER_BYTES + RPC_HELLO_REPLY_BYTES);
    reply.writeBigUInt64LE(BigInt(RPC_HELLO_REPLY_BYTES), 0);
    reply.set([version.major, version.minor, version.patch], RPC_REPLY_HEADER_BYTES);
    return reply;
}

/** A request's header: its command byte and declared payload size (a bigint: a client may declare up to 2^64 − 1). */
export type RpcRequestHeader = {command: number; size: bigint};

/** Reads the 9-byte request header at the start of `bytes`. */
export function readRequestHeader(bytes: Buffer): RpcRequestHeader {
    return {command: bytes.readUInt8(0), size: bytes.readBigUInt64LE(1)};
}

/** The protocol version in a hello reply. */
export type RpcVersion = {major: number; minor: number; patch: number};

/**
 * Checks a complete hello reply (8-byte size + payload). Returns the version, or a reason in words when the bytes are
 * not an rpc-server's hello reply or its version is one this build's client refuses (negotiate_hello: the major must
 * match and the minor must not be newer).
 */
export function readHelloReply(reply: Buffer): {version: RpcVersion; problem: null} | {version: RpcVersion | null; problem: string} {
    if (reply.length < RPC_REPLY_HEADER_BYTES)
        return {version: null, problem: `a reply of ${reply.length} bytes, shorter than any RPC reply`};
    const size = reply.readBigUInt64LE(0);
    if (size !== BigInt(RPC_HELLO_REPLY_BYTES))
        return {version: null, problem: `a reply that is not an RPC hello (it starts with ${describeBytes(reply)})`};
    if (reply.length < RPC_REPLY_HEADER_BYTES + RPC_HELLO_REPLY_BYTES)
        return {version: null, problem: "a hello reply cut short"};
    const version = {major: reply[8]!, minor: reply[9]!, patch: reply[10]!};
    const compatible = version.major === RPC_PROTO_MAJOR_VERSION && version.minor <= RPC_PROTO_MINOR_VERSION;
    if (compatible)
        return {version, problem: null};
    return {version, problem: `RPC protocol v${version.major}.${version.minor}.${version.patch}, where this build speaks ` +
        `v${RPC_PROTO_MAJOR_VERSION}.${RPC_PROTO_MINOR_VERSION}`};
}

/** The first bytes of a foreign reply, printable ones as text (`"HTTP/1.1 400"`), for an error message. */
function describeBytes(bytes: Buffer): string {
    const head = bytes.subarray(0, 12);
    const printable = head.every((byte) => byte >= 0x20 && byte < 0x7f);
    return printable ? `"${head.toString("latin1")}"` : `0x${head.toString("hex")}`;
}
