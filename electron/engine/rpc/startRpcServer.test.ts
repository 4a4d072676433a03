// `tensorwise rpc-server` under a hostile local client: the stock rpc-server (tools/rpc/rpc-server.cpp, built by
// native/buildRpc.mjs) behind its front (RpcFront.ts), real sockets on 127.0.0.1. Needs the CPU RPC build; skipped,
// with the reason, without it.
// No test bounds the time a client waits: each sets every deadline that could also explain what it checks to 60 s,
// beyond the test's own timeout, so only the behaviour under test can get the client served or closed in time.
import fs from "node:fs";
import net from "node:net";
import {afterEach, describe, expect, it} from "vitest";
import {requiredOrSkip} from "../testing/requiredOrSkip.js";
import type {RpcEndpoint} from "./parseRpcEndpoint.js";
import {RPC_MAX_WAITING_CLIENTS} from "./RpcFront.js";
import {rpcBuildPaths} from "./rpcBuildPaths.js";
import {helloRequest, RPC_CMD_DEVICE_COUNT, RPC_HELLO_REPLY_BYTES} from "./rpcProtocol.js";
import {startRpcServer, type RunningRpcServer} from "./startRpcServer.js";

/** A deadline no test waits for. */
const NEVER_MS = 60_000;
/** How long a test waits for an answer that must come; well inside each test's timeout. */
const ANSWER_MS = 15_000;
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
async function realClient(endpoint: RpcEndpoint, timeoutMs = ANSWER_MS): Promise<number> {
    const {socket, devices} = await servedClient(endpoint, timeoutMs);
    socket.destroy();
    return devices;
}

/** {@link realClient}, the connection kept open: it holds the worker, as an engine with a model on it does. */
async function servedClient(endpoint: RpcEndpoint, timeoutMs = ANSWER_MS): Promise<{socket: net.Socket; devices: number}> {
    const socket = await connect(endpoint);
    socket.write(helloRequest());
    const hello = await read(socket, 8 + RPC_HELLO_REPLY_BYTES, timeoutMs);
    expect(hello[8]).toBe(7);
    socket.write(deviceCountRequest());
    const reply = await read(socket, 12, timeoutMs);
    expect(reply.readBigUInt64LE(0)).toBe(4n);
    return {socket, devices: reply.readUInt32LE(8)};
}

function deviceCountRequest(): Buffer {
    const request = Buffer.alloc(9);
    request.writeUInt8(RPC_CMD_DEVICE_COUNT, 0);
    return request;
}

async function alive(running: RunningRpcServer): Promise<boolean> {
    return await Promise.race([running.exited.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 300))]);
}

