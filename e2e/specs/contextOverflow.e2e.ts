/**
 * A chat longer than the loaded context, web mode: saved before the setting existed, it keeps answering (truncate the
 * middle) with a quiet note of how many earlier messages the model did not see; "When the context is full" set to Stop
 * refuses the next reply, at 1440×900 and again through Retry at 1024×700, each time with the error standing where the
 * reply would be (no empty reply shown or saved) and "Reload with a larger context" offered, which reloads through the
 * model's last Auto-offload with twice the context, after which Retry answers the refused message with the whole chat.
 */
import {mkdir, mkdtemp, readFile, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../../electron/engine/writer/makeSyntheticModel.js";
import {requiredOrSkip} from "../../electron/engine/testing/requiredOrSkip.js";
import {AppShell} from "../pages/AppShell.js";
import {ChatPage} from "../pages/ChatPage.js";
import {ModelPage} from "../pages/ModelPage.js";
import {OffloadPage} from "../pages/OffloadPage.js";
import type {Page} from "playwright-core";
import type {Conversation} from "../../electron/contract/ipc.js";
import {chromiumMissingReason, keepScreenshot, openBrowser, viewportLabel, VIEWPORTS, type BrowserSession} from "../support/browser.js";
import {startWebApp, type WebApp} from "../support/webApp.js";

/** Exchanges of the saved chat: about 700 prompt tokens (100 each), more than a 512-token context and less than 1024. */
const EXCHANGES = 7;

/** A conversation file as a version without context overflow settings wrote it. */
async function writeLongChat(dataDir: string): Promise<void> {
    const dir = path.join(dataDir, "conversations");
    await mkdir(dir, {recursive: true, mode: 0o700});
    const messages = Array.from({length: 2 * EXCHANGES}, (_, index) => ({
        id: `m${index}`, role: index % 2 === 0 ? "user" : "assistant", createdAt: 1_700_000_000_000 + index,
        text: Array.from({length: 10}, (_unused, word) => `m${index}w${word}`).join(" ")
    }));
    await writeFile(path.join(dir, "long-chat.json"), JSON.stringify({
        id: "long-chat", title: "Long chat", updatedAt: 1_700_000_000_000, messageCount: messages.length, messages,
        settings: {maxTokens: 8, temperature: 0}
    }), {mode: 0o600});
}

/** The saved chat as the host wrote it to disk (what an export and a restart read). */
async function savedChat(dataDir: string): Promise<Conversation> {
    return JSON.parse(await readFile(path.join(dataDir, "conversations", "long-chat.json"), "utf8")) as Conversation;
}

/**
 * A refused reply leaves no reply: the user's `message` is the last one shown and saved, no empty or "Stopped" reply
 * is there, and the error with its Retry follows the message, in view without scrolling.
 */
async function expectRefusalInPlaceOfReply(page: Page, dataDir: string, message: string, replies: number): Promise<void> {
    const error = page.getByTestId("chat-error");
    const retry = error.getByTestId("chat-retry");
    await retry.waitFor({timeout: 10_000});
    const placed = await error.evaluate((element) => {
        const box = element.getBoundingClientRect();
        const retryBox = element.querySelector("[data-testid='chat-retry']")!.getBoundingClientRect();
        const transcript = document.querySelector("[data-testid='messages']")!.getBoundingClientRect();
        return {
            before: element.previousElementSibling?.getAttribute("data-testid"),
            beforeText: element.previousElementSibling?.textContent ?? "",
            inView: box.top >= transcript.top - 1 && retryBox.bottom <= transcript.bottom + 1 && retryBox.bottom <= window.innerHeight
        };
    });
    expect(placed.before, "the error follows the user's message").toBe("message-user");
    expect(placed.beforeText).toContain(message);
    expect(placed.inView, "the error and its Retry are in view").toBe(true);
    const chat = new ChatPage(page);
    expect(await chat.assistantMessages().count()).toBe(replies);
    expect(await page.getByTestId("stopped-user").count(), "no reply says Stopped").toBe(0);
    const saved = await savedChat(dataDir);
    expect(saved.messages.at(-1)).toMatchObject({role: "user", text: message});
    expect(saved.messages.filter((stored) => stored.role === "assistant")).toHaveLength(replies);
    expect(saved.messages.filter((stored) => stored.role === "assistant" && stored.text === ""), "no empty reply saved").toEqual([]);
}

const missing = requiredOrSkip("the context overflow e2e run", chromiumMissingReason());
describe.skipIf(missing != null)("web: a chat longer than the context", () => {
    let server: WebApp;
    let browser: BrowserSession;
    let failed: string | undefined;
    let modelPath: string;
    let dataDir: string;

    beforeAll(async () => {
        const scratch = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-overflow-"));
        const modelsDir = path.join(scratch, "models");
        await mkdir(modelsDir);
        modelPath = path.join(modelsDir, "tiny-chat.gguf");
        // trained for 4096 tokens (the writer's default): a larger context than the loaded one can be offered
        await makeSyntheticModel(modelPath, {preset: "tiny", name: "tiny-chat"});
        dataDir = path.join(scratch, "data");
        await writeLongChat(dataDir);
        server = await startWebApp(dataDir, ["--model-dir", modelsDir], {TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1"}, {sharedCache: true});
        browser = await openBrowser({viewport: VIEWPORTS[0]});
    }, 300_000);
    afterAll(async () => {
        await browser?.close(failed);
        await server?.stop();
    });

    it("keeps answering with a note, refuses under Stop without an empty reply, and Retry answers whole after a reload with a larger context", async () => {
        const page = browser.page;
        failed = "context-overflow";
        await page.goto(server.url);
        const shell = new AppShell(page);
        await shell.waitForEngineState("idle", 120_000);
        await shell.show("model");
        await new ModelPage(page).openPath(modelPath);
        await new ModelPage(page).card.waitFor({timeout: 30_000});
        await shell.show("offload");
        const offload = new OffloadPage(page);
        await offload.setContextSize(512);
        await offload.run();
        await offload.waitForResult(300_000);
        await shell.waitForEngineState("ready");

        await shell.show("chat");
        const chat = new ChatPage(page);
        await page.getByTestId("conversation-item").filter({hasText: "Long chat"}).click();
        await expect.poll(() => chat.assistantMessages().count()).toBe(EXCHANGES);
        await chat.send("and now?");
        await chat.waitForReplyCount(EXCHANGES + 1, 300_000);
        const reply = chat.assistantMessages().last();
        const note = (await reply.getByTestId("left-out-note").textContent()) ?? "";
        expect(note).toMatch(/^\d+ earlier messages were outside the model's context$/);
        const leftOut = Number(note.split(" ")[0]);
        expect(leftOut % 2).toBe(0);
        expect(leftOut).toBeGreaterThan(0);
        expect(leftOut).toBeLessThan(2 * EXCHANGES);
        expect(await reply.getByTestId("reload-larger-context").textContent()).toBe("Reload with a 1024-token context");
        // the earlier replies, which saw the whole chat, say nothing
        expect(await page.getByTestId("left-out-note").count()).toBe(1);
        await keepScreenshot(page, "web-context-overflow-note");

        // Stop: the next reply is refused, with the reload offered in the error, which stands in place of the reply
        await page.getByTestId("open-chat-settings").click();
        const policy = page.getByTestId("setting-contextOverflow");
        expect(await policy.inputValue()).toBe("truncateMiddle");
        await policy.selectOption("stop");
        await page.getByTestId("chat-settings-close").click();
        await chat.send("and once more?");
        const error = page.getByTestId("chat-error");
        await error.waitFor({timeout: 120_000});
        const refusal = /^The conversation \(\d+ tokens\) does not fit in the context \(512 tokens\)/;
        expect(await error.textContent()).toMatch(refusal);
        const replies = EXCHANGES + 1;
        await expectRefusalInPlaceOfReply(page, dataDir, "and once more?", replies);
        await keepScreenshot(page, `web-${viewportLabel(VIEWPORTS[0]!)}-context-overflow-stop`);

        // in a small window, Retry asks again: refused the same way, still without a reply shown or saved
        await page.setViewportSize(VIEWPORTS[1]!);
        await error.evaluate((element) => element.setAttribute("data-seen", ""));
        await error.getByTestId("chat-retry").click();
        const again = page.locator("[data-testid='chat-error']:not([data-seen])");
        await again.waitFor({timeout: 120_000});
        expect(await again.textContent()).toMatch(refusal);
        await expectRefusalInPlaceOfReply(page, dataDir, "and once more?", replies);
        await keepScreenshot(page, `web-${viewportLabel(VIEWPORTS[1]!)}-context-overflow-stop`);

        // the reload goes through the last Auto-offload with twice the context; then Retry answers with the whole chat
        await error.getByTestId("reload-larger-context").click();
        // loaded with 1024 tokens, the next step up is offered
        await error.getByTestId("reload-larger-context").filter({hasText: "Reload with a 2048-token context"}).waitFor({timeout: 300_000});
        await shell.waitForEngineState("ready");
        await error.getByTestId("chat-retry").click();
        await chat.waitForReplyCount(replies + 1, 300_000);
        expect(await error.count(), "the answered message's error is gone").toBe(0);
        expect(await chat.assistantMessages().last().getByTestId("left-out-note").count()).toBe(0);
        expect(await chat.assistantMessages().last().getByTestId("message-context").textContent()).toMatch(/ \/ 1024$/);
        const saved = await savedChat(dataDir);
        expect(saved.messages.slice(-2).map((message) => message.role === "user" ? message.text : message.role)).toEqual(["and once more?", "assistant"]);
        failed = undefined;
    }, 900_000);
});
