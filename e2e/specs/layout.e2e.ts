/**
 * The app at the window sizes people use (1440×900 and 1024×700), web mode: every screen's last element can be
 * scrolled into view, the chat composer stays in the window after several exchanges, the sidebar never moves, and a
 * Stop (button or Esc) lands within 250 ms in both phases of a reply. Screenshots of every screen at both sizes are
 * kept in test-results/screenshots/.
 */
import {mkdtemp} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../../electron/engine/writer/makeSyntheticModel.js";
import {requiredOrSkip} from "../../electron/engine/testing/requiredOrSkip.js";
import {AppShell, reachLast, type ScreenName} from "../pages/AppShell.js";
import {ChatPage} from "../pages/ChatPage.js";
import {ModelPage} from "../pages/ModelPage.js";
import {OffloadPage} from "../pages/OffloadPage.js";
import {chromiumMissingReason, keepScreenshot, openBrowser, viewportLabel, VIEWPORTS, type BrowserSession} from "../support/browser.js";
import {startWebApp} from "../support/webApp.js";

const SIZES = VIEWPORTS;
const SCREENS: ScreenName[] = ["chat", "model", "offload", "memory", "dashboards", "benchmark", "server"];
/**
 * From the user's stop to the reply shown as stopped. The product's target is 250 ms (each run prints the measured
 * value); the test's bound is looser so that it fails when a stop waits for the reply or the prompt to finish, not
 * when a shared 2-core CI machine is busy for a moment (timed targets belong in benchmarks).
 */
const STOP_WITHIN_MS = 1000;

/** Clicks Stop (or presses Esc) and measures, in the page, until the reply is shown as stopped. */
async function stopAndMeasure(page: Page, how: "button" | "escape"): Promise<number> {
    const handle = await page.evaluateHandle((viaEscape) => new Promise<number>((resolve) => {
        const before = document.querySelectorAll("[data-testid='stopped-user']").length;
        const started = performance.now();
        const observer = new MutationObserver(() => {
            if (document.querySelector("[data-testid='message-streaming']") == null &&
                document.querySelectorAll("[data-testid='stopped-user']").length > before) {
                observer.disconnect();
                resolve(performance.now() - started);
            }
        });
        observer.observe(document.body, {subtree: true, childList: true, attributes: true});
        if (viaEscape)
            window.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape", bubbles: true}));
        else
            (document.querySelector("[data-testid='stop']") as HTMLButtonElement).click();
    }), how === "escape");
    return await handle.evaluate((promise) => promise);
}

