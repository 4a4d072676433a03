/**
 * Conversations as files, and the search, web mode, at 1440×900 and 1024×700: among 300 saved conversations the
 * search box finds one by its title and one by a word deep in a reply (ignoring case, the match shown), and Esc brings
 * them all back; a real chat is exported as Markdown and JSON (browser downloads), the JSON export imported again as a
 * new conversation with the same messages, and a hand-edited file refused in one sentence with nothing added.
 */
import {mkdir, mkdtemp, readFile, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {Page} from "playwright-core";
import {afterAll, afterEach, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../../electron/engine/writer/makeSyntheticModel.js";
import {requiredOrSkip} from "../../electron/engine/testing/requiredOrSkip.js";
import {AppShell} from "../pages/AppShell.js";
import {ChatPage} from "../pages/ChatPage.js";
import {ModelPage} from "../pages/ModelPage.js";
import {OffloadPage} from "../pages/OffloadPage.js";
import {chromiumMissingReason, keepScreenshot, openBrowser, viewportLabel, VIEWPORTS, type BrowserSession} from "../support/browser.js";
import {startWebApp, type WebApp} from "../support/webApp.js";

const SAVED = 300;
const QUESTION = "Tell me about Zanzibar";

/** Conversation files as an earlier run of the app left them: `SAVED` chats, one with "Quetzal" deep in a reply. */
async function writeSavedConversations(dataDir: string): Promise<void> {
    const dir = path.join(dataDir, "conversations");
    await mkdir(dir, {recursive: true, mode: 0o700});
    for (let index = 0; index < SAVED; index++) {
        const id = `saved-${String(index).padStart(4, "0")}`;
        const reply = index === 137
            ? `${"Birds of the cloud forest are many. ".repeat(20)}The resplendent Quetzal has long green tail feathers.`
            : `Reply number ${index} about gardening, cooking and the weather.`;
        const messages = [
            {id: "u", role: "user", text: `Question ${index} about everyday things`, createdAt: 1_700_000_000_000 + index},
            {id: "a", role: "assistant", text: reply, createdAt: 1_700_000_000_500 + index}
        ];
        await writeFile(path.join(dir, `${id}.json`), JSON.stringify({
            id, title: `Saved chat ${index}`, updatedAt: 1_700_000_000_000 + index, messageCount: 2, messages
        }), {mode: 0o600});
    }
}

/** Clicks `button` and returns the name and text of the file the browser downloads. */
async function downloadOf(page: Page, testId: string): Promise<{name: string; text: string}> {
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId(testId).click()]);
    const file = await download.path();
    return {name: download.suggestedFilename(), text: await readFile(file, "utf8")};
}

async function titles(page: Page): Promise<string[]> {
    return await page.locator("[data-testid=conversation-item] .conversation-title").allInnerTexts();
}

