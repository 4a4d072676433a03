// "Get a model" through the host: search, quants planned by the real engine child from their headers, a download with
// progress and cancel, against a local hub (electron/engine/hub/testing/startLocalHub.ts). Needs the built engine.
import {existsSync} from "node:fs";
import {mkdtemp, readdir, readFile, rm, stat} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EventName, Events} from "../contract/ipc.js";
import {makeSyntheticModel} from "../engine/writer/makeSyntheticModel.js";
import {startLocalHub, type LocalHub} from "../engine/hub/testing/startLocalHub.js";
import {PARTIAL_DIR} from "../engine/hub/pullModel.js";
import {requiredOrSkip} from "../engine/testing/requiredOrSkip.js";
import {ConversationStore} from "./conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "./engineChild/EngineClient.js";
import type {HostClient} from "./HostContext.js";
import {HostService} from "./HostService.js";
import {isolatedCacheEnv} from "../engine/testing/isolatedCacheEnv.js";

const missing = requiredOrSkip("Get a model through the host", existsSync(defaultEngineEntry()) ? null : "the engine is not built; run `npm run build`");

type Received = {[Name in EventName]: {name: Name; payload: Events[Name]}}[EventName];

describe.skipIf(missing != null)("Get a model: hub requests through the host and the engine child", () => {
    let dir: string;
    let hub: LocalHub;
    let engine: EngineClient;
    let host: HostService;
    let q8: Buffer;
    const events: Received[] = [];
    const client: HostClient = {id: "test-client", emit: (name, payload) => events.push({name, payload} as Received)};
    const savedEndpoint = process.env.HF_ENDPOINT;
    const modelsDir = (): string => path.join(dir, "models");

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-host-hub-"));
        await makeSyntheticModel(path.join(dir, "f16.gguf"), {preset: "tiny", layers: 4, embd: 256, ff: 768, type: "f16"});
        await makeSyntheticModel(path.join(dir, "q8.gguf"), {preset: "tiny", layers: 4, embd: 256, ff: 768, type: "q8_0"});
        q8 = await readFile(path.join(dir, "q8.gguf"));
        hub = await startLocalHub({
            "org/tiny-GGUF": [{path: "tiny-F16.gguf", content: await readFile(path.join(dir, "f16.gguf"))}, {path: "tiny-Q8_0.gguf", content: q8}],
            "other/unrelated": [{path: "x-Q4_0.gguf", content: q8}]
        });
        // the host downloads, the engine child plans: both read HF_ENDPOINT
        process.env.HF_ENDPOINT = hub.endpoint;
        engine = new EngineClient({env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "2", ...isolatedCacheEnv(path.join(dir, "cache"))}});
        host = new HostService(await ConversationStore.open(dir), engine);
        host.attach(client);
        await engine.start();
    }, 120_000);
    afterAll(async () => {
        process.env.HF_ENDPOINT = savedEndpoint;
        await host?.dispose();
        await engine?.stop();
        await hub?.close();
        await rm(dir, {recursive: true, force: true});
    });

    it("writes the demo model (random weights) once, into the models folder, and opens it", async () => {
        const card = await host.handle("model.makeDemo", undefined, client);
        expect(card).toMatchObject({fileName: "demo-random-weights.gguf", path: path.join(modelsDir(), "demo-random-weights.gguf"), architecture: "llama"});
        const written = (await stat(card.path)).mtimeMs;
        expect((await host.handle("model.makeDemo", undefined, client)).path).toBe(card.path);
        expect((await stat(card.path)).mtimeMs).toBe(written);
        expect((await host.handle("library.list", undefined, client)).map((m) => m.path)).toContain(card.path);
        await rm(card.path);
    });

    it("searches the hub and refuses malformed requests by field", async () => {
        expect(await host.handle("hub.search", {query: "tiny"}, client)).toEqual([{id: "org/tiny-GGUF", downloads: 1000, likes: 10}]);
        expect(hub.requests.at(-1)!.url).toMatch(/^\/api\/models\?search=tiny&filter=gguf&/);
        for (const [name, arg, message] of [
            ["hub.search", {query: "x".repeat(201)}, /"query" is longer than 200 characters/],
            ["hub.search", {query: "a", limit: 5}, /unknown fields: "limit"/],
            ["hub.quants", {repo: "../../etc", profile: false, taskId: "t"}, /"repo" must be a repository id such as owner\/name/],
            ["hub.quants", {repo: "org/tiny-GGUF", profile: "yes", taskId: "t"}, /"profile" must be true or false/],
            ["hub.pull", {repo: "org/tiny-GGUF", quant: "Q4 K", taskId: "t"}, /"quant" must be a quant name/],
            ["hub.pull", {repo: "org/tiny-GGUF:Q8_0", quant: "Q8_0", taskId: "t"}, /"repo" must be a repository id/]
        ] as const)
            await expect(host.handle(name, arg as never, client)).rejects.toMatchObject({code: "bad-request", message: expect.stringMatching(message)});
    });

    it("lists each quant planned from its header by the engine (after profiling when asked), downloading nothing", async () => {
        const unprofiled = await host.handle("hub.quants", {repo: "org/tiny-GGUF", profile: false, taskId: "q1"}, client);
        expect(unprofiled.quants.map((q) => [q.name, q.needsProfile])).toEqual(expect.arrayContaining([["F16", true], ["Q8_0", true]]));
        const planned = await host.handle("hub.quants", {repo: "org/tiny-GGUF", profile: true, taskId: "q2"}, client);
        expect(planned.quants.map((q) => q.plan?.placement)).toEqual(["CPU", "CPU"]);
        expect(planned.quants[0]!.plan!.requestMs).toBeLessThanOrEqual(planned.quants[1]!.plan!.requestMs);
        expect(events.some((e) => e.name === "task.progress" && e.payload.taskId === "q2")).toBe(true);
        expect((await readdir(modelsDir()).catch(() => [] as string[])).filter((n) => n.endsWith(".gguf"))).toEqual([]);
        await expect(host.handle("hub.quants", {repo: "org/nothing", profile: false, taskId: "q3"}, client))
            .rejects.toMatchObject({code: "hub-error", message: expect.stringContaining("has no model repository org/nothing")});
    }, 180_000);

    it("downloads with progress, cancels keeping what came, resumes, then opens the model into the library", async () => {
        hub.behaviour = {throttle: {chunkBytes: 32 * 1024, delayMs: 20}};
        const pulling = host.handle("hub.pull", {repo: "org/tiny-GGUF", quant: "q8_0", taskId: "p1"}, client);
        const outcome = pulling.then(() => null, (error: unknown) => error);
        for (let i = 0; i < 500 && !events.some((e) => e.name === "task.progress" && e.payload.taskId === "p1" && (e.payload.progress ?? 0) > 0.1); i++)
            await new Promise((resolve) => setTimeout(resolve, 10));
        await host.handle("task.cancel", {taskId: "p1"}, client);
        expect(await outcome).toMatchObject({code: "aborted", message: expect.stringContaining("downloading again resumes it")});
        expect((await readdir(modelsDir())).filter((n) => n.endsWith(".gguf"))).toEqual([]);
        expect(await readdir(path.join(modelsDir(), PARTIAL_DIR))).toHaveLength(1);

        hub.behaviour = {};
        const card = await host.handle("hub.pull", {repo: "org/tiny-GGUF", quant: "Q8_0", taskId: "p2"}, client);
        expect(card).toMatchObject({fileName: "tiny-Q8_0.gguf", path: path.join(modelsDir(), "tiny-Q8_0.gguf"), architecture: "llama"});
        expect(hub.requests.filter((r) => r.url.endsWith("/tiny-Q8_0.gguf")).at(-1)!.range).toMatch(/^bytes=[1-9][0-9]*-$/);
        expect((await readFile(card.path)).equals(q8)).toBe(true);
        const progress = events.filter((e) => e.name === "task.progress" && e.payload.taskId === "p2").map((e) => (e.payload as Events["task.progress"]).progress);
        expect(progress.at(-1)).toBe(1);
        expect((await host.handle("library.list", undefined, client)).map((m) => m.path)).toContain(card.path);
    }, 120_000);
});
