// `tensorwise rpc-server` under a hostile local client: the stock rpc-server (tools/rpc/rpc-server.cpp, built by
// native/buildRpc.mjs) behind its front (RpcFront.ts), real sockets on 127.0.0.1. Needs the CPU RPC build; skipped,
// with the reason, without it.
import fs from "node:fs";
import net from "node:net";
import {afterEach, describe, expect, it} from "vitest";
import {requiredOrSkip} from "../testing/requiredOrSkip.js";
import type {RpcEndpoint} from "./parseRpcEndpoint.js";
import {RPC_HELLO_TIMEOUT_MS} from "./RpcFront.js";
import {rpcBuildPaths} from "./rpcBuildPaths.js";
import {helloRequest, RPC_HELLO_REPLY_BYTES} from "./rpcProtocol.js";
import {startRpcServer, type RunningRpcServer} from "./startRpcServer.js";

const RPC_CMD_DEVICE_COUNT = 15;
const server = rpcBuildPaths("cpu").server;
const skip = requiredOrSkip("the rpc-server front tests", fs.existsSync(server) ? null : `${server} is not built (npm run native)`);

const started: RunningRpcServer[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
    sockets.splice(0).forEach((socket) => socket.destroy());
    await Promise.all(started.splice(0).map((running) => running.stop()));
});

async function start(front?: Parameters<typeof startRpcServer>[0] extends infer O ? O extends {front?: infer F} ? F : never : never): Promise<RunningRpcServer> {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const running = await startRpcServer({port, device: "CPU", threads: 1, front});
    started.push(running);
    return running;
}

function connect(endpoint: RpcEndpoint): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
        const socket = net.connect({host: endpoint.host, port: endpoint.port}, () => resolve(socket));
        socket.on("error", reject);
        sockets.push(socket);
    });
}

/** Reads exactly `bytes` bytes, or rejects when the socket ends first or `timeoutMs` passes. */
function read(socket: net.Socket, bytes: number, timeoutMs: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
        let got = Buffer.alloc(0);
        const done = (error: Error | null): void => {
            clearTimeout(timer);
            socket.off("data", onData);
            socket.off("close", onClose);
            if (error != null)
                reject(error);
            else
                resolve(got.subarray(0, bytes));
        };
        const onData = (chunk: Buffer): void => {
            got = Buffer.concat([got, chunk]);
            if (got.length >= bytes)
                done(null);
        };
        const onClose = (): void => done(new Error(`closed after ${got.length} of ${bytes} bytes`));
        const timer = setTimeout(() => done(new Error(`no ${bytes}-byte answer within ${timeoutMs} ms`)), timeoutMs);
        socket.on("data", onData);
        socket.on("close", onClose);
    });
}

/** A real client's first steps, as ggml-rpc takes them: the hello, then RPC_CMD_DEVICE_COUNT. Returns the device count. */
async function realClient(endpoint: RpcEndpoint, timeoutMs: number, keep = false): Promise<number> {
    const socket = await connect(endpoint);
    socket.write(helloRequest());
    const hello = await read(socket, 8 + RPC_HELLO_REPLY_BYTES, timeoutMs);
    expect(hello[8]).toBe(7);
    const request = Buffer.alloc(9);
    request.writeUInt8(RPC_CMD_DEVICE_COUNT, 0);
    socket.write(request);
    const reply = await read(socket, 12, timeoutMs);
    expect(reply.readBigUInt64LE(0)).toBe(4n);
    if (!keep)
        socket.destroy();
    return reply.readUInt32LE(8);
}

async function alive(running: RunningRpcServer): Promise<boolean> {
    return await Promise.race([running.exited.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 300))]);
}