describe.skipIf(skip != null)("tensorwise rpc-server: one client at a time, none can hold it", () => {
    it("serves a real client beside a silent connection (the stock worker waited on it forever)", async () => {
        // the silent connection is never closed in this test: only its not holding the worker lets the client in
        const running = await start({helloTimeoutMs: NEVER_MS, messageIdleTimeoutMs: NEVER_MS});
        await connect(running.endpoint);
        expect(await realClient(running.endpoint)).toBeGreaterThanOrEqual(1);
    }, 30_000);

    it("serves a real client after a served one declared a 1 GiB request and stalled: closed by the idle deadline", async () => {
        const logs: string[] = [];
        const running = await start({helloTimeoutMs: NEVER_MS, messageIdleTimeoutMs: 1500, onLog: (line) => logs.push(line)});
        const {socket: staller} = await servedClient(running.endpoint);
        const setTensor = Buffer.alloc(9 + 16);
        setTensor.writeUInt8(6, 0);
        setTensor.writeBigUInt64LE(2n ** 30n, 1);
        staller.write(setTensor);
        const stallerClosed = read(staller, 1, ANSWER_MS).then(() => "answered", (error: Error) => error.message);
        // the worker answers once it has freed the 1 GiB it allocated for the stalled request (seconds on a loaded machine)
        expect(await realClient(running.endpoint, 3 * ANSWER_MS)).toBeGreaterThanOrEqual(1);
        expect(await stallerClosed).toMatch(/closed after 0/);
        expect(logs.join("\n")).toMatch(/closed, it stopped for 1500 ms in the middle of a request/);
        expect(await alive(running)).toBe(true);
    }, 60_000);

    it("refuses a request above the size limit before the worker allocates it, so the next client is served", async () => {
        // no deadline can close the greedy client in this test: only the refusal frees the worker
        const logs: string[] = [];
        const running = await start({helloTimeoutMs: NEVER_MS, messageIdleTimeoutMs: NEVER_MS, onLog: (line) => logs.push(line)});
        const {socket: greedy} = await servedClient(running.endpoint);
        const setTensor = Buffer.alloc(9 + 16);
        setTensor.writeUInt8(6, 0);
        setTensor.writeBigUInt64LE(2n ** 30n + 1n, 1);
        greedy.write(setTensor);
        expect(await realClient(running.endpoint)).toBeGreaterThanOrEqual(1);
        expect(logs.join("\n")).toMatch(/closed, it declared a request of 1024\.0 MiB, above this rpc-server's limit of 1024 MiB/);
        expect(await alive(running)).toBe(true);
    }, 30_000);

    it("serves a client that sends its hello and request promptly while idle clients hold every place in the queue", async () => {
        // the sweep's attack: clients that send a hello and wait, more than the queue holds. No deadline can close
        // them in this test: the real client is served only if idlers cannot keep it out of the queue and the worker.
        const logs: string[] = [];
        const running = await start({helloTimeoutMs: NEVER_MS, messageIdleTimeoutMs: NEVER_MS, onLog: (line) => logs.push(line)});
        const idlers: net.Socket[] = [];
        for (let i = 0; i < RPC_MAX_WAITING_CLIENTS + 1; i++) {
            const idler = await connect(running.endpoint);
            idler.on("error", () => {});
            idler.write(helloRequest());
            idlers.push(idler);
        }
        // the first idler's hello is answered (by the worker or the front) before the real client comes
        await read(idlers[0]!, 8 + RPC_HELLO_REPLY_BYTES, ANSWER_MS);
        expect(await realClient(running.endpoint)).toBeGreaterThanOrEqual(1);
        expect(logs.join("\n")).toMatch(/closed, a newer client took its place: all 8 places were taken and it had not yet sent its hello and first request/);
        // and again, with the idlers that are left still waiting
        expect(idlers.filter((idler) => !idler.destroyed && idler.readyState === "open").length).toBeGreaterThanOrEqual(RPC_MAX_WAITING_CLIENTS - 1);
        expect(await realClient(running.endpoint)).toBeGreaterThanOrEqual(1);
        expect(await alive(running)).toBe(true);
    }, 30_000);

    it("closes a client that sends a hello and no request within the hello deadline, before it reaches the worker", async () => {
        const logs: string[] = [];
        const running = await start({helloTimeoutMs: 1000, messageIdleTimeoutMs: NEVER_MS, onLog: (line) => logs.push(line)});
        const idler = await connect(running.endpoint);
        idler.write(helloRequest());
        await read(idler, 8 + RPC_HELLO_REPLY_BYTES, ANSWER_MS);
        await expect(read(idler, 1, ANSWER_MS)).rejects.toThrow(/closed after 0/);
        expect(logs.join("\n")).toMatch(/closed, it sent its hello but no request after it within 1000 ms of its connect/);
        expect(await realClient(running.endpoint)).toBeGreaterThanOrEqual(1);
    }, 30_000);

    it("refuses what is not a hello, and a client that sends a second hello or an unknown command", async () => {
        const logs: string[] = [];
        // no deadline can close a client in this test: each is closed by its refusal
        const running = await start({helloTimeoutMs: NEVER_MS, messageIdleTimeoutMs: NEVER_MS, onLog: (line) => logs.push(line)});
        const http = await connect(running.endpoint);
        http.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        await expect(read(http, 1, ANSWER_MS)).rejects.toThrow(/closed after 0/);
        for (const command of [14, 18, 19, 255]) {
            const client = await connect(running.endpoint);
            client.write(helloRequest());
            await read(client, 8 + RPC_HELLO_REPLY_BYTES, ANSWER_MS);
            const request = Buffer.alloc(9);
            request.writeUInt8(command, 0);
            client.write(request);
            await expect(read(client, 1, ANSWER_MS)).rejects.toThrow(/closed after 0/);
        }
        expect(logs.join("\n")).toMatch(/its first request was command 71, not the RPC hello/);
        expect(logs.join("\n")).toMatch(/it sent a second hello/);
        expect(logs.join("\n")).toMatch(/it sent command 255, which rpc-server does not know/);
        expect(await realClient(running.endpoint)).toBeGreaterThanOrEqual(1);
    }, 60_000);

    it("keeps the worker alive when a queued client leaves, or one reaches the worker directly and leaves before its reply", async () => {
        const running = await start({helloTimeoutMs: NEVER_MS, messageIdleTimeoutMs: NEVER_MS});
        // the worker ignores SIGPIPE (bit 13 of SigIgn): a reply to a peer that is gone is an EPIPE, not its death
        const sigIgn = /SigIgn:\s*([0-9a-f]+)/.exec(fs.readFileSync(`/proc/${running.child.pid}/status`, "utf8"))![1]!;
        expect(BigInt(`0x${sigIgn}`) & (1n << 12n)).not.toBe(0n);

        const {socket: holder} = await servedClient(running.endpoint);
        // a client in the queue (its hello answered by the front, its request in) that leaves before its turn
        const leaver = await connect(running.endpoint);
        leaver.write(helloRequest());
        await read(leaver, 8 + RPC_HELLO_REPLY_BYTES, ANSWER_MS);
        leaver.end(deviceCountRequest());
        await new Promise((resolve) => setTimeout(resolve, 200));
        holder.destroy();
        expect(await realClient(running.endpoint)).toBeGreaterThanOrEqual(1);

        for (let i = 0; i < 5; i++) {
            const direct = await connect(running.workerEndpoint);
            await new Promise((resolve) => direct.write(helloRequest(), resolve));
            direct.destroy();
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(await alive(running)).toBe(true);
        expect(await realClient(running.endpoint)).toBeGreaterThanOrEqual(1);
    }, 30_000);
});
