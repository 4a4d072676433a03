import {existsSync, readFileSync} from "node:fs";
import {mkdir, mkdtemp, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EventName, Events} from "../contract/ipc.js";
import {makeSyntheticModel} from "../engine/writer/makeSyntheticModel.js";
import {ConversationStore} from "./conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "./engineChild/EngineClient.js";
import type {HostClient} from "./HostContext.js";
import {HostService} from "./HostService.js";
import {requiredOrSkip} from "../engine/testing/requiredOrSkip.js";

const missing = requiredOrSkip("HostService benchmark tests", existsSync(defaultEngineEntry()) ? null : "the engine is not built; run `npx tsc -p .`");

type Received = {[Name in EventName]: {name: Name; payload: Events[Name]}}[EventName];

// Needs-a-model tier: the real engine child runs a tiny benchmark grid on a synthetic model (Vulkan where visible, else CPU).
describe.skipIf(missing != null)("HostService benchmarks with the real engine and a tiny model", () => {
    let dir: string;
    let modelPath: string;
    let engine: EngineClient;
    let host: HostService;
    let saveTarget: string;
    const events: Received[] = [];
    const client: HostClient = {id: "bench-client", emit: (name, payload) => events.push({name, payload} as Received)};
    const received = <Name extends EventName>(name: Name) =>
        events.filter((event): event is Extract<Received, {name: Name}> => event.name === name).map((event) => event.payload as Events[Name]);
    const waitFor = async <Name extends EventName>(name: Name, match: (payload: Events[Name]) => boolean, since = 0, timeout = 120_000) => {
        const started = Date.now();
        for (;;) {
            const found = events.slice(since).filter((event) => event.name === name).map((event) => event.payload as Events[Name]).find(match);
            if (found != null) return found;
            if (Date.now() - started > timeout) throw new Error(`no ${name} event within ${timeout} ms`);
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
    };
    const grid = {budgets: [{kind: "percent" as const, percent: 50}], promptLengths: [8, 16], genLengths: [4], strategies: ["layers" as const, "optimal" as const], repeats: 1};

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-host-bench-"));
        modelPath = path.join(dir, "models", "tiny.gguf");
        saveTarget = path.join(dir, "saved-report.csv");
        await mkdir(path.dirname(modelPath), {recursive: true});
        await makeSyntheticModel(modelPath, {preset: "tiny"});
        engine = new EngineClient({env: {...process.env, TENSORWISE_THREADS: "2"}});
        host = new HostService(await ConversationStore.open(dir), engine, {saveFileDialog: async () => saveTarget}, {benchDir: path.join(dir, "bench")});
        host.attach(client);
        await engine.start();
        await host.handle("model.autoOffload", {path: modelPath, budget: {kind: "auto"}, settings: {contextSize: 512}, taskId: "t"}, client);
    });
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("bench.start on the loaded model → progress per timed request → bench.done; chat is refused meanwhile, the model comes back after", async () => {
        const {id: conversationId} = await host.handle("conversations.create", {}, client);
        const since = events.length;
        await host.handle("bench.start", {benchId: "bench-a", ...grid}, client);
        expect(host.engineState).toEqual({state: "busy", task: "benchmark"});
        await expect(host.handle("chat.send", {conversationId, text: "hi", streamId: "s1"}, client)).rejects.toMatchObject({code: "bench-running"});
        await expect(host.handle("bench.start", {benchId: "bench-b", ...grid}, client)).rejects.toMatchObject({code: "bench-running"});

        const done = await waitFor("bench.done", (payload) => payload.benchId === "bench-a");
        expect(done.summary).toMatchObject({id: "bench-a", status: "done", plannedRuns: 2, finishedRuns: 2, failedRuns: 0, strategies: ["layers", "optimal"]});
        const progress = received("bench.progress").filter((payload) => payload.benchId === "bench-a");
        // 2 runs × 1 repeat × (2 prompts + 1 generation) timed requests
        expect(progress.every((payload) => payload.total === 6)).toBe(true);
        const counts = progress.map((payload) => payload.done);
        expect(counts).toEqual([...counts].sort((a, b) => a - b));
        expect(counts.at(-1)).toBe(6);
        expect(progress.some((payload) => payload.cell === "50% · optimal" && payload.step.includes("TTFT, 16-token prompt"))).toBe(true);
        expect(progress.some((payload) => payload.lastSample?.kind === "tpot" && payload.lastSample.tokens === 4 && payload.lastSample.ms > 0)).toBe(true);
        expect(progress.filter((payload) => payload.lastResult != null).map((payload) => payload.lastResult!.variant.label)).toEqual(["layers", "optimal"]);

        // the host gives the engine back and loads the chat model again
        await waitFor("engine.state", (state) => state.state === "ready", since);
        expect((await host.handle("model.current", undefined, client))?.card.path).toBe(modelPath);

        const detail = await host.handle("bench.get", {id: "bench-a"}, client);
        expect(detail.report.runs.map((run) => run.status)).toEqual(["ok", "ok"]);
        expect(detail.report.runs[0]!.points.every((point) => point.medianMs > 0)).toBe(true);
        expect(detail.speedups.some((cell) => cell.variant === "optimal" && cell.baseline === "layers")).toBe(true);
        expect(detail.errors.map((stat) => stat.variant)).toEqual(["layers", "optimal"]);
        expect((await host.handle("bench.list", undefined, client)).map((summary) => summary.id)).toEqual(["bench-a"]);
    });

    it("exports the report: a file path per format, and a copy where the save dialog points", async () => {
        const csv = await host.handle("bench.export", {id: "bench-a", format: "csv"}, client);
        expect(csv.fileName).toMatch(/^tensorwise-bench-tiny-\d{8}-\d{4}\.csv$/);
        const lines = readFileSync(csv.path, "utf8").trimEnd().split("\n");
        expect(lines).toHaveLength(1 + 2 * 3);
        expect(readFileSync((await host.handle("bench.export", {id: "bench-a", format: "html"}, client)).path, "utf8")).toContain("<svg");
        expect(await host.handle("dialog.saveBenchReport", {id: "bench-a", format: "csv"}, client)).toBe(saveTarget);
        expect(readFileSync(saveTarget, "utf8")).toBe(readFileSync(csv.path, "utf8"));
        await expect(host.handle("bench.export", {id: "../etc", format: "csv"}, client)).rejects.toMatchObject({code: "bad-request"});
        await expect(host.handle("bench.export", {id: "bench-a", format: "exe" as "csv"}, client)).rejects.toMatchObject({code: "bad-request"});
    });

    it("bench.stop keeps the finished cells and reports the run as interrupted", async () => {
        const since = events.length;
        await host.handle("bench.start", {benchId: "bench-c", ...grid, path: modelPath}, client);
        await waitFor("bench.progress", (payload) => payload.benchId === "bench-c" && payload.done >= 1);
        await host.handle("bench.stop", {benchId: "bench-c"}, client);
        const done = await waitFor("bench.done", (payload) => payload.benchId === "bench-c");
        expect(done.summary.status).toBe("interrupted");
        // the stop can land during the second run, which is then kept as a partial (interrupted) run
        expect(done.summary.finishedRuns).toBeGreaterThanOrEqual(1);
        expect(done.summary.finishedRuns).toBeLessThanOrEqual(done.summary.plannedRuns);
        const list = await host.handle("bench.list", undefined, client);
        expect(list.map((summary) => summary.id).sort()).toEqual(["bench-a", "bench-c"]);
        await waitFor("engine.state", (state) => state.state === "ready", since);
    });
});
