/**
 * The chat flow and the keyboard, web mode, at 1440×900 and 1024×700: an edit sent with Enter replaces the message and
 * its reply; "+ New chat" starts from the default settings; the message box has the focus on entering Chat and after
 * choosing or creating a chat, and after the model card's Start chatting; Esc closes the settings panel before it stops a reply; the sidebar says a reply is being
 * written; a whole table header cell sorts.
 */
import {mkdtemp} from "node:fs/promises";
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

/** The data-testid of the element that has the keyboard focus ("" for none). */
async function focusedTestId(page: Page): Promise<string> {
    return await page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? "");
}

const missing = requiredOrSkip("the chat-flow e2e run", chromiumMissingReason());
describe.skipIf(missing != null)("web: chat flow and keyboard", () => {
    let server: WebApp;
    let modelPath: string;

    beforeAll(async () => {
        const modelsDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-flow-models-"));
        modelPath = path.join(modelsDir, "tiny-chat.gguf");
        await makeSyntheticModel(modelPath, {preset: "tiny", name: "tiny-chat"});
        server = await startWebApp(await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-flow-data-")), ["--model-dir", modelsDir], {}, {sharedCache: true});
        const browser = await openBrowser();
        try {
            await browser.page.goto(server.url);
            const shell = new AppShell(browser.page);
            await shell.waitForEngineState("idle");
            await shell.show("model");
            await new ModelPage(browser.page).openPath(modelPath);
            await new ModelPage(browser.page).card.waitFor({timeout: 30_000});
            await shell.show("offload");
            const offload = new OffloadPage(browser.page);
            await offload.setContextSize(1024);
            await offload.setStrategy("oato");
            await offload.run();
            await offload.waitForResult();
            await shell.waitForEngineState("ready");
            // the first reply that evaluates a batch of a new shape waits for llvmpipe to compile that Vulkan pipeline:
            // 30–90 s on a loaded 2-core machine (seen at 47 / 55 prompt tokens of a second exchange). The exchanges
            // the tests make are made once here, so the timeouts below measure the app, not first-use compilation.
            await shell.show("chat");
            const chat = new ChatPage(browser.page);
            await chat.newConversation();
            await chat.setOptions({maxTokens: 8, temperature: 0});
            await chat.send("The first question.");
            await chat.waitForReplyCount(1, 300_000);
            await chat.send("The second question.");
            await chat.waitForReplyCount(2, 300_000);
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
            let chat: ChatPage;

            beforeAll(async () => {
                browser = await openBrowser({viewport});
                page = browser.page;
                await page.goto(server.url);
                shell = new AppShell(page);
                chat = new ChatPage(page);
                await shell.waitForEngineState("ready");
            });
            afterEach(async (context) => {
                if (context.task.result?.state === "fail") {
                    failed = `flow-${label}-${context.task.name}`;
                    await keepScreenshot(page, `failed-${failed.replace(/[^A-Za-z0-9_-]+/g, "-")}`);
                    console.log(`[flow] the app's last output:\n${server.output().slice(-4000)}`);
                }
            });
            afterAll(async () => {
                await browser?.close(failed);
            });

            it("the message box has the focus on entering Chat, after + New chat and after choosing a chat", async () => {
                await shell.show("model");
                await shell.show("chat");
                expect(await focusedTestId(page), "entering Chat").toBe("composer-input");
                await page.keyboard.type("typed at once");
                expect(await page.getByTestId("composer-input").inputValue()).toBe("typed at once");
                await page.getByTestId("composer-input").fill("");

                await chat.newConversation();
                await expect.poll(() => focusedTestId(page), {message: "after + New chat"}).toBe("composer-input");
                await chat.newConversation();
                await page.getByTestId("conversation-item").nth(1).click();
                await expect.poll(() => focusedTestId(page), {message: "after choosing a chat"}).toBe("composer-input");
                await page.getByTestId("conversation-item").first().focus();
                await page.keyboard.press("Enter");
                await expect.poll(() => focusedTestId(page), {message: "after choosing a chat with Enter"}).toBe("composer-input");
            });

            it("the opened model's card comes first, and once that model is ready its one action is Start chatting, into the message box", async () => {
                await shell.show("model");
                const model = new ModelPage(page);
                await model.openPath(modelPath);
                await model.card.waitFor({timeout: 30_000});
                // the card shown before re-inspecting the same path leaves for a moment: poll until the new one is laid out
                const top = async (testId: string) => (await page.getByTestId(testId).boundingBox())?.y ?? Number.NaN;
                await expect.poll(async () => await top("model-card") < await top("model-library"), {message: "the card above the library", timeout: 30_000})
                    .toBe(true);
                expect(await page.getByTestId("go-offload").count(), "no second load offered for the loaded model").toBe(0);
                await page.getByTestId("start-chatting").click();
                await expect.poll(() => focusedTestId(page), {message: "after Start chatting"}).toBe("composer-input");
            });

            it("+ New chat starts from the default settings, not the system prompt and sampling of the chat before", async () => {
                await shell.show("chat");
                await chat.newConversation();
                const defaults = {maxTokens: await page.getByTestId("max-tokens").inputValue(), temperature: await page.getByTestId("temperature").inputValue()};
                await page.getByTestId("open-chat-settings").click();
                await page.getByTestId("system-prompt").fill("You are a pirate.");
                await page.getByTestId("setting-topK").fill("7");
                await page.getByTestId("system-prompt").blur();
                await chat.setOptions({maxTokens: 12, temperature: 1.3});
                await expect.poll(() => page.getByTestId("open-chat-settings").textContent()).toBe("Settings · system prompt set");

                await chat.newConversation();
                await page.getByTestId("chat-settings").waitFor();
                expect(await page.getByTestId("system-prompt").inputValue(), "the new chat's system prompt").toBe("");
                expect(await page.getByTestId("setting-topK").inputValue(), "the new chat's top-k").toBe("");
                expect(await page.getByTestId("max-tokens").inputValue()).toBe(defaults.maxTokens);
                expect(await page.getByTestId("temperature").inputValue()).toBe(defaults.temperature);
                expect(await page.getByTestId("open-chat-settings").textContent()).toBe("More settings");
                await keepScreenshot(page, `web-${label}-new-chat-defaults`);

                // the chat before keeps its own
                await page.getByTestId("conversation-item").nth(1).click();
                await expect.poll(() => page.getByTestId("system-prompt").inputValue()).toBe("You are a pirate.");
                expect(await page.getByTestId("temperature").inputValue()).toBe("1.3");
                await page.getByTestId("chat-settings-close").click();
            });

            it("Esc closes the settings panel first and stops a streaming reply only with the next press", async () => {
                await shell.show("chat");
                await chat.newConversation();
                expect(await page.getByTestId("chat-settings").count(), "the panel starts closed").toBe(0);
                await page.getByTestId("open-chat-settings").click();
                await page.getByTestId("chat-settings").waitFor();
                await page.keyboard.press("Escape");
                await page.getByTestId("chat-settings").waitFor({state: "detached", timeout: 2000});
                expect(await focusedTestId(page), "the focus goes back to the message box").toBe("composer-input");

                await chat.setOptions({maxTokens: 2000, temperature: 0});
                await chat.send("Write a very long story.");
                await page.waitForFunction(() => Number(document.querySelector("[data-testid='message-streaming']")?.getAttribute("data-tokens") ?? 0) >= 2,
                    undefined, {timeout: 60_000});
                // the sidebar says a reply is being written, not only "Model ready"
                expect(await page.getByTestId("sidebar-activity").first().textContent()).toMatch(/^Writing a reply · \d+ tokens$/);
                await page.getByTestId("open-chat-settings").click();
                await page.getByTestId("chat-settings").waitFor();
                await page.keyboard.press("Escape");
                await page.getByTestId("chat-settings").waitFor({state: "detached", timeout: 2000});
                expect(await page.getByTestId("message-streaming").getAttribute("data-phase"), "the reply still streams").toBe("reply");
                expect(await page.getByTestId("stop").isEnabled(), "and is not being stopped").toBe(true);
                await page.keyboard.press("Escape");
                await chat.waitForReplyCount(1, 30_000);
                expect(await chat.lastAssistantStopped()).toBe("user");
                await page.getByTestId("sidebar-activity").waitFor({state: "detached", timeout: 10_000});
            });

            it("an edited message sent with Enter replaces the message and everything after it", async () => {
                await shell.show("chat");
                await chat.newConversation();
                await chat.setOptions({maxTokens: 8, temperature: 0});
                await chat.send("The first question.");
                await chat.waitForReplyCount(1);
                await chat.send("The second question.");
                await chat.waitForReplyCount(2);
                const oldReply = await chat.assistantMessages().first().locator(".message-body").textContent();

                // the last message, edited right after its reply came
                await chat.userMessages().nth(1).getByTestId("edit").click();
                await page.getByTestId("edit-input").fill("The second question, edited.");
                await page.keyboard.press("Enter");
                await page.getByTestId("edit-input").waitFor({state: "detached"});
                await chat.waitForReplyCount(2);
                expect(await page.getByTestId("chat-error").allTextContents(), "errors shown").toEqual([]);
                expect(await chat.userMessages().allTextContents()).toEqual([
                    expect.stringContaining("The first question."), expect.stringContaining("The second question, edited.")]);

                // the first message: its reply and the whole second exchange go
                await chat.userMessages().first().getByTestId("edit").click();
                await page.getByTestId("edit-input").fill("Only this question now.");
                await page.keyboard.press("Enter");
                await chat.waitForReplyCount(1);
                await page.waitForFunction(() => document.querySelector("[data-testid='message-streaming']") == null);
                expect(await page.getByTestId("chat-error").allTextContents(), "errors shown").toEqual([]);
                const shown = async () => await page.locator("[data-testid='messages'] > article").evaluateAll((articles) =>
                    articles.map((article) => `${article.getAttribute("data-testid")}: ${article.querySelector(".message-body")?.textContent ?? ""}`));
                const afterEdit = await shown();
                expect(afterEdit).toHaveLength(2);
                expect(afterEdit[0]).toBe("message-user: Only this question now.");
                expect(afterEdit[1]).toMatch(/^message-assistant: /);
                expect(afterEdit.join("\n")).not.toContain("The first question.");
                // what the host saved: the same two messages after a reload
                await page.reload();
                await shell.waitForEngineState("ready");
                await page.getByTestId("message-user").first().waitFor();
                expect(await shown()).toEqual(afterEdit);
                expect(oldReply).not.toBeNull();
            });

            it("the whole header cell of the tensor table sorts it, and the cell says how", async () => {
                await shell.show("model");
                const model = new ModelPage(page);
                // the tensor table belongs to an opened (inspected) file, not to the card of the model loaded
                await model.openPath(modelPath);
                await page.getByTestId("tensor-table").waitFor({timeout: 30_000});
                const header = page.locator("[data-testid='tensor-table'] th").filter({has: page.getByTestId("sort-name")});
                expect(await header.getAttribute("aria-sort")).toBe("none");
                // the cell's far edge, away from the word
                await header.scrollIntoViewIfNeeded();
                const box = (await header.boundingBox())!;
                await page.mouse.click(box.x + box.width - 3, box.y + box.height - 3);
                await expect.poll(() => header.getAttribute("aria-sort")).toBe("ascending");
                const names = await page.locator("[data-testid='tensor-row'] td:first-child").allTextContents();
                expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, undefined, {numeric: true})));
                // from the keyboard too: the control is a button
                await page.getByTestId("sort-name").focus();
                await page.keyboard.press("Enter");
                await expect.poll(() => header.getAttribute("aria-sort")).toBe("descending");
                expect(await page.locator("[data-testid='tensor-table'] th[aria-sort='none']").count()).toBeGreaterThan(0);
                await keepScreenshot(page, `web-${label}-tensor-sort`);
            });
        });
    }
});
