/**
 * A chat longer than the loaded context, web mode at 1440×900: saved before the setting existed, it keeps answering
 * (truncate the middle) with a quiet note of how many earlier messages the model did not see; "When the context is
 * full" set to Stop refuses the next reply and offers "Reload with a larger context", which reloads through the model's
 * last Auto-offload with twice the context, after which the same chat is answered whole.
 */
import {mkdir, mkdtemp, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../../electron/engine/writer/makeSyntheticModel.js";
import {requiredOrSkip} from "../../electron/engine/testing/requiredOrSkip.js";
import {AppShell} from "../pages/AppShell.js";
import {ChatPage} from "../pages/ChatPage.js";
import {ModelPage} from "../pages/ModelPage.js";
import {OffloadPage} from "../pages/OffloadPage.js";
import {chromiumMissingReason, keepScreenshot, openBrowser, VIEWPORTS, type BrowserSession} from "../support/browser.js";
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

const missing = requiredOrSkip("the context overflow e2e run", chromiumMissingReason());
describe.skipIf(missing != null)("web: a chat longer than the context", () => {
    let server: WebApp;
    let browser: BrowserSession;
    let failed: string | undefined;
    let modelPath: string;

    beforeAll(async () => {
        const scratch = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-overflow-"));
        const modelsDir = path.join(scratch, "models");
        await mkdir(modelsDir);
        modelPath = path.join(modelsDir, "tiny-chat.gguf");
        // trained for 4096 tokens (the writer's default): a larger context than the loaded one can be offered
        await makeSyntheticModel(modelPath, {preset: "tiny", name: "tiny-chat"});
        const dataDir = path.join(scratch, "data");
        await writeLongChat(dataDir);
        server = await startWebApp(dataDir, ["--model-dir", modelsDir], {TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1"});
        browser = await openBrowser({viewport: VIEWPORTS[0]});
    }, 300_000);
    afterAll(async () => {
        await browser?.close(failed);
        await server?.stop();
    });

    it("keeps answering with a note, refuses under Stop, and answers whole after a reload with a larger context", async () => {
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

        // Stop: the next reply is refused, with the reload offered in the error
        await page.getByTestId("open-chat-settings").click();
        const policy = page.getByTestId("setting-contextOverflow");
        expect(await policy.inputValue()).toBe("truncateMiddle");
        await policy.selectOption("stop");
        await page.getByTestId("chat-settings-close").click();
        await chat.send("and once more?");
        const error = page.getByTestId("chat-error");
        await error.waitFor({timeout: 120_000});
        expect(await error.textContent()).toMatch(/^The conversation \(\d+ tokens\) does not fit in the context \(512 tokens\)/);
        await keepScreenshot(page, "web-context-overflow-stop");

        // the reload goes through the last Auto-offload with twice the context; then the whole chat fits
        await error.getByTestId("reload-larger-context").click();
        // loaded with 1024 tokens, the next step up is offered
        await error.getByTestId("reload-larger-context").filter({hasText: "Reload with a 2048-token context"}).waitFor({timeout: 300_000});
        await shell.waitForEngineState("ready");
        const replies = await chat.assistantMessages().count();
        await chat.send("and now, whole?");
        await chat.waitForReplyCount(replies + 1, 300_000);
        expect(await chat.assistantMessages().last().getByTestId("left-out-note").count()).toBe(0);
        expect(await chat.assistantMessages().last().getByTestId("message-context").textContent()).toMatch(/ \/ 1024$/);
        failed = undefined;
    }, 900_000);
});
