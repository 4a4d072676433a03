/**
 * Waits a user is told about, web mode on Mesa's llvmpipe (a real, slow Vulkan device): a model loaded with every
 * layer on llvmpipe (the "layers" strategy chosen by the user) is predicted slow, and the Auto-offload screen says so
 * and names the planner's strategy; a prompt read that slowly shows the time left, counting down, in the reply and the
 * sidebar, at 1440×900 and 1024×700; following the warning (the planner's strategy, Auto-offload again) loads a plan
 * predicted under 10 s and the warning is gone.
 *
 * The model is deep and narrow (40 layers of 256): its operators are small, so this machine's profile stays short
 * (about 30 s), while llvmpipe runs 40 layers of them slowly (36–50 s predicted for a 512-token prompt on a 2-core
 * machine, the planner's CPU plan under 0.5 s): each side of the 10 s threshold has a margin of several times. The
 * real prompt on llvmpipe is slower still (its first 32-token chunk took 43 s beside Chromium on 2 cores), so the chat
 * is checked while that chunk is read, at both sizes, and stopped once.
 */
import {mkdtemp} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {Page} from "playwright-core";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../../electron/engine/writer/makeSyntheticModel.js";
import {requiredOrSkip} from "../../electron/engine/testing/requiredOrSkip.js";
import {AppShell} from "../pages/AppShell.js";
import {ChatPage} from "../pages/ChatPage.js";
import {ModelPage} from "../pages/ModelPage.js";
import {OffloadPage} from "../pages/OffloadPage.js";
import {chromiumMissingReason, keepScreenshot, openBrowser, viewportLabel, VIEWPORTS, type BrowserSession, type Viewport} from "../support/browser.js";
import {startWebApp, type WebApp} from "../support/webApp.js";

/** renderer/src/screens/Offload/components/SlowPlanWarning/slowPlanAdvice.ts's SLOW_TTFT_MS. */
const SLOW_TTFT_MS = 10_000;

/** A duration as the app's formatMs writes it ("30.1 s", "450 ms"), in ms. */
function parseDuration(text: string): number {
    const match = /^([\d.]+) (ms|s)$/.exec(text.trim());
    if (match == null)
        throw new Error(`not a duration: ${JSON.stringify(text)}`);
    return Number(match[1]) * (match[2] === "s" ? 1000 : 1);
}

