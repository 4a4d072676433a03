/**
 * The user's journey, shared by the web-mode run (Chromium) and the Electron run: open a model by dragging it in,
 * auto-offload it onto the Vulkan device, check the memory panel against the plan, chat with streaming and timing,
 * stop a reply, reload, survive an engine kill, get a clear error for a malformed file, and benchmark the loaded model.
 */
import {randomUUID} from "node:crypto";
import {mkdir, mkdtemp, readdir, writeFile} from "node:fs/promises";
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
import {ServerPage} from "../pages/ServerPage.js";

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

/** A reply with a code block: random weights never write one, so it comes from a conversation saved before this run. */
const SAVED_REPLY = "Here is one:\n\n```python\ndef area(radius):\n    return 3.14159 * radius ** 2  # a circle\n```";

/** Puts a conversation from an earlier session into `dataDir`, as electron/host/conversations/ConversationStore.ts writes it. */
async function seedSavedConversation(dataDir: string): Promise<void> {
    const at = Date.UTC(2026, 0, 1);
    const id = randomUUID();
    const messages = [
        {id: randomUUID(), role: "user", text: "A Python function for the area of a circle?", createdAt: at},
        {id: randomUUID(), role: "assistant", text: SAVED_REPLY, createdAt: at + 1000}
    ];
    await mkdir(path.join(dataDir, "conversations"), {recursive: true});
    await writeFile(path.join(dataDir, "conversations", `${id}.json`),
        JSON.stringify({id, title: "Area of a circle", updatedAt: at + 1000, messageCount: messages.length, messages}));
}

