// The probe against what a configured "rpc-server" address may really be: nothing, a plain HTTP server, a port that
// accepts and stays silent, a server of another protocol version, a front that answers the hello while its worker is
// busy. Real sockets on 127.0.0.1; no rpc-server needed.
import http from "node:http";
import net from "node:net";
import {afterEach, describe, expect, it} from "vitest";
import {parseRpcEndpoint} from "./parseRpcEndpoint.js";
import {probeRpcServer} from "./probeRpcServer.js";
import {helloRequest, RPC_CMD_DEVICE_COUNT, RPC_HELLO_REPLY_BYTES} from "./rpcProtocol.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
});

async function listen(server: net.Server): Promise<string> {
    const sockets = new Set<net.Socket>();
    server.on("connection", (socket: net.Socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => {
        server.close(resolve);
        sockets.forEach((socket) => socket.destroy());
    }));
    return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

/**
 * A server that answers the hello with `reply`, after checking it received a hello, then (when `devices` is given)
 * RPC_CMD_DEVICE_COUNT with that count, as rpc-server does.
 */
function replying(reply: Buffer, devices: number | null = 1): net.Server {
    return net.createServer((socket) => {
        socket.once("data", (request) => {
            if (!request.equals(helloRequest()))
                return;
            socket.write(reply);
            socket.once("data", (next) => {
                if (devices == null || next[0] !== RPC_CMD_DEVICE_COUNT)
                    return;
                const answer = Buffer.alloc(12);
                answer.writeBigUInt64LE(4n, 0);
                answer.writeUInt32LE(devices, 8);
                socket.write(answer);
            });
        });
    });
}

function helloReply(major: number, minor: number, patch: number): Buffer {
    const reply = Buffer.alloc(8 + RPC_HELLO_REPLY_BYTES);
    reply.writeBigUInt64LE(BigInt(RPC_HELLO_REPLY_BYTES), 0);
    reply.set([major, minor, patch], 8);
    return reply;
}

async function timed<T>(run: () => Promise<T>): Promise<{result: T | Error; ms: number}> {
    const started = performance.now();
    const result = await run().catch((error: unknown) => error as Error);
    return {result, ms: performance.now() - started};
}

describe("probeRpcServer: a real RPC hello, bounded in time", () => {
    it("accepts a server that answers the hello with this build's protocol version", async () => {
        const endpoint = await listen(replying(helloReply(7, 0, 0)));
        await expect(probeRpcServer(parseRpcEndpoint(endpoint), 2000)).resolves.toEqual({major: 7, minor: 0, patch: 0});
    });

    it("reports a plain HTTP server as not an rpc-server, quoting what it answered", async () => {
        const server = http.createServer((_request, response) => response.end("hello"));
        const endpoint = await listen(server);
        const {result, ms} = await timed(() => probeRpcServer(parseRpcEndpoint(endpoint), 2000));
        expect(result).toMatchObject({code: "rpc-unreachable"});
        expect((result as Error).message).toMatch(new RegExp(`^${endpoint} is not an rpc-server: it answered a hello with a reply that is not an RPC hello \\(it starts with "HTTP/1\\.1 400`));
        expect(ms).toBeLessThan(2000);
    });

    it("gives up on a port that accepts and stays silent within its timeout, saying so", async () => {
        const endpoint = await listen(net.createServer(() => {}));
        const {result, ms} = await timed(() => probeRpcServer(parseRpcEndpoint(endpoint), 700));
        expect((result as Error).message).toBe(`${endpoint} accepted the connection but sent no RPC hello reply within 700 ms: ` +
            "it is not an rpc-server, or one busy serving another client (rpc-server serves one at a time)");
        expect(ms).toBeGreaterThanOrEqual(650);
        expect(ms).toBeLessThan(1500);
    });

    it("reports a server that answers the hello but not the request after it as busy (tensorwise's front, its worker held)", async () => {
        const endpoint = await listen(replying(helloReply(7, 0, 0), null));
        await expect(probeRpcServer(parseRpcEndpoint(endpoint), 700)).rejects.toThrow(
            `${endpoint} answered the RPC hello but not a request within 700 ms: the rpc-server is busy serving another client (it serves one at a time)`);
    });

    it("refuses a server of another protocol version by its version", async () => {
        for (const [major, minor] of [[6, 0], [7, 1], [8, 0]] as const) {
            const endpoint = await listen(replying(helloReply(major, minor, 3)));
            await expect(probeRpcServer(parseRpcEndpoint(endpoint), 2000)).rejects.toThrow(
                `the rpc-server at ${endpoint} speaks RPC protocol v${major}.${minor}.3, where this build speaks v7.0`);
        }
    });

    it("refuses replies of the right length with the wrong size field, and a server that hangs up", async () => {
        const wrongSize = helloReply(7, 0, 0);
        wrongSize.writeBigUInt64LE(27n, 0);
        const endpoint = await listen(replying(wrongSize));
        await expect(probeRpcServer(parseRpcEndpoint(endpoint), 2000)).rejects.toThrow(/is not an rpc-server: it answered a hello with a reply that is not an RPC hello/);
        const hangsUp = await listen(net.createServer((socket) => socket.end()));
        await expect(probeRpcServer(parseRpcEndpoint(hangsUp), 2000)).rejects.toThrow(`${hangsUp} closed the connection without an RPC hello reply`);
    });

    it("names a port where nothing listens", async () => {
        const server = net.createServer();
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        const endpoint = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
        await new Promise((resolve) => server.close(resolve));
        await expect(probeRpcServer(parseRpcEndpoint(endpoint), 2000)).rejects.toThrow(`no rpc-server answers at ${endpoint} (ECONNREFUSED)`);
    });
});