/** The prompt tokens read so far and the time left shown with them (ms; null while none is shown). */
async function promptState(page: Page): Promise<{evaluated: number; leftMs: number | null}> {
    return await page.evaluate(() => {
        const detail = document.querySelector("[data-testid='prompt-progress'] .progress-labels .muted")?.textContent ?? "";
        const left = document.querySelector("[data-testid='prompt-time-left']");
        return {evaluated: Number(/^(\d+) \//.exec(detail)?.[1] ?? -1), leftMs: left == null ? null : Number(left.getAttribute("data-ms"))};
    });
}

/**
 * The time left while a prompt is read, at the window size set now: shown in words in the reply and, whole (not cut
 * off), in the sidebar, and counting down with the clock between the engine's progress events.
 */
async function checkPromptTimeLeft(page: Page, size: Viewport): Promise<void> {
    const shown = page.getByTestId("prompt-time-left");
    await shown.waitFor({timeout: 30_000});
    expect(await shown.textContent()).toMatch(/^about \d+ (s|min( \d+ s)?) left$/);
    expect(await shown.isVisible()).toBe(true);
    const sidebar = page.getByTestId("sidebar-activity").first();
    expect(await sidebar.textContent()).toMatch(/^Reading the prompt · \d+ \/ \d+ tokens · [\d.]+ (ms|s) · about \d+ (s|min)/);
    expect(await sidebar.evaluate((element) => element.scrollWidth <= element.clientWidth), "the sidebar's line is not cut off").toBe(true);
    // between two progress events (the same tokens read), the time left goes down with the clock
    for (let attempt = 0; ; attempt++) {
        const before = await promptState(page);
        await page.waitForTimeout(1200);
        const after = await promptState(page);
        if (before.evaluated !== after.evaluated && attempt < 5)
            continue;
        expect(before.leftMs).toBeGreaterThanOrEqual(1000);
        expect(after.leftMs, "still reading the prompt a second later").not.toBeNull();
        expect(after.evaluated).toBe(before.evaluated);
        expect(after.leftMs!, "the time left counts down").toBeLessThan(before.leftMs!);
        break;
    }
    await keepScreenshot(page, `web-${viewportLabel(size)}-prompt-time-left`);
}

const missing = requiredOrSkip("the slow plan e2e run", chromiumMissingReason());
describe.skipIf(missing != null)("web: a slow plan and a slow prompt say how long they take", () => {
    let server: WebApp;
    let browser: BrowserSession;
    let failed: string | undefined;

    beforeAll(async () => {
        const modelsDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-slow-models-"));
        const modelPath = path.join(modelsDir, "deep-narrow.gguf");
        await makeSyntheticModel(modelPath, {preset: "tiny", layers: 40, embd: 256, ff: 704, heads: 4, kvHeads: 2, vocab: 4096, name: "deep-narrow"});
        server = await startWebApp(await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-slow-data-")), ["--model-dir", modelsDir]);
        browser = await openBrowser({viewport: VIEWPORTS[0]});
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
        await offload.setStrategy("layers");
        const started = Date.now();
        await offload.run();
        await offload.waitForResult(300_000);
        console.log(`[measure] profile, plan and load of every layer on llvmpipe: ${Date.now() - started} ms`);
        await shell.waitForEngineState("ready");
    }, 420_000);
    afterAll(async () => {
        await browser?.close(failed);
        await server?.stop();
    });

    it(`${viewportLabel(VIEWPORTS[0]!)}: the layers plan on llvmpipe is called slow, naming the planner's strategy; taking it asks for Auto-offload again`, async () => {
        const page = browser.page;
        failed = "slow-plan-warning";
        await page.setViewportSize(VIEWPORTS[0]!);
        await new AppShell(page).show("offload");
        const warning = page.getByTestId("slow-plan");
        await warning.waitFor();
        expect(await page.getByTestId("plan-strategy").textContent()).toBe("layers");
        const ttft = parseDuration((await page.getByTestId("slow-plan-ttft").textContent()) ?? "");
        expect(ttft).toBeGreaterThan(SLOW_TTFT_MS);
        expect(parseDuration((await page.getByTestId("predicted-ttft").textContent()) ?? "")).toBe(ttft);
        expect(await warning.textContent()).toMatch(/^This plan is slow on this machine\. The first token of a \d+-token prompt is predicted after /);
        const strategy = page.getByTestId("slow-plan-strategy");
        expect(await strategy.textContent()).toBe("Use the planner's strategy (optimal)");
        expect(await page.getByTestId("slow-plan-changed").count()).toBe(0);
        await keepScreenshot(page, `web-${viewportLabel(VIEWPORTS[0]!)}-slow-plan`);

        // taken: the strategy is set, the plan shown is still the slow one, and Auto-offload is offered again
        await strategy.click();
        expect(await page.getByTestId("strategy").inputValue()).toBe("optimal");
        await page.getByTestId("slow-plan-changed").waitFor({timeout: 5000});
        expect(await strategy.isDisabled()).toBe(true);
        expect(await strategy.textContent()).toBe("✓ Use the planner's strategy (optimal)");
        expect(await page.getByTestId("slow-plan-replan").isVisible()).toBe(true);
        // the user's own strategy again: the settings are the plan's, nothing has changed since
        await new OffloadPage(page).setStrategy("layers");
        await page.getByTestId("slow-plan-changed").waitFor({state: "detached", timeout: 5000});
        expect(await strategy.isEnabled()).toBe(true);
        failed = undefined;
    });

    it("a prompt read on the slow plan shows the time left, counting down, in the reply and the sidebar at 1440×900 and 1024×700", async () => {
        const page = browser.page;
        failed = "prompt-time-left";
        await page.setViewportSize(VIEWPORTS[0]!);
        await new AppShell(page).show("chat");
        const chat = new ChatPage(page);
        await chat.newConversation();
        await chat.setOptions({maxTokens: 4, temperature: 0});
        // about 240 prompt tokens: on llvmpipe its first 32-token chunk alone takes tens of seconds
        await chat.send(Array.from({length: 80}, (_, index) => `w${index}`).join(" "));
        for (const size of VIEWPORTS) {
            await page.setViewportSize(size);
            await checkPromptTimeLeft(page, size);
        }
        await page.keyboard.press("Escape");
        await chat.streaming.waitFor({state: "detached", timeout: 120_000});
        failed = undefined;
    }, 240_000);

    it(`${viewportLabel(VIEWPORTS[1]!)}: following the warning (the planner's strategy, Auto-offload again) loads a plan predicted under 10 s, and the warning is gone`, async () => {
        const page = browser.page;
        failed = "slow-plan-followed";
        await page.setViewportSize(VIEWPORTS[1]!);
        const shell = new AppShell(page);
        await shell.show("offload");
        await page.getByTestId("slow-plan").waitFor();
        await page.getByTestId("slow-plan-strategy").click();
        const replan = page.getByTestId("slow-plan-replan");
        await replan.waitFor({timeout: 5000});
        const box = (await replan.boundingBox())!;
        expect(box.y + box.height, "Auto-offload again is in the window").toBeLessThanOrEqual(VIEWPORTS[1]!.height);
        await keepScreenshot(page, `web-${viewportLabel(VIEWPORTS[1]!)}-slow-plan-taken`);
        const started = Date.now();
        await replan.click();
        await page.getByTestId("plan-strategy").filter({hasText: /^optimal$/}).waitFor({timeout: 300_000});
        await shell.waitForEngineState("ready");
        console.log(`[measure] the planner's plan and its load: ${Date.now() - started} ms`);
        expect(parseDuration((await page.getByTestId("predicted-ttft").textContent()) ?? "")).toBeLessThan(SLOW_TTFT_MS);
        expect(await page.getByTestId("slow-plan").count()).toBe(0);
        await keepScreenshot(page, `web-${viewportLabel(VIEWPORTS[1]!)}-slow-plan-gone`);
        failed = undefined;
    }, 360_000);
});