const missing = requiredOrSkip("the conversation files e2e run", chromiumMissingReason());
describe.skipIf(missing != null)("web: export, import and search of conversations", () => {
    let server: WebApp;
    let scratch: string;

    beforeAll(async () => {
        scratch = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-files-"));
        const modelsDir = path.join(scratch, "models");
        await mkdir(modelsDir);
        const modelPath = path.join(modelsDir, "tiny-chat.gguf");
        await makeSyntheticModel(modelPath, {preset: "tiny", name: "tiny-chat"});
        const dataDir = path.join(scratch, "data");
        await writeSavedConversations(dataDir);
        // the engine on the CPU at one thread (as the Get a model spec): the profile takes ~20 s, replies are quick
        server = await startWebApp(dataDir, ["--model-dir", modelsDir], {TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1"}, {sharedCache: true});
        const browser = await openBrowser();
        try {
            const page = browser.page;
            await page.goto(server.url);
            const shell = new AppShell(page);
            await shell.waitForEngineState("idle", 120_000);
            await shell.show("model");
            await new ModelPage(page).openPath(modelPath);
            await new ModelPage(page).card.waitFor({timeout: 30_000});
            await shell.show("offload");
            const offload = new OffloadPage(page);
            await offload.setContextSize(1024);
            await offload.run();
            await offload.waitForResult(300_000);
            await shell.waitForEngineState("ready");
            await shell.show("chat");
            const chat = new ChatPage(page);
            await chat.newConversation();
            await chat.setOptions({maxTokens: 8, temperature: 0});
            await chat.send(QUESTION);
            await chat.waitForReplyCount(1, 300_000);
        } finally {
            await browser.close();
        }
    }, 800_000);
    afterAll(async () => {
        await server?.stop();
    });

    for (const viewport of VIEWPORTS) {
        const label = viewportLabel(viewport);
        describe(label, () => {
            let browser: BrowserSession;
            let failed: string | undefined;
            let page: Page;
            let shell: AppShell;

            beforeAll(async () => {
                browser = await openBrowser({viewport});
                page = browser.page;
                await page.goto(server.url);
                shell = new AppShell(page);
                await shell.waitForEngineState("ready", 60_000);
                await shell.show("chat");
            });
            afterEach(async (context) => {
                if (context.task.result?.state === "fail") {
                    failed = `files-${label}-${context.task.name}`;
                    await keepScreenshot(page, `failed-${failed.replace(/[^A-Za-z0-9_-]+/g, "-")}`);
                    console.log(`[files] the app's last output:\n${server.output().slice(-4000)}`);
                }
            });
            afterAll(async () => {
                await browser?.close(failed);
            });

            it("finds a conversation by its title and by a word deep in a reply, ignoring case; Esc shows them all again", async () => {
                const all = await page.getByTestId("conversation-item").count();
                expect(all).toBeGreaterThan(SAVED);
                const search = page.getByTestId("conversation-search");
                await search.fill("zANZIBAR");
                await expect.poll(() => titles(page)).toContain(QUESTION);
                expect((await titles(page)).every((title) => title === QUESTION), "only chats about it").toBe(true);
                expect(await page.getByTestId("search-match").first().innerText()).toBe("title matches");

                await search.fill("quetzal");
                await expect.poll(() => titles(page)).toEqual(["Saved chat 137"]);
                const match = page.getByTestId("search-match");
                expect(await match.locator("mark").innerText()).toBe("Quetzal");
                expect(await match.innerText()).toContain("The resplendent Quetzal has long");
                await keepScreenshot(page, `web-${label}-conversation-search`);

                await search.fill("no chat says this");
                await page.getByTestId("search-empty").waitFor();
                await search.press("Escape");
                expect(await search.inputValue()).toBe("");
                await expect.poll(() => page.getByTestId("conversation-item").count()).toBe(all);
            });

            it("exports the chat as Markdown and JSON, imports the JSON as a new conversation, and refuses an edited file", async () => {
                await page.getByTestId("conversation-search").fill("zanzibar");
                await expect.poll(() => titles(page)).toContain(QUESTION);
                await page.getByTestId("conversation-item").last().click();
                await expect.poll(() => page.getByTestId("conversation-title").innerText()).toBe(QUESTION);
                await page.getByTestId("conversation-search").press("Escape");
                const reply = await page.getByTestId("message-assistant").first().innerText();

                const markdown = await downloadOf(page, "export-markdown");
                expect(markdown.name).toBe(`${QUESTION}.md`);
                expect(markdown.text.startsWith(`# ${QUESTION}\n`)).toBe(true);
                expect(markdown.text).toContain("- Model: tiny-chat.gguf\n");
                expect(markdown.text).toContain(`## User\n\n${QUESTION}\n`);
                expect(markdown.text).toContain("## Assistant (tiny-chat.gguf)\n");

                const json = await downloadOf(page, "export-json");
                expect(json.name).toBe(`${QUESTION}.json`);
                const file = JSON.parse(json.text) as {format: string; version: number; conversation: {messages: {role: string; text: string; model?: string}[]}};
                expect(file.format).toBe("tensorwise.conversation");
                expect(file.version).toBe(1);
                expect(file.conversation.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
                expect(file.conversation.messages[1]?.model).toBe("tiny-chat.gguf");

                const before = await page.getByTestId("conversation-item").count();
                const exported = path.join(scratch, `export-${label}.json`);
                await writeFile(exported, json.text);
                await page.getByTestId("import-conversation-file").setInputFiles(exported);
                await expect.poll(() => page.getByTestId("conversation-item").count()).toBe(before + 1);
                // the import is listed first and shown, with the same messages
                expect((await titles(page))[0]).toBe(QUESTION);
                await expect.poll(() => page.getByTestId("conversation-item").first().getAttribute("class")).toContain("active");
                await expect.poll(() => page.getByTestId("message-user").locator(".message-plain").allInnerTexts()).toEqual([QUESTION]);
                expect(await page.getByTestId("message-assistant").first().innerText()).toBe(reply);

                const edited = path.join(scratch, `edited-${label}.json`);
                await writeFile(edited, JSON.stringify({...file, version: 2}));
                await page.getByTestId("import-conversation-file").setInputFiles(edited);
                const refusal = page.getByTestId("conversation-list-error");
                await refusal.waitFor();
                expect(await refusal.innerText()).toBe("This file cannot be imported: it is version 2 of the conversation file, and this app reads version 1.");
                expect(await page.getByTestId("conversation-item").count()).toBe(before + 1);
                await keepScreenshot(page, `web-${label}-conversation-import-refused`);
            });
        });
    }
});
