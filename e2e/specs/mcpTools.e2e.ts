/**
 * Tools in the chat, web mode, with real MCP servers: the official server-filesystem (from npm, limited to a temp
 * folder) and a server that hangs (electron/host/tools/testing/lyingMcpServer.mjs), imported as an mcpServers JSON on
 * the Tools screen, enabled and started there. In a chat with the filesystem's list_allowed_directories on and the tool
 * choice "required", a random-weight model (carrying Qwen2.5's chat template, whose tool-call syntax llama.cpp's chat
 * layer parses) makes a call that is shown with its arguments, waits for Approve, runs, shows its result and is fed
 * back, and the model's next turn streams; Deny is told to the model and the chat goes on; a call to the hanging
 * server fails at its time limit, inline, and the chat goes on. No server process outlives the app: neither a normal
 * stop nor a SIGKILL of the app leaves one. Screenshots of each state go to test-results/screenshots/ (docs/app.md).
 */
import {readdirSync, readFileSync} from "node:fs";
import {mkdir, mkdtemp, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {requiredOrSkip} from "../../electron/engine/testing/requiredOrSkip.js";
import {makeSyntheticModel} from "../../electron/engine/writer/makeSyntheticModel.js";
import {AppShell} from "../pages/AppShell.js";
import {ChatPage} from "../pages/ChatPage.js";
import {ModelPage} from "../pages/ModelPage.js";
import {OffloadPage} from "../pages/OffloadPage.js";
import {ChatToolsPage, ToolsPage} from "../pages/ToolsPage.js";
import {chromiumMissingReason, keepScreenshot, openBrowser, type BrowserSession} from "../support/browser.js";
import {repoRoot} from "../support/paths.js";
import {startWebApp, type WebApp} from "../support/webApp.js";

const QWEN_TEMPLATE = path.join(repoRoot, "build/native/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja");
const FILESYSTEM = path.join(repoRoot, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const LYING = path.join(repoRoot, "electron/host/tools/testing/lyingMcpServer.mjs");

/** The pids of every process whose command line holds `marker` (the run's own temp folder). */
function processesWith(marker: string): number[] {
    const found: number[] = [];
    for (const entry of readdirSync("/proc")) {
        if (!/^\d+$/.test(entry) || Number(entry) === process.pid)
            continue;
        try {
            if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker))
                found.push(Number(entry));
        } catch {
            // gone meanwhile
        }
    }
    return found;
}

