/**
 * The user's journey, shared by the web-mode run (Chromium) and the Electron run: open a model by dragging it in,
 * auto-offload it onto the Vulkan device, check the memory panel against the plan, chat with streaming and timing,
 * stop a reply, reload, survive an engine kill, get a clear error for a malformed file, and benchmark the loaded model.
 */
import {mkdtemp, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it, onTestFailed} from "vitest";
import {makeSyntheticModel} from "../../electron/engine/writer/makeSyntheticModel.js";
import {keepScreenshot} from "../support/browser.js";
import {AppShell} from "../pages/AppShell.js";
import {BenchmarkPage} from "../pages/BenchmarkPage.js";
import {ChatPage} from "../pages/ChatPage.js";
import {DashboardsPage} from "../pages/DashboardsPage.js";
import {MemoryPage} from "../pages/MemoryPage.js";
import {ModelPage} from "../pages/ModelPage.js";
import {OffloadPage} from "../pages/OffloadPage.js";

/** What a launcher (web mode or Electron) gives the journey. */
export type LaunchedApp = {
    page: Page;
    /** Loads the app again in the same window (a page reload). */
    reload(): Promise<void>;
    enginePid(): Promise<number>;
    output(): string;
    /** Saves a trace and screenshot when `failedTest` is set. */
    close(failedTest?: string): Promise<void>;
};

const LONG_REPLY_TOKENS = 2000;

