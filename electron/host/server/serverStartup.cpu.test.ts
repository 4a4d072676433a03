/**
 * A server start through the host as the Server screen drives it (the real engine child on a generated model): the
 * `server.state` pushes carry each start-up step in order while the status is `starting`, with the KV measurement's
 * progress; the KV costs measured at the first start are kept (electron/serve/kv/kvCostCache.ts) so a second start with
 * the same model and settings has no measuring step; other settings measure again; a kept file that is corrupt or
 * edited is measured again and replaced; a reply being written when the server starts is a step of its own.
 */
import {existsSync} from "node:fs";
import {mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {ServerStartupStep, ServerState} from "../../contract/ipc.js";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";
import {makeSyntheticModel} from "../../engine/writer/makeSyntheticModel.js";
import {ConversationStore} from "../conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "../engineChild/EngineClient.js";
import {HostService} from "../HostService.js";
import {hostEventRecorder} from "../testing/hostEventRecorder.js";
import {isolatedCacheEnv} from "../../engine/testing/isolatedCacheEnv.js";

const missing = requiredOrSkip("server start-up tests", existsSync(defaultEngineEntry()) ? null : "the engine is not built; run `npm run build`");
if (missing != null)
    console.warn(`[skip] server start-up tests: ${missing}`);

describe.skipIf(missing != null)("the server's start-up steps and its kept KV costs (real engine, tiny model)", () => {
    let dir: string;
    let cacheDir: string;
    let engine: EngineClient;
    let host: HostService;
    const {events, client, waitFor} = hostEventRecorder("test-client", 60_000);

    /** Applies `change`, which must start the server, and returns the `server.state` pushes of that start. */
    const start = async (change: Parameters<HostService["handle"]>[1] & object): Promise<{state: ServerState; pushed: ServerState[]}> => {
        const from = events.length;
        const state = await host.handle("server.set", change as never, client) as ServerState;
        expect(state.status, state.error ?? "").toBe("serving");
        const pushed = events.slice(from).filter((event) => event.name === "server.state").map((event) => event.payload as ServerState);
        return {state, pushed};
    };
    /** The steps of a start, as its last `starting` push lists them (each push's list must extend the one before). */
    const stepsOf = (pushed: readonly ServerState[]): ServerStartupStep[] => {
        const starting = pushed.filter((state) => state.status === "starting");
        expect(starting.length).toBeGreaterThan(0);
        for (const [index, state] of starting.entries()) {
            expect(state.startup).not.toBeNull();
            const previous = starting[index - 1]?.startup?.steps ?? [];
            expect(state.startup!.steps.slice(0, previous.length)).toEqual(previous);
            expect(state.startup!.step).toBe(state.startup!.steps.at(-1) ?? null);
        }
        return starting.at(-1)!.startup!.steps;
    };
    const keptFiles = async () => (await readdir(cacheDir).catch(() => [])).filter((name) => /^kv-cost-[0-9a-f]{20}\.json$/.test(name));
    /** The kept file measured on a context of `sequences` sequences. */
    const keptFor = async (sequences: number): Promise<string> => {
        for (const name of await keptFiles()) {
            const file = path.join(cacheDir, name);
            if ((JSON.parse(await readFile(file, "utf8")) as {facts: {load: {sequences: number}}}).facts.load.sequences === sequences)
                return file;
        }
        throw new Error(`no kept KV costs for ${sequences} sequences`);
    };
    const stop = async () => expect((await host.handle("server.set", {enabled: false}, client)).status).toBe("off");

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-server-startup-"));
        cacheDir = path.join(dir, "cache", "tensorwise");
        await mkdir(path.join(dir, "models"));
        // wider than the tiny preset, so a long prompt takes long enough to read that a server start finds the reply in flight
        await makeSyntheticModel(path.join(dir, "models", "tiny.gguf"), {preset: "tiny", embd: 512, ff: 1536});
        engine = new EngineClient({env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1", ...isolatedCacheEnv(path.join(dir, "cache"))}});
        host = new HostService(await ConversationStore.open(dir), engine);
        host.attach(client);
        await engine.start();
        await host.handle("model.load", {path: path.join(dir, "models", "tiny.gguf"), gpuLayers: 0, settings: {contextSize: 1024}, taskId: "t"}, client);
    }, 180_000);
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("reports each step of the first start in order, the KV measurement with its progress, and keeps what it measured privately", async () => {
        const {state, pushed} = await start({enabled: true, port: 0, parallel: 2});
        expect(stepsOf(pushed)).toEqual(["loading-context", "measuring-kv", "binding-port"]);
        const fractions = pushed.filter((entry) => entry.startup?.step === "measuring-kv").map((entry) => entry.startup!.fraction!);
        expect(fractions[0]).toBe(0);
        expect(fractions.at(-1)).toBe(1);
        expect(fractions.length).toBeGreaterThan(3);
        expect([...fractions].sort((a, b) => a - b)).toEqual(fractions);
        // the step is only shown while starting
        expect(state.startup).toBeNull();
        expect(pushed.filter((entry) => entry.status !== "starting").every((entry) => entry.startup == null)).toBe(true);
        const kept = await keptFiles();
        expect(kept).toHaveLength(1);
        expect((await stat(path.join(cacheDir, kept[0]!))).mode & 0o777).toBe(0o600);
        expect((await stat(cacheDir)).mode & 0o777).toBe(0o700);
    }, 180_000);

    it("does not measure again when started again with the same model and settings", async () => {
        await stop();
        const before = await Promise.all((await keptFiles()).map((name) => readFile(path.join(cacheDir, name), "utf8")));
        const {pushed} = await start({enabled: true});
        expect(stepsOf(pushed)).toEqual(["loading-context", "binding-port"]);
        expect(await Promise.all((await keptFiles()).map((name) => readFile(path.join(cacheDir, name), "utf8")))).toEqual(before);
    }, 180_000);

    it("measures again for other settings (more sequences), keeping each", async () => {
        const {pushed} = await start({parallel: 3});
        expect(stepsOf(pushed)).toEqual(["loading-context", "measuring-kv", "binding-port"]);
        expect(await keptFiles()).toHaveLength(2);
        await stop();
        // back to two sequences: kept from the first start
        expect(stepsOf((await start({enabled: true, parallel: 2})).pushed)).toEqual(["loading-context", "binding-port"]);
    }, 240_000);

    it("measures again, and replaces the file, when the kept one is cut short or edited", async () => {
        const file = await keptFor(2);
        const good = await readFile(file, "utf8");
        await stop();
        await writeFile(file, good.slice(0, 100));
        expect(stepsOf((await start({enabled: true})).pushed)).toEqual(["loading-context", "measuring-kv", "binding-port"]);
        const remeasured = JSON.parse(await readFile(file, "utf8")) as {model: {prefill: {msPer: number}}};
        expect(remeasured.model.prefill.msPer).toBeGreaterThan(0);

        // right shape, right key, a prefill 1000× cheaper than its own points say: not trusted
        await stop();
        remeasured.model.prefill.msPer /= 1000;
        await writeFile(file, JSON.stringify(remeasured));
        expect(stepsOf((await start({enabled: true})).pushed)).toEqual(["loading-context", "measuring-kv", "binding-port"]);
        expect((JSON.parse(await readFile(file, "utf8")) as typeof remeasured).model.prefill.msPer).not.toBe(remeasured.model.prefill.msPer);
    }, 240_000);

    it("says it waits for the app's reply when one is being written as the server starts", async () => {
        await stop();
        const {id} = await host.handle("conversations.create", {title: "long"}, client);
        // a prompt long enough that the reply is still reading it when the server start reaches the engine
        await host.handle("chat.send", {conversationId: id, text: `Tell me a long story ${"and then ".repeat(280)}`, streamId: "long", maxTokens: 64, temperature: 0}, client);
        const {pushed} = await start({enabled: true});
        // the reply was in flight: the start stopped it
        const done = await waitFor("chat.done", (payload) => payload.streamId === "long");
        expect(done.message.stopReason).toBe("stopped");
        expect(stepsOf(pushed)).toEqual(["stopping-reply", "loading-context", "binding-port"]);
    }, 180_000);
});
