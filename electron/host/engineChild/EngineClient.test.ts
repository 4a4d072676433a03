import {existsSync} from "node:fs";
import {afterEach, describe, expect, it} from "vitest";
import {defaultEngineEntry, EngineClient, type EngineClientState} from "./EngineClient.js";
import {forkEngineProcess, type EngineSpawner} from "./forkEngineProcess.js";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";

const entry = defaultEngineEntry();
const missing = requiredOrSkip("EngineClient tests", existsSync(entry) ? null : `the engine is not built (${entry}); run \`npm run build\``);

// The real engine child process (no model needed): start, request, kill, recover.
describe.skipIf(missing != null)("EngineClient with the real engine child", () => {
    let client: EngineClient | null = null;
    afterEach(async () => {
        await client?.stop();
        client = null;
    });

    it("starts the child, answers requests, and exposes its pid", async () => {
        client = new EngineClient();
        await client.start();
        expect(client.pid).toBeGreaterThan(0);
        const machine = await client.request("describe", undefined);
        expect(machine.devices.length).toBeGreaterThan(0);
        expect(await client.request("current", undefined)).toBeNull();
    });

    it("reports the engine's own error codes", async () => {
        client = new EngineClient();
        await client.start();
        await expect(client.request("inspect", {path: "/nonexistent/model.gguf"})).rejects.toMatchObject({name: "TensorwiseError"});
    });

    it("rejects pending requests with engine-crashed when the child is killed, says why, and restarts", async () => {
        const states: EngineClientState[] = [];
        client = new EngineClient();
        client.onState((state) => states.push(state));
        await client.start();
        const pid = client.pid!;
        // a request in flight when the process dies
        const pending = client.request("describe", undefined).then(() => client!.request("describe", undefined));
        process.kill(pid, "SIGKILL");
        await expect(pending).rejects.toMatchObject({code: "engine-crashed"});
        await expect.poll(() => client!.state.state).toBe("crashed");
        const crashed = client.state;
        expect(crashed.state === "crashed" && crashed.reason).toMatch(/SIGKILL/);
        await expect(client.request("describe", undefined)).rejects.toMatchObject({code: "engine-crashed"});

        await client.restart();
        expect(client.pid).not.toBe(pid);
        expect((await client.request("describe", undefined)).devices.length).toBeGreaterThan(0);
        expect(states.map((state) => state.state)).toEqual(["starting", "running", "crashed", "starting", "running"]);
    });

    it("cancels a request through its AbortSignal", async () => {
        client = new EngineClient();
        await client.start();
        const controller = new AbortController();
        const request = client.request("describe", undefined, controller.signal);
        controller.abort();
        await expect(request).rejects.toMatchObject({code: "aborted"});
    });

    it("starts through an injected spawner, and stop() lets the engine dispose and exit by itself", async () => {
        const exits: {code: number | null; signal: string | null}[] = [];
        const spawner: EngineSpawner = (engineEntry, options) => {
            const started = forkEngineProcess()(engineEntry, options);
            started.onExit((code, signal) => exits.push({code, signal}));
            return started;
        };
        client = new EngineClient({spawner});
        await client.start();
        expect((await client.request("describe", undefined)).devices.length).toBeGreaterThan(0);
        const stopping = performance.now();
        await client.stop();
        // exit code 0 from the engine's own shutdown, well before the kill after the grace period
        expect(exits).toEqual([{code: 0, signal: null}]);
        expect(performance.now() - stopping).toBeLessThan(2500);
        expect(client.state).toEqual({state: "stopped"});
    });
});

describe.skipIf(missing != null)("the engine child and signals", () => {
    it("ignores SIGINT (a terminal's Ctrl-C reaches the whole process group): it keeps answering until the host stops it", async () => {
        const exits: {code: number | null; signal: string | null}[] = [];
        const spawner: EngineSpawner = (engineEntry, options) => {
            const started = forkEngineProcess()(engineEntry, options);
            started.onExit((code, signal) => exits.push({code, signal}));
            return started;
        };
        const client = new EngineClient({spawner});
        try {
            await client.start();
            process.kill(client.pid!, "SIGINT");
            await new Promise((resolve) => setTimeout(resolve, 300));
            expect(client.state.state).toBe("running");
            expect((await client.request("describe", undefined)).devices.length).toBeGreaterThan(0);
        } finally {
            await client.stop();
        }
        expect(exits).toEqual([{code: 0, signal: null}]);
    });

    it("on SIGTERM disposes and exits by itself (exit code 0, not killed by the signal)", async () => {
        const client = new EngineClient();
        try {
            await client.start();
            process.kill(client.pid!, "SIGTERM");
            await expect.poll(() => client.state.state, {timeout: 10_000}).toBe("crashed");
            const state = client.state;
            expect(state.state === "crashed" && state.reason).toMatch(/^exit code 0/);
        } finally {
            await client.stop();
        }
    });
});
