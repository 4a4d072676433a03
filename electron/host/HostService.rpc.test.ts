// Remote rpc-servers added in the settings, end to end through the host: a real rpc-server on 127.0.0.1 started here
// (llama.cpp's tools/rpc/rpc-server.cpp, killed after), the real engine child, the list kept in the data folder. Needs
// the engine (npm run build) and the RPC build (native/buildRpc.mjs); skipped, with the reason, without them.
import {existsSync} from "node:fs";
import {mkdtemp, readFile, rm, writeFile} from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import {rpcBuildPaths} from "../engine/rpc/rpcBuildPaths.js";
import {startRpcServer, type RunningRpcServer} from "../engine/rpc/startRpcServer.js";
import {requiredOrSkip} from "../engine/testing/requiredOrSkip.js";
import {ConversationStore} from "./conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "./engineChild/EngineClient.js";
import type {HostClient} from "./HostContext.js";
import {HostService} from "./HostService.js";
import {RPC_SERVERS_FILE} from "./rpc/RpcServerList.js";
import {freePort} from "../engine/testing/freePort.js";
import {isolatedCacheEnv} from "../engine/testing/isolatedCacheEnv.js";

const cpuRpc = rpcBuildPaths("cpu");
const missing = requiredOrSkip("HostService rpc-server tests",
    !existsSync(defaultEngineEntry()) ? "the engine is not built; run `npm run build`"
        : [cpuRpc.server, cpuRpc.library].filter((file) => !existsSync(file)).map((file) => `${file} is not built (npm run native)`)[0] ?? null);

describe.skipIf(missing != null)("rpc-servers added in the settings join the engine's devices", () => {
    let dir: string;
    let server: RunningRpcServer;
    let engine: EngineClient;
    let host: HostService;
    const client: HostClient = {id: "rpc-test", emit: () => {}};
    const deviceNames = async () => (await host.handle("machine.describe", undefined, client)).devices.map((device) => device.name);
    const newEngine = () => new EngineClient({env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1", ...isolatedCacheEnv(path.join(dir, "cache"))}});

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-host-rpc-"));
        server = await startRpcServer({port: await freePort(), device: "CPU", threads: 1});
        engine = newEngine();
        host = new HostService(await ConversationStore.open(dir), engine);
        host.attach(client);
        await host.startEngine();
    }, 120_000);
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await server?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("adds a reachable rpc-server: the engine restarts with its device, and the list is kept for the next start", async () => {
        expect((await deviceNames()).filter((name) => name.startsWith("RPC"))).toEqual([]);
        const endpoint = server.endpoint.text;
        const state = await host.handle("rpc.add", {endpoint}, client);
        expect(state).toEqual({servers: [{endpoint, reachable: true, problem: null}]});
        expect(await deviceNames()).toContain("RPC0");
        expect(JSON.parse(await readFile(path.join(dir, RPC_SERVERS_FILE), "utf8")).servers).toEqual([endpoint]);

        // the app started again on the same data folder registers it at start, before any model loads
        const secondEngine = newEngine();
        const second = new HostService(await ConversationStore.open(dir), secondEngine);
        try {
            await second.startEngine();
            const devices = (await second.handle("machine.describe", undefined, client)).devices.map((device) => device.name);
            expect(devices).toContain("RPC0");
        } finally {
            await second.dispose();
            await secondEngine.stop();
        }
    }, 120_000);

    it("refuses an address where no rpc-server answers, in one sentence, and keeps the list as it was", async () => {
        const before = await host.handle("rpc.list", undefined, client);
        const error = await host.handle("rpc.add", {endpoint: `127.0.0.1:${await freePort()}`}, client).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(TensorwiseError);
        expect((error as TensorwiseError).code).toBe("rpc-unreachable");
        expect((error as Error).message).toMatch(/^no rpc-server answers at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
        expect(await host.handle("rpc.list", undefined, client)).toEqual(before);
        expect(engine.state.state).toBe("running");
    }, 60_000);

    it("removes it: the engine restarts without the remote device", async () => {
        const state = await host.handle("rpc.remove", {endpoint: server.endpoint.text}, client);
        expect(state).toEqual({servers: []});
        expect((await deviceNames()).filter((name) => name.startsWith("RPC"))).toEqual([]);
    }, 120_000);

    it("leaves out an rpc-server that stopped, instead of failing to start the engine", async () => {
        const stopped = await startRpcServer({port: await freePort(), device: "CPU", threads: 1});
        await host.handle("rpc.add", {endpoint: stopped.endpoint.text}, client);
        expect(await deviceNames()).toContain("RPC0");
        await stopped.stop();
        await host.handle("engine.restart", undefined, client);
        expect(engine.state.state).toBe("running");
        expect((await deviceNames()).filter((name) => name.startsWith("RPC"))).toEqual([]);
        const listed = await host.handle("rpc.list", undefined, client);
        expect(listed.servers).toMatchObject([{endpoint: stopped.endpoint.text, reachable: false}]);
        expect(listed.servers[0]!.problem).toMatch(/no rpc-server answers at/);
    }, 120_000);

    it("keeps an HTTP server and a silent port in the list, marked not reachable with the reason, and starts the engine without them", async () => {
        const web = http.createServer((_request, response) => response.end("not rpc"));
        const silentSockets: net.Socket[] = [];
        const silent = net.createServer((socket) => silentSockets.push(socket));
        for (const listener of [web, silent])
            await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
        const endpointOf = (listener: net.Server) => `127.0.0.1:${(listener.address() as net.AddressInfo).port}`;
        const servers = [endpointOf(web), endpointOf(silent), server.endpoint.text];
        const otherDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-host-rpc-foreign-"));
        await writeFile(path.join(otherDir, RPC_SERVERS_FILE), JSON.stringify({version: 1, servers}));
        const otherEngine = new EngineClient({env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1", ...isolatedCacheEnv(path.join(otherDir, "cache"))}});
        const other = new HostService(await ConversationStore.open(otherDir), otherEngine);
        try {
            const started = performance.now();
            await other.startEngine();
            expect(otherEngine.state.state).toBe("running");
            // both probes run at once, each bounded by RPC_PROBE_TIMEOUT_MS (3 s), then the engine starts (a few s here)
            expect(performance.now() - started).toBeLessThan(30_000);
            const devices = (await other.handle("machine.describe", undefined, client)).devices.map((device) => device.name);
            expect(devices.filter((name) => name.startsWith("RPC"))).toEqual(["RPC0"]);
            const listed = (await other.handle("rpc.list", undefined, client)).servers;
            expect(listed.map((entry) => [entry.endpoint, entry.reachable])).toEqual([[servers[0], false], [servers[1], false], [servers[2], true]]);
            expect(listed[0]!.problem).toMatch(/^127\.0\.0\.1:\d+ is not an rpc-server: it answered a hello with a reply that is not an RPC hello \(it starts with "HTTP\/1\.1 400/);
            expect(listed[1]!.problem).toMatch(/^127\.0\.0\.1:\d+ accepted the connection but sent no RPC hello reply within 3000 ms/);
            // kept, for when they answer again
            expect(JSON.parse(await readFile(path.join(otherDir, RPC_SERVERS_FILE), "utf8")).servers).toEqual(servers);
        } finally {
            await other.dispose();
            await otherEngine.stop();
            silentSockets.forEach((socket) => socket.destroy());
            web.closeAllConnections();
            await Promise.all([web, silent].map((listener) => new Promise((resolve) => listener.close(resolve))));
            await rm(otherDir, {recursive: true, force: true});
        }
    }, 120_000);
});