describe.skipIf(skip != null)("tensorwise rpc-server: one client at a time, none can hold it", () => {
    it("serves a real client at once beside a silent connection (the stock worker waited on it forever)", async () => {
        const running = await start();
        await connect(running.endpoint);
        const started = performance.now();
        expect(await realClient(running.endpoint, RPC_HELLO_TIMEOUT_MS + 3000)).toBeGreaterThanOrEqual(1);
        expect(performance.now() - started).toBeLessThan(1500);
    }, 20_000);

    it("serves a real client after one that declared a 1 GiB request and stalled, and refuses a larger one at once", async () => {
        const logs: string[] = [];
        const running = await start({helloTimeoutMs: 1000, messageIdleTimeoutMs: 1500, onLog: (line) => logs.push(line)});
        const staller = await connect(running.endpoint);
        staller.write(helloRequest());
        await read(staller, 8 + RPC_HELLO_REPLY_BYTES, 2000);
        const setTensor = Buffer.alloc(9 + 16);
        setTensor.writeUInt8(6, 0);
        setTensor.writeBigUInt64LE(2n ** 30n, 1);
        staller.write(setTensor);
        let before = performance.now();
        expect(await realClient(running.endpoint, 4000)).toBeGreaterThanOrEqual(1);
        expect(performance.now() - before).toBeLessThan(3500);
        expect(logs.join("\n")).toMatch(/closed, it stopped for 1500 ms in the middle of a request/);

        const greedy = await connect(running.endpoint);
        greedy.write(helloRequest());
        await read(greedy, 8 + RPC_HELLO_REPLY_BYTES, 2000);
        setTensor.writeBigUInt64LE(2n ** 30n + 1n, 1);
        greedy.write(setTensor);
        before = performance.now();
        expect(await realClient(running.endpoint, 4000)).toBeGreaterThanOrEqual(1);
        expect(performance.now() - before).toBeLessThan(1000);
        expect(logs.join("\n")).toMatch(/closed, it declared a request of 1024\.0 MiB, above this rpc-server's limit of 1024 MiB/);
        expect(await alive(running)).toBe(true);
    }, 30_000);

    it("refuses what is not a hello, and a client that sends a second hello or an unknown command", async () => {
        const logs: string[] = [];
        const running = await start({helloTimeoutMs: 1000, messageIdleTimeoutMs: 1500, onLog: (line) => logs.push(line)});
        const http = await connect(running.endpoint);
        http.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        await expect(read(http, 1, 2000)).rejects.toThrow(/closed after 0/);
        for (const command of [14, 18, 19, 255]) {
            const client = await connect(running.endpoint);
            client.write(helloRequest());
            await read(client, 8 + RPC_HELLO_REPLY_BYTES, 2000);
            const request = Buffer.alloc(9);
            request.writeUInt8(command, 0);
            client.write(request);
            await expect(read(client, 1, 2000)).rejects.toThrow(/closed after 0/);
        }
        expect(logs.join("\n")).toMatch(/its first request was command 71, not the RPC hello/);
        expect(logs.join("\n")).toMatch(/it sent a second hello/);
        expect(logs.join("\n")).toMatch(/it sent command 255, which rpc-server does not know/);
        expect(await realClient(running.endpoint, 2000)).toBeGreaterThanOrEqual(1);
    }, 30_000);

    it("keeps the worker alive when a queued client leaves, or one reaches the worker directly and leaves before its reply", async () => {
        const running = await start({helloTimeoutMs: 1000, messageIdleTimeoutMs: 1500});
        // the worker ignores SIGPIPE (bit 13 of SigIgn): a reply to a peer that is gone is an EPIPE, not its death
        const sigIgn = /SigIgn:\s*([0-9a-f]+)/.exec(fs.readFileSync(`/proc/${running.child.pid}/status`, "utf8"))![1]!;
        expect(BigInt(`0x${sigIgn}`) & (1n << 12n)).not.toBe(0n);

        const holder = await connect(running.endpoint);
        holder.write(helloRequest());
        await read(holder, 8 + RPC_HELLO_REPLY_BYTES, 2000);
        const leaver = await connect(running.endpoint);
        leaver.end(helloRequest());
        await new Promise((resolve) => setTimeout(resolve, 200));
        holder.destroy();
        expect(await realClient(running.endpoint, 3000)).toBeGreaterThanOrEqual(1);

        for (let i = 0; i < 5; i++) {
            const direct = await connect(running.workerEndpoint);
            await new Promise((resolve) => direct.write(helloRequest(), resolve));
            direct.destroy();
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(await alive(running)).toBe(true);
        expect(await realClient(running.endpoint, 3000)).toBeGreaterThanOrEqual(1);
    }, 30_000);
});