const missing = requiredOrSkip("the layout e2e run", chromiumMissingReason());
describe.skipIf(missing != null)("web: layout at 1440×900 and 1024×700, and stop latency", () => {
    let server: Awaited<ReturnType<typeof startWebApp>>;
    let browser: BrowserSession;
    let failed: string | undefined;

    beforeAll(async () => {
        const modelsDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-layout-models-"));
        await makeSyntheticModel(path.join(modelsDir, "tiny-chat.gguf"), {preset: "tiny", name: "tiny-chat"});
        server = await startWebApp(await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-layout-data-")), ["--model-dir", modelsDir], {}, {sharedCache: true});
        browser = await openBrowser();
        await browser.page.goto(server.url);
        const shell = new AppShell(browser.page);
        await shell.waitForEngineState("idle");
        await shell.show("model");
        const model = new ModelPage(browser.page);
        await model.openPath(path.join(modelsDir, "tiny-chat.gguf"));
        await model.card.waitFor({timeout: 30_000});
        await shell.show("offload");
        const offload = new OffloadPage(browser.page);
        await offload.setContextSize(1024);
        await offload.setStrategy("oato");
        await offload.run();
        await offload.waitForResult();
        await shell.waitForEngineState("ready");
    });
    afterAll(async () => {
        await browser?.close(failed);
        await server?.stop();
    });

    for (const size of SIZES) {
        const label = viewportLabel(size);
        it(`${label}: the composer stays in the window through five exchanges and the sidebar never moves`, async () => {
            const page = browser.page;
            await page.setViewportSize(size);
            const shell = new AppShell(page);
            await shell.show("chat");
            const chat = new ChatPage(page);
            await chat.newConversation();
            await chat.setOptions({maxTokens: 24, temperature: 0});
            const sidebarTop = await page.getByTestId("nav-chat").evaluate((element) => element.getBoundingClientRect().top);
            for (let exchange = 1; exchange <= 5; exchange++) {
                await chat.send(`Exchange ${exchange}: tell me about memory.`);
                await chat.waitForReplyCount(exchange);
            }
            const composer = await reachLast(page, "[data-testid='send']");
            expect(composer, "the Send button after five exchanges").toMatchObject({inViewport: true});
            expect(await page.getByTestId("nav-chat").evaluate((element) => element.getBoundingClientRect().top)).toBe(sidebarTop);
            // the transcript followed the replies: the last one is in view without the user scrolling
            const last = await page.getByTestId("message-assistant").last().evaluate((element) => element.getBoundingClientRect().bottom);
            const transcript = await page.getByTestId("messages").evaluate((element) => element.getBoundingClientRect().bottom);
            expect(last).toBeLessThanOrEqual(transcript + 1);
            await keepScreenshot(page, `web-${label}-chat`);
        });

        it(`${label}: the Memory screen draws one labelled bar per physical memory, markers inside their card`, async () => {
            const page = browser.page;
            await page.setViewportSize(size);
            await new AppShell(page).show("memory");
            await page.getByTestId("memory-device").first().waitFor();
            const cards = await page.getByTestId("memory-device").evaluateAll((elements) => elements.map((element) => {
                const card = element.getBoundingClientRect();
                return {
                    device: element.getAttribute("data-device") ?? "", left: card.left, right: card.right,
                    trackWidth: element.querySelector(".capacity-track")?.getBoundingClientRect().width ?? 0,
                    labels: [...element.querySelectorAll(".capacity-marker-label")].map((node) => {
                        const box = node.getBoundingClientRect();
                        return {text: node.textContent ?? "", left: box.left, right: box.right};
                    }),
                    caption: element.querySelector(".capacity-caption")?.textContent ?? ""
                };
            }));
            expect(cards.map((card) => card.device)).toEqual(["CPU", "Vulkan0"]);
            for (const card of cards) {
                expect(card.trackWidth, `${card.device}'s bar`).toBeGreaterThan(300);
                expect(card.caption, card.device).toMatch(/this model .+other programs .+free .+ after load.*capacity /);
                for (const marker of card.labels) {
                    expect(marker.left, `${card.device}: ${marker.text}`).toBeGreaterThanOrEqual(card.left);
                    expect(marker.right, `${card.device}: ${marker.text}`).toBeLessThanOrEqual(card.right);
                }
            }
            expect(cards[1]!.labels.map((marker) => marker.text.split(" ")[0])).toEqual(["budget", "planned"]);
            await keepScreenshot(page, `web-${label}-memory-bars`);
        });

        it(`${label}: the last element of every screen can be scrolled into view`, async () => {
            const page = browser.page;
            await page.setViewportSize(size);
            const shell = new AppShell(page);
            for (const screen of SCREENS) {
                await shell.show(screen);
                await keepScreenshot(page, `web-${label}-${screen}`);
                const reach = await reachLast(page);
                expect(reach, `${screen} at ${label}`).toMatchObject({inViewport: true});
                expect(await page.evaluate(() => document.scrollingElement?.scrollTop ?? 0), "the page itself never scrolls").toBe(0);
                await keepScreenshot(page, `web-${label}-${screen}-end`);
            }
        });
    }

    it("Stop and Esc land within 250 ms while the prompt is processed and while tokens stream; the reply says Stopped", async () => {
        const page = browser.page;
        await page.setViewportSize(SIZES[0]!);
        const shell = new AppShell(page);
        await shell.show("chat");
        const chat = new ChatPage(page);
        await chat.newConversation();
        await chat.setOptions({maxTokens: 2000, temperature: 0});

        await chat.send("Write a very long story.");
        await page.waitForFunction(() => Number(document.querySelector("[data-testid='message-streaming']")?.getAttribute("data-tokens") ?? 0) >= 3, undefined, {timeout: 60_000});
        const whileStreaming = await stopAndMeasure(page, "button");
        console.log(`[measure] stop while streaming: ${whileStreaming.toFixed(0)} ms`);
        expect(whileStreaming).toBeLessThan(STOP_WITHIN_MS);
        expect(await chat.lastAssistantStopped()).toBe("user");
        expect(await page.getByTestId("chat-error").count(), "a user's own stop is not an error").toBe(0);

        // a long message: the prompt takes a while, and Esc stops it there
        await chat.send(Array.from({length: 150}, (_, index) => `token${index}`).join(" "));
        await page.locator("[data-testid='message-streaming'][data-phase='prompt'] [data-testid='prompt-progress']").waitFor({timeout: 30_000});
        await keepScreenshot(page, "web-chat-prompt-progress");
        const whilePrompt = await stopAndMeasure(page, "escape");
        console.log(`[measure] Esc while processing the prompt: ${whilePrompt.toFixed(0)} ms`);
        expect(whilePrompt).toBeLessThan(STOP_WITHIN_MS);
        expect(await page.getByTestId("chat-error").count()).toBe(0);
        await keepScreenshot(page, "web-chat-stopped");
    });
});
