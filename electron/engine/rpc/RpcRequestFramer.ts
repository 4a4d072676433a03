import {
    readRequestHeader, RPC_CMD_COUNT, RPC_CMD_HELLO, RPC_CMD_NONE, RPC_HELLO_REQUEST_BYTES, RPC_REQUEST_HEADER_BYTES
} from "./rpcProtocol.js";

/**
 * Follows a client's request stream to llama.cpp's rpc-server (framing in rpcProtocol.ts) without keeping the bytes:
 * where each request starts and ends, and whether the client sends what rpc-server would allocate for or choke on.
 * Hand-written because it is a 9-byte header and a counter; no library parses this protocol.
 */
export class RpcRequestFramer {
    private readonly header = Buffer.alloc(RPC_REQUEST_HEADER_BYTES);
    private headerFill = 0;
    private remaining = 0n;
    private requests = 0;
    private readonly maxBytes: bigint;

    /** `maxMessageBytes`: the largest payload a request may declare (see RPC_MAX_MESSAGE_BYTES in RpcFront.ts). */
    constructor(readonly maxMessageBytes: number) {
        this.maxBytes = BigInt(maxMessageBytes);
    }

    /** Whether a request is partly received (its header or payload still incomplete). */
    get inRequest(): boolean {
        return this.headerFill > 0 || this.remaining > 0n;
    }

    /** Requests received whole, the hello included. */
    get requestsDone(): number {
        return this.requests - (this.remaining > 0n ? 1 : 0);
    }

    /** Whether the first request, the hello, is complete. */
    get helloDone(): boolean {
        return this.requestsDone >= 1;
    }

    /**
     * Consumes the next bytes the client sent. Returns `null` while they follow the protocol, else why not, in words
     * (the connection should then end: rpc-server itself ends it on each of these, after allocating for the size).
     */
    push(chunk: Buffer): string | null {
        let offset = 0;
        while (offset < chunk.length) {
            if (this.remaining > 0n) {
                const left = chunk.length - offset;
                const take = this.remaining >= BigInt(left) ? left : Number(this.remaining);
                offset += take;
                this.remaining -= BigInt(take);
                continue;
            }
            const take = Math.min(RPC_REQUEST_HEADER_BYTES - this.headerFill, chunk.length - offset);
            chunk.copy(this.header, this.headerFill, offset, offset + take);
            this.headerFill += take;
            offset += take;
            if (this.headerFill < RPC_REQUEST_HEADER_BYTES)
                continue;
            this.headerFill = 0;
            const header = readRequestHeader(this.header);
            const problem = this.check(header);
            if (problem != null)
                return problem;
            this.requests++;
            this.remaining = header.size;
        }
        return null;
    }

    private check({command, size}: {command: number; size: bigint}): string | null {
        // source: rpc_serve_client (ggml-rpc.cpp) — the hello first, with exactly sizeof(rpc_msg_hello_req)
        if (this.requests === 0) {
            if (command !== RPC_CMD_HELLO)
                return `its first request was command ${command}, not the RPC hello (${RPC_CMD_HELLO})`;
            if (size !== BigInt(RPC_HELLO_REQUEST_BYTES))
                return `its hello declared ${size} bytes instead of ${RPC_HELLO_REQUEST_BYTES} (another RPC protocol version)`;
            return null;
        }
        if (command >= RPC_CMD_COUNT || command === RPC_CMD_NONE)
            return `it sent command ${command}, which rpc-server does not know`;
        if (command === RPC_CMD_HELLO)
            return "it sent a second hello";
        if (size > this.maxBytes)
            return `it declared a request of ${formatBytes(size)}, above this rpc-server's limit of ${formatBytes(this.maxBytes)} (--max-message-mib)`;
        return null;
    }
}

function formatBytes(bytes: bigint): string {
    const MiB = 2n ** 20n;
    return bytes >= MiB ? `${(Number(bytes) / 2 ** 20).toFixed(bytes % MiB === 0n ? 0 : 1)} MiB` : `${bytes} bytes`;
}