async function noneLeft(marker: string, withinMs: number): Promise<number[]> {
    const started = Date.now();
    for (;;) {
        const left = processesWith(marker);
        if (left.length === 0 || Date.now() - started > withinMs)
            return left;
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

const missing = requiredOrSkip("the MCP tools e2e run", chromiumMissingReason() ?? (process.platform !== "linux" ? "the process checks read /proc" : null));
describe.skipIf(missing != null)("web: MCP tools in the chat", () => {
    let server: WebApp;
    let browser: BrowserSession;
    let failed: string | undefined;
    let scratch: string;
    let folder: string;
    let modelPath: string;
    let dataDir: string;
    let modelsDir: string;

    beforeAll(async () => {
        scratch = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-mcp-"));
        modelsDir = path.join(scratch, "models");
        folder = path.join(scratch, "shared-folder");
        await mkdir(modelsDir);
        await mkdir(folder);
        await writeFile(path.join(folder, "notes.txt"), "Buy milk.\n");
        modelPath = path.join(modelsDir, "tiny-tools.gguf");
        // the shapes of the other specs' tiny model (their machine profile is reused), with a template that calls tools
        await makeSyntheticModel(modelPath, {preset: "tiny", name: "tiny-tools", chatTemplate: readFileSync(QWEN_TEMPLATE, "utf8"), addSpacePrefix: false});
        dataDir = path.join(scratch, "data");
        server = await startWebApp(dataDir, ["--model-dir", modelsDir], {TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1"}, {sharedCache: true});
        browser = await openBrowser();
    }, 300_000);
    afterAll(async () => {
        await browser?.close(failed);
        await server?.stop();
    });

    it("imports the servers, starts the filesystem server and shows its tools and schemas", async () => {
        failed = "mcp-tools-screen";
        const page = browser.page;
        await page.goto(server.url);
        const shell = new AppShell(page);
        await shell.waitForEngineState("idle", 120_000);
        await shell.show("tools");
        const tools = new ToolsPage(page);
        const added = await tools.import(JSON.stringify({mcpServers: {
            files: {command: process.execPath, args: [FILESYSTEM, folder]},
            slow: {command: process.execPath, args: [LYING, "--marker", folder], timeout: 2}
        }}));
        expect(added).toBe("Added, disabled: files, slow");
        await page.getByTestId("tools-import").locator("summary").click();
        // imported servers are disabled and not started
        expect(await tools.status("files")).toBe("stopped");
        expect(processesWith(folder)).toEqual([]);
        await tools.enable("files");
        await tools.enable("slow");
        await tools.start("files");
        expect(await tools.toolNames("files")).toEqual(expect.arrayContaining(["list_allowed_directories", "read_text_file", "write_file"]));
        await tools.server("files").locator("[data-tool='list_allowed_directories'] summary").click();
        expect(await tools.server("files").locator("[data-tool='list_allowed_directories'] [data-testid='tools-tool-schema']").textContent()).toContain('"type": "object"');
        await tools.start("slow");
        await page.locator("[data-screen='tools'] .screen").evaluate((screen) => screen.scrollTo(0, 0));
        await keepScreenshot(page, "web-tools");
        failed = undefined;
    }, 120_000);

    it("a forced call is shown, approved, run, its result shown and fed back, and the next turn streams; Deny goes on too", async () => {
        failed = "mcp-tools-approve";
        const page = browser.page;
        const shell = new AppShell(page);
        await shell.show("model");
        await new ModelPage(page).openPath(modelPath);
        await new ModelPage(page).card.waitFor({timeout: 30_000});
        await shell.show("offload");
        const offload = new OffloadPage(page);
        await offload.setContextSize(2048);
        await offload.run();
        await offload.waitForResult(300_000);
        await shell.waitForEngineState("ready");

        await shell.show("chat");
        const chat = new ChatPage(page);
        const calls = new ChatToolsPage(page);
        await chat.newConversation();
        // under the tool-call grammar random weights spend many tokens on the whitespace JSON allows: room for the call
        await chat.setOptions({maxTokens: 160, temperature: 0});
        await calls.turnOn("files", "list_allowed_directories", "required", async () => {
            await page.getByTestId("chat-tools").evaluate((section) => section.scrollIntoView({block: "start"}));
            await keepScreenshot(page, "web-chat-tool-settings");
        });
        await chat.send("Which folders can you read?");
        await calls.waitForLastCall("pending");
        const call = calls.calls().last();
        expect(await call.getAttribute("data-tool")).toBe("list_allowed_directories");
        expect((await call.getByTestId("tool-call-args").textContent() ?? "").replace(/\s/g, "")).toBe("{}");
        // the call waits: it has not run, and no reply streams meanwhile
        expect(await chat.streaming.count()).toBe(0);
        await keepScreenshot(page, "web-chat-tool-approval");
        // llama.cpp's parser may read more than one call in the round: each waits for its own answer
        expect(await calls.decideAll("approve")).toBeGreaterThanOrEqual(1);
        await calls.waitForLastCall("done");
        await chat.waitForReplyCount(2, 120_000);
        await call.getByTestId("tool-call-result").locator("summary").click();
        expect(await call.getByTestId("tool-call-result").textContent()).toContain(folder);
        // the next turn is its own reply with engine timing; its prompt held the call and its result
        const prompts = await page.getByTestId("message-prompt").allTextContents();
        const tokens = prompts.map((text) => Number(/prompt (\d+)/.exec(text)?.[1]));
        expect(tokens).toHaveLength(2);
        expect(tokens[1]).toBeGreaterThan(tokens[0]!);
        expect(await page.getByTestId("message-tool-tokens").first().textContent()).toMatch(/^tools \d+$/);
        expect((await chat.lastTiming()).ttftMs).toBeGreaterThan(0);
        await keepScreenshot(page, "web-chat-tool-result");

        await chat.send("And again?");
        await calls.waitForLastCall("pending");
        await calls.decideAll("deny");
        await calls.waitForLastCall("denied");
        await chat.waitForReplyCount(4, 120_000);
        expect(await calls.calls().last().getByTestId("tool-call-state").textContent()).toBe("denied");
        failed = undefined;
    }, 600_000);

    it("a call to a hanging server fails at its time limit, inline, and the chat goes on", async () => {
        failed = "mcp-tools-hang";
        const page = browser.page;
        const chat = new ChatPage(page);
        const calls = new ChatToolsPage(page);
        await chat.newConversation();
        // under the tool-call grammar random weights spend many tokens on the whitespace JSON allows: room for the call
        await chat.setOptions({maxTokens: 160, temperature: 0});
        await calls.turnOn("slow", "hang", "required");
        await chat.send("Wait for it");
        await calls.waitForLastCall("pending");
        await calls.decideAll("approve");
        await calls.waitForLastCall("running");
        await calls.waitForLastCall("failed", 30_000);
        expect(await calls.calls().last().getByTestId("tool-call-error").textContent()).toBe("the server did not answer within 2 s (the call's time limit, set on the Tools screen).");
        await chat.waitForReplyCount(2, 120_000);
        await keepScreenshot(page, "web-chat-tool-timeout");
        failed = undefined;
    }, 300_000);

    it("no server process outlives the app: neither a stop nor a SIGKILL of the app leaves one", async () => {
        failed = "mcp-tools-orphans";
        expect(processesWith(folder).length, "the servers run while the app does").toBeGreaterThan(0);
        await browser.close();
        await server.stop();
        expect(await noneLeft(folder, 5_000), "left after the app stopped").toEqual([]);

        // again, and this time the app is killed without a chance to stop anything
        server = await startWebApp(dataDir, ["--model-dir", modelsDir], {TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1"}, {sharedCache: true});
        browser = await openBrowser();
        const page = browser.page;
        await page.goto(server.url);
        const tools = new ToolsPage(page);
        await new AppShell(page).show("tools");
        await tools.start("files");
        await tools.start("slow");
        // each server and the guardian that holds its process group (electron/host/tools/mcpGuardian.ts)
        expect(processesWith(folder).length).toBeGreaterThanOrEqual(4);
        process.kill(server.pid, "SIGKILL");
        expect(await noneLeft(folder, 5_000), "left after the app was killed").toEqual([]);
        failed = undefined;
    }, 180_000);
});