export function defineJourney(mode: string, launch: (dataDir: string, modelsDir: string) => Promise<LaunchedApp>): void {
    describe(`${mode}: chat with a model that is placed tensor by tensor`, () => {
        let app: LaunchedApp;
        let modelsDir: string;
        let dataDir: string;
        /** A folder of the user's that is not a models folder: files dragged from it are uploaded (web mode). */
        let elsewhereDir: string;
        let failed: string | undefined;
        const shot = (name: string) => keepScreenshot(app.page, `${mode}-${name}`);
        /** Files named like `stem` in the app's own models folder (where web mode stores uploads). */
        const uploadedCopies = async (stem: string) =>
            (await readdir(path.join(dataDir, "models")).catch(() => [] as string[])).filter((name) => name.startsWith(stem));
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
            elsewhereDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-downloads-"));
            await writeFile(path.join(elsewhereDir, "hello.gguf"), Buffer.concat([Buffer.from("hell"), Buffer.alloc(60)]));
            dataDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-data-"));
            await seedSavedConversation(dataDir);
            app = await launch(dataDir, modelsDir);
        });
        afterAll(async () => {
            await app?.close(failed);
        });

        it("drag in a generated model → inspection card", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.waitForEngineState("idle");
            // the saved conversation opens first: its reply's code block is highlighted (python keywords, numbers, comments)
            const code = app.page.locator("[data-testid='message-assistant'] .markdown pre code.hljs.language-python");
            await code.waitFor();
            expect(await code.locator(".hljs-keyword").first().textContent()).toBe("def");
            expect(await code.locator(".hljs-number").first().textContent()).toBe("3.14159");
            expect(await code.locator(".hljs-comment").textContent()).toBe("# a circle");
            const [keywordColour, textColour] = await code.evaluate((element) => [
                getComputedStyle(element.querySelector(".hljs-keyword")!).color, getComputedStyle(element).color
            ]);
            expect(keywordColour).not.toBe(textColour);
            await keepScreenshot(app.page, `${mode}-chat-code`);
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
            // web mode uploaded a copy to check: rejected, it is gone from the app's models folder
            expect(await uploadedCopies("broken")).toEqual([]);
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
            const devices = await memory.devices();
            // one card per physical memory: system RAM (once), then the Vulkan device, each a bar at its capacity with
            // a labelled planned/measured table
            expect(devices.map((card) => card.device)).toEqual(["CPU", "Vulkan0"]);
            expect(await memory.ramCount()).toBe(1);
            const [ram, gpu] = devices as [typeof devices[0], typeof devices[0]];
            for (const card of devices) {
                expect(card.total, card.device).toBeGreaterThan(0);
                expect(card.free, card.device).not.toBeNull();
                expect(card.columns, card.device).toEqual(["", "weights", "KV cache", "scratch", "total"]);
                expect(card.rowLabels, card.device).toEqual(["planned", "measured"]);
                expect(card.plannedMarker, card.device).toBe(true);
            }
            expect(ram.kind).toBe("host");
            expect(ram.budgetMarker).toBe(false);
            expect(gpu.kind).toBe("gpu");
            expect(gpu.budget).toBeGreaterThan(0);
            expect(gpu.budgetMarker).toBe(true);
            for (const label of ["weights", "KV cache", "scratch"])
                expect(gpu.segments.some((title) => title.startsWith(`${label}:`)), `${label} segment on Vulkan0`).toBe(true);
            // free memory is what the driver reports after the load: either it leaves room for this model, or the card
            // says the driver does not count its allocations
            const onGpu = gpu.measuredWeights! + gpu.measuredKv! + gpu.measuredScratch!;
            if (gpu.free! + onGpu > gpu.total!)
                expect(gpu.notes.join(" ")).toMatch(/does not count these allocations/);
            // every host buffer type (plain, pinned, mapped) is counted under system RAM, every other one under its device
            for (const row of rows) expect(row.device, row.bufferType).toBe(row.isHost ? "CPU" : "Vulkan0");
            const device = rows.filter((row) => !row.isHost && (row.measuredWeights ?? 0) > 0);
            const host = rows.filter((row) => row.isHost && (row.measuredWeights ?? 0) > 0);
            expect(device.map((row) => row.bufferType)).toContain("Vulkan0");
            expect(host.length).toBeGreaterThan(0);
            for (const row of [...device, ...host]) {
                expect(row.plannedWeights, `planned weights of ${row.bufferType}`).not.toBeNull();
                // measured = planned up to llama.cpp's per-buffer alignment padding
                expect(Math.abs(row.measuredWeights! - row.plannedWeights!), row.bufferType).toBeLessThanOrEqual(Math.max(4096, row.plannedWeights! * 0.01));
            }
            // the plan's "CPU" weights measured in a pinned or mapped buffer type are shown as such, with a note, not as missing
            for (const row of host.filter((r) => r.bufferType !== "CPU")) {
                expect(row.plannedAs, row.bufferType).toBe("CPU");
                expect(ram.notes.join(" "), row.bufferType).toContain(`${row.bufferType} is`);
            }
            // and system RAM adds up to what the placement map's legend (the plan) says
            const plannedHost = Object.entries(planned).filter(([name]) => name === "CPU" || name.endsWith("_Host")).reduce((sum, [, bytes]) => sum + bytes, 0);
            expect(ram.plannedWeights).toBe(plannedHost);
            expect(Math.abs(ram.measuredWeights! - plannedHost)).toBeLessThanOrEqual(Math.max(4096, plannedHost * 0.01));
            // KV cache and scratch exactly: OATO keeps every layer's KV cache on the device, so Vulkan0 holds
            // 2 layers × K and V × 1024 cells × (128/4 × 2 KV heads) × 2 bytes (F16); its compute buffer is the one
            // llama.cpp's no-alloc simulation reserved for this plan (the plan's prediction after autoPlan's check)
            expect(gpu.measuredKv).toBe(2 * 2 * 1024 * 64 * 2);
            expect(gpu.plannedKv).toBe(gpu.measuredKv);
            expect(gpu.plannedScratch).toBeGreaterThan(0);
            expect(gpu.measuredScratch).toBe(gpu.plannedScratch);
            expect(ram.measuredKv).toBe(0);
            // system RAM's planned KV cache (none: every layer's is on the device) and compute buffers, from the plan's
            // no-alloc simulation, are what llama.cpp allocated (up to the pinned host buffer's alignment)
            expect(ram.plannedKv).toBe(0);
            expect(ram.plannedScratch).toBeGreaterThan(0);
            expect(Math.abs(ram.measuredScratch! - ram.plannedScratch!)).toBeLessThanOrEqual(4096);
            await shot("memory");
        });

        it("a malformed file dropped while a model is loaded → a sentence and a fix, details a click away; the copy is deleted, the loaded model stays", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.show("model");
            const model = new ModelPage(app.page);
            await model.dropFile(path.join(elsewhereDir, "hello.gguf"));
            const error = app.page.locator("[data-testid='model-error'][data-code='bad-magic']");
            await error.waitFor({timeout: 30_000});
            expect(await error.locator(".error-notice-title").textContent()).toBe("hello.gguf cannot be opened.");
            expect(await error.getByTestId("error-sentence").textContent()).toBe("This is not a GGUF file.");
            expect(await error.getByTestId("error-fix").textContent()).toMatch(/^Open the \.gguf model file itself/);
            const details = error.getByTestId("error-details");
            expect(await details.evaluate((element) => (element as HTMLDetailsElement).open)).toBe(false);
            await details.locator("summary").click();
            const detail = (await details.locator("pre").textContent()) ?? "";
            // the validator's own words, which the sentence above puts in plain terms
            expect(detail).toContain("GGUF signature");
            expect(detail).not.toContain(dataDir);
            expect(await uploadedCopies("hello")).toEqual([]);
            // the model in memory is untouched: its card, the library's "loaded" mark, the engine
            const stillLoaded = app.page.getByTestId("still-loaded");
            expect(await stillLoaded.getByTestId("model-name").textContent()).toBe("tiny-chat");
            await app.page.locator("[data-testid='library-item'][data-loaded='true']").filter({hasText: "tiny-chat"}).waitFor();
            expect(await shell.engineState()).toBe("ready");
            await shot("model-malformed-loaded");
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
            // this press's own progress: its profile step says the profile is reused. (Waiting for the previous
            // result to leave raced a fast job: with the profile cached, it can finish between two polls.)
            await expect.poll(() => offload.stepDetail("profile"), {timeout: 60_000}).toContain("reusing this machine's profile");
            await offload.waitForResult();
            await shell.waitForEngineState("ready");
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
            // with the conversation saved before this run
            expect(await chat.conversationCount()).toBe(3);
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
                // the exported report speaks the app's language: the same strategy colours, "1 repeat"
                const html = (await bench.download("html")).text;
                const reportColor = /<span class="dot" style="background:#([0-9a-f]{6})"><\/span>optimal</.exec(html)?.[1];
                expect(reportColor, "optimal's colour in the report").toBeDefined();
                const rgb = `rgb(${[0, 2, 4].map((at) => parseInt(reportColor!.slice(at, at + 2), 16)).join(", ")})`;
                const appColor = await app.page.locator("[data-testid='bench-strategy-optimal'] .swatch")
                    .evaluate((element) => getComputedStyle(element).backgroundColor);
                expect(appColor).toBe(rgb);
                expect(html).toContain("1 repeat per point");
                expect(html).not.toMatch(/\b1 repeats\b|issue \d|seed 0/);
            }
            // the chat model is loaded again once the benchmark gives the engine back
            await shell.waitForEngineState("ready", 60_000);
        });

        it("the model library: Unload ejects the loaded model, Load brings it back as it was loaded", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.show("model");
            const loadedItem = app.page.locator("[data-testid='library-item'][data-loaded='true']");
            const modelPath = await loadedItem.getAttribute("data-path");
            expect(await loadedItem.textContent()).toContain("Auto-offload (oato)");
            await loadedItem.getByTestId("library-unload").click();
            await shell.waitForEngineState("idle");
            await expect.poll(() => app.page.getByTestId("loaded-now").textContent()).toContain("No model loaded");
            const item = app.page.locator(`[data-testid='library-item'][data-path='${modelPath}']`);
            expect(await item.getAttribute("data-loaded")).toBe("false");
            await item.getByTestId("library-load").click();
            await shell.waitForEngineState("ready", 120_000);
            await app.page.locator(`[data-testid='library-item'][data-path='${modelPath}'][data-loaded='true']`).waitFor();
            expect(await app.page.getByTestId("loaded-now").textContent()).toContain("tiny-chat");
            await shot("model-library");
            await shell.show("offload");
            expect(await app.page.getByTestId("plan-strategy").textContent()).toBe("oato");
        });

        it("the Server screen: on → a client's chat completion is answered with the key and refused without it; off again", async () => {
            markFailure();
            const shell = new AppShell(app.page);
            await shell.show("server");
            const server = new ServerPage(app.page);
            // any free port: the test must not depend on 8080 being free
            await server.setPort(0);
            await server.setEnabled(true);
            await server.waitForStatus("serving");
            const url = await server.url();
            expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/v1$/);
            const key = await server.key();
            expect(await server.curl()).toContain(url);
            expect((await fetch(`${url}/models`)).status).toBe(401);
            const response = await fetch(`${url}/chat/completions`, {
                method: "POST", headers: {"Authorization": `Bearer ${key}`, "Content-Type": "application/json"},
                body: JSON.stringify({messages: [{role: "user", content: "Hello"}], max_tokens: 8, temperature: 0})
            });
            expect(response.status).toBe(200);
            const completion = await response.json() as {choices: {message: {role: string}}[]; usage: {prompt_tokens: number}};
            expect(completion.choices[0]?.message.role).toBe("assistant");
            expect(completion.usage.prompt_tokens).toBeGreaterThan(0);
            // the screen lists both, newest first: the answered completion, then the refused key
            await app.page.locator("[data-testid='served-requests'][data-count='2']").waitFor({timeout: 10_000});
            expect(await server.requests()).toEqual([
                {status: "200", text: expect.stringContaining("/v1/chat/completions")},
                {status: "401", text: expect.stringContaining("wrong or missing key")}
            ]);
            await shot("server");

            // a key for one client program: it works as soon as it is listed, and stops working once revoked
            const editorKey = await server.addClientKey("editor");
            expect(editorKey).toMatch(/^tw-[A-Za-z0-9_-]{32}$/);
            expect(editorKey).not.toBe(key);
            await server.waitForStatus("serving");
            const asEditor = () => fetch(`${url}/models`, {headers: {"Authorization": `Bearer ${editorKey}`}});
            expect((await asEditor()).status).toBe(200);
            await server.revokeClientKey("editor");
            await server.waitForStatus("serving");
            expect(await server.clientKeyNames()).toEqual([]);
            expect((await asEditor()).status).toBe(401);
            expect((await fetch(`${url}/models`, {headers: {"Authorization": `Bearer ${key}`}})).status).toBe(200);
            await server.setEnabled(false);
            await server.waitForStatus("off");
            await shell.waitForEngineState("ready");
        });
    });
}