export function defineJourney(mode: string, launch: (dataDir: string, modelsDir: string) => Promise<LaunchedApp>): void {
    describe(`${mode}: chat with a model that is placed tensor by tensor`, () => {
        let app: LaunchedApp;
        let modelsDir: string;
        let failed: string | undefined;
        const shot = (name: string) => keepScreenshot(app.page, `${mode}-${name}`);
        const markFailure = () => onTestFailed(({task}) => {
            failed ??= `${mode}-${task.name}`;
            process.stderr.write(`\n--- app output (${mode}) ---\n${app.output().slice(-4000)}\n`);
        });

        beforeAll(async () => {
            modelsDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-models-"));
            await makeSyntheticModel(path.join(modelsDir, "tiny-chat.gguf"), {preset: "tiny", name: "tiny-chat"});
            // a GGUF header with nothing valid after it: the app must say so, not hang or crash
            await writeFile(path.join(modelsDir, "broken.gguf"), Buffer.concat([Buffer.from("GGUF"), Buffer.from([3, 0, 0, 0]), Buffer.alloc(24, 0xff)]));
            await writeFile(path.join(modelsDir, "notes.txt"), "not a model");
            app = await launch(await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-data-")), modelsDir);
        });
        afterAll(async () => {
            await app?.close(failed);
        });

        it("drag in a generated model → inspection card", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.waitForEngineState("idle");
            await keepScreenshot(app.page, `${mode}-chat-empty`);
            await shell.show("model");
            await shot("model-empty");
            const model = new ModelPage(app.page);
            await model.dropFile(path.join(modelsDir, "tiny-chat.gguf"));
            await model.card.waitFor({timeout: 30_000});
            expect(await model.architecture()).toBe("llama");
            expect(await app.page.getByTestId("model-name").textContent()).toBe("tiny-chat");
            expect(await model.tensorRowCount()).toBeGreaterThan(10);
            await model.filterTensors("ffn_down");
            expect(await model.tensorRowCount()).toBe(2);
            await model.filterTensors("");
            await shot("model-card");
        });

        it("a malformed file → clear error, and the engine keeps running", async () => {
            markFailure();
            const model = new ModelPage(app.page);
            await model.dropFile(path.join(modelsDir, "broken.gguf"));
            await model.error.waitFor({timeout: 30_000});
            const message = (await model.error.textContent()) ?? "";
            expect(message).toContain("cannot be opened");
            expect(message.length).toBeGreaterThan(40);
            await shot("model-malformed");
            expect(await new AppShell(app.page).engineState()).not.toBe("crashed");
            // not a .gguf: refused before anything is read or copied
            await model.dropFile(path.join(modelsDir, "notes.txt"));
            await app.page.locator("[data-testid='model-error'][data-code='bad-name']").waitFor();
            // a path that does not exist gets its own message
            await model.openPath(path.join(modelsDir, "does-not-exist.gguf"));
            await app.page.locator("[data-testid='model-error'][data-code='not-found']").waitFor();
            // back to the good model for the next steps
            await model.openPath(path.join(modelsDir, "tiny-chat.gguf"));
            await model.card.waitFor();
        });

        it("auto-offload → progress, placement map, memory panel with device and host buffers matching the plan", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.show("offload");
            const offload = new OffloadPage(app.page);
            await offload.setContextSize(1024);
            // llvmpipe is a "GPU" slower than the CPU it runs on, so `optimal` may rightly keep the tiny model on the
            // CPU; the paper's OATO fills the device up to 90% of the budget by affinity order whatever the speeds,
            // which gives this step the mixed device + host placement it checks.
            await offload.setStrategy("oato");
            await offload.run();
            await offload.waitForResult();
            expect(await offload.stepNames()).toEqual(expect.arrayContaining(["plan", "load"]));
            await shell.waitForEngineState("ready");
            expect(await offload.llamaFlags()).toContain("-m ");
            const planned = await offload.plannedBytes();
            await shot("offload-result");

            await shell.show("memory");
            const memory = new MemoryPage(app.page);
            const rows = await memory.rows();
            const device = rows.filter((row) => !row.isHost && (row.measuredWeights ?? 0) > 0);
            const host = rows.filter((row) => row.isHost && (row.measuredWeights ?? 0) > 0);
            expect(device.map((row) => row.bufferType)).toContain("Vulkan0");
            expect(host.length).toBeGreaterThan(0);
            for (const row of [...device, ...host]) {
                expect(row.plannedWeights, `planned weights of ${row.bufferType}`).not.toBeNull();
                // measured = planned up to llama.cpp's per-buffer alignment padding
                expect(Math.abs(row.measuredWeights! - row.plannedWeights!), row.bufferType).toBeLessThanOrEqual(Math.max(4096, row.plannedWeights! * 0.01));
            }
            // and the sides add up to what the placement map's legend (the plan) says
            const plannedHost = Object.entries(planned).filter(([name]) => name === "CPU" || name.endsWith("_Host")).reduce((sum, [, bytes]) => sum + bytes, 0);
            const measuredHost = host.reduce((sum, row) => sum + row.measuredWeights!, 0);
            expect(Math.abs(measuredHost - plannedHost)).toBeLessThanOrEqual(Math.max(4096, plannedHost * 0.01));
            // KV cache and scratch exactly: OATO keeps every layer's KV cache on the device, so the Vulkan0 row holds
            // 2 layers × K and V × 1024 cells × (128/4 × 2 KV heads) × 2 bytes (F16); its compute buffer is the one
            // llama.cpp's no-alloc simulation reserved for this plan (the plan's prediction after autoPlan's check)
            const vulkan = rows.find((row) => row.bufferType === "Vulkan0")!;
            expect(vulkan.measuredKv).toBe(2 * 2 * 1024 * 64 * 2);
            expect(vulkan.plannedKv).toBe(vulkan.measuredKv);
            expect(vulkan.plannedScratch).toBeGreaterThan(0);
            expect(vulkan.measuredScratch).toBe(vulkan.plannedScratch);
            for (const row of rows.filter((r) => r.isHost)) expect(row.measuredKv ?? 0, row.bufferType).toBe(0);
            expect(await memory.deviceCount()).toBeGreaterThan(0);
            await shot("memory");
        });

        it("Auto-offload again → the machine profile is reused (no re-profile) and every decision is explained", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.show("offload");
            const offload = new OffloadPage(app.page);
            // the first press (previous step) measured this machine into this run's fresh cache
            const first = await offload.explanation();
            expect(first.profileReused).toBe(false);
            expect(first.profile).toContain("measured on this machine just now");
            await offload.run();
            // the previous result leaves while the job runs (validating and planning take seconds), then the new one comes
            await app.page.getByTestId("offload-result").waitFor({state: "detached", timeout: 10_000});
            await offload.waitForResult();
            await shell.waitForEngineState("ready");
            expect(await offload.stepDetail("profile")).toContain("reusing this machine's profile");
            const second = await offload.explanation();
            expect(second.profileReused).toBe(true);
            expect(second.profile).toContain("reused from the cache");
            expect(second.placement).toMatch(/^(Vulkan0 holds \d+% of the weights|The whole model fits on Vulkan0)/);
            expect(second.budget).toMatch(/^Auto budget: [\d.]+ MiB = the [\d.]+ MiB free on Vulkan0 minus a [\d.]+ MiB safety margin/);
            expect(second.ngl).toContain("output layer");
            // the memory estimate per device, shown before loading, is the plan the Memory screen measured against
            expect(Object.keys(await offload.memoryEstimate())).toContain("Vulkan0");
            await shot("offload-explained");
        });

        it("send a message → tokens stream, TTFT/TPOT appear", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.show("chat");
            const chat = new ChatPage(app.page);
            await chat.newConversation();
            await chat.setOptions({maxTokens: 48, temperature: 0});
            await chat.send("What does a KV cache store?");
            await chat.streaming.waitFor({timeout: 30_000});
            await chat.waitForReplyCount(1);
            const timing = await chat.lastTiming();
            expect(timing.ttftMs).toBeGreaterThan(0);
            expect(timing.tpotMs).toBeGreaterThan(0);
            expect(timing.text).toMatch(/TTFT .*ms/);
            expect(timing.text).toMatch(/tok\/s/);
            await expect.poll(() => chat.title()).toBe("What does a KV cache store?");
            await shot("chat-reply");

            await chat.send("And the scratch buffers?");
            await chat.waitForReplyCount(2);
            await shell.show("dashboards");
            const dashboards = new DashboardsPage(app.page);
            expect(await dashboards.replyCount()).toBe(2);
            expect(await dashboards.chartPoints("ttft")).toBe(2);
            expect(await dashboards.chartHasCanvas("tpot")).toBe(true);
            await shot("dashboards");
        });

        it("stop mid-reply keeps what came and marks it stopped", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.show("chat");
            const chat = new ChatPage(app.page);
            await chat.setOptions({maxTokens: LONG_REPLY_TOKENS, temperature: 0});
            await chat.send("Write a very long story.");
            await app.page.waitForFunction(() => Number(document.querySelector("[data-testid='message-streaming']")?.getAttribute("data-tokens") ?? 0) >= 5, undefined, {timeout: 60_000});
            await shot("chat-streaming");
            await chat.stop();
            await chat.waitForReplyCount(3, 30_000);
            expect(await chat.lastAssistantStopped()).toBe("user");
            const stoppedTiming = await chat.lastTiming();
            expect(stoppedTiming.text).not.toContain(`${LONG_REPLY_TOKENS} tokens`);
            await shot("chat-stopped");
        });

        it("reload the page → the conversation is still there", async () => {
            markFailure();
            const chat = new ChatPage(app.page);
            const title = await chat.title();
            await app.reload();
            await new AppShell(app.page).waitForEngineState("ready");
            await app.page.getByTestId("message-assistant").first().waitFor();
            expect(await chat.title()).toBe(title);
            expect(await chat.userMessages().count()).toBe(3);
            expect(await chat.assistantMessages().count()).toBe(3);
            expect(await chat.lastAssistantStopped()).toBe("user");
        });

        it("kill the engine process mid-reply → the UI reports it, keeps the conversation, and recovers after restart", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            const chat = new ChatPage(app.page);
            await chat.setOptions({maxTokens: LONG_REPLY_TOKENS, temperature: 0});
            await chat.send("Tell me everything about GPUs.");
            await app.page.waitForFunction(() => Number(document.querySelector("[data-testid='message-streaming']")?.getAttribute("data-tokens") ?? 0) >= 3, undefined, {timeout: 60_000});
            process.kill(await app.enginePid(), "SIGKILL");

            await shell.crashBanner.waitFor({timeout: 20_000});
            expect(await shell.crashBanner.textContent()).toContain("SIGKILL");
            await app.page.getByTestId("stopped-crash").waitFor({timeout: 20_000});
            expect(await chat.userMessages().count()).toBe(4);
            await shot("engine-crashed");

            await shell.restartEngine();
            await shell.crashBanner.waitFor({state: "detached", timeout: 60_000});
            // the host replays the last placement on the fresh engine
            await shell.waitForEngineState("ready", 120_000);
            await chat.setOptions({maxTokens: 16, temperature: 0});
            await chat.send("Are you back?");
            await chat.waitForReplyCount(5);
            expect((await chat.lastTiming()).ttftMs).toBeGreaterThan(0);
            await shot("engine-recovered");
        });

        it("regenerate replaces the last reply; a second conversation keeps its own history", async () => {
            markFailure();
            const chat = new ChatPage(app.page);
            const before = await chat.lastTiming();
            await app.page.getByTestId("regenerate").click();
            await chat.streaming.waitFor({state: "detached", timeout: 60_000});
            await chat.waitForReplyCount(5);
            expect(await chat.assistantMessages().count()).toBe(5);
            expect((await chat.lastTiming()).ttftMs).not.toBe(before.ttftMs);

            await chat.newConversation();
            await chat.setOptions({maxTokens: 8, temperature: 0});
            await chat.send("A second topic");
            await chat.waitForReplyCount(1);
            expect(await chat.assistantMessages().count()).toBe(1);
            expect(await chat.conversationCount()).toBe(2);
            await app.page.getByTestId("conversation-item").filter({hasText: "What does a KV cache store?"}).click();
            await app.page.waitForFunction(() => document.querySelectorAll("[data-testid='message-assistant']").length === 5);
            await shot("chat-conversations");
        });

        it("benchmark the loaded model → live progress, result rows, charts, a past run, CSV export; the model is back after", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.show("benchmark");
            const bench = new BenchmarkPage(app.page);
            expect(await bench.selectedStrategies()).toEqual(["layers", "optimal"]);
            // the default grid, one size smaller: 2 strategies × (2 prompts + 1 generation length) × 1 repeat
            await bench.setGrid({budgets: "50", prompts: "32, 64", gens: "16", repeats: 1});
            await bench.start();
            const progress = await bench.waitForProgress(1);
            expect(progress.total).toBe(6);
            expect(progress.label).toMatch(/^50% · (layers|optimal)/);
            await shot("benchmark-running");
            await bench.waitForDone();
            expect(await bench.status()).toBe("done");
            expect(await bench.resultRows().count()).toBe(2 * 3);
            expect(await bench.pastRunCount()).toBe(1);
            expect(await bench.chartSeries("ttft")).toBe(2);
            await app.page.getByTestId("bench-speedups").locator("td.num").first().waitFor();
            await shot("benchmark");
            await bench.scrollToCharts();
            await shot("benchmark-charts");
            await app.page.getByTestId("bench-speedups").scrollIntoViewIfNeeded();
            await shot("benchmark-tables");
            if (mode === "web") {
                const csv = await bench.download("csv");
                expect(csv.fileName).toMatch(/^tensorwise-bench-tiny-chat-\d{8}-\d{4}\.csv$/);
                const lines = csv.text.trimEnd().split("\n");
                expect(lines[0]).toContain("budget");
                expect(lines).toHaveLength(1 + 2 * 3);
            }
            // the chat model is loaded again once the benchmark gives the engine back
            await shell.waitForEngineState("ready", 60_000);
        });
    });
}
