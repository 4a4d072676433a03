/**
 * Debian's Chromium driven by playwright-core (no browser download), headless, with a fresh user-data dir per run and
 * the flags that keep it off this machine's closed network. Traces every test; keeps the trace and a screenshot of a
 * failed one under test-results/.
 */
import {existsSync, mkdirSync, mkdtempSync, rmSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {chromium, type BrowserContext, type Page} from "playwright-core";
import {resultsDir, screenshotsDir} from "./paths.js";

export const CHROMIUM_PATH = process.env.TENSORWISE_CHROMIUM ?? "/usr/bin/chromium";

const CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"
];

export type BrowserSession = {context: BrowserContext; page: Page; close(failedTest?: string): Promise<void>};

export function chromiumMissingReason(): string | null {
    return existsSync(CHROMIUM_PATH) ? null : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set TENSORWISE_CHROMIUM)`;
}

export async function openBrowser(): Promise<BrowserSession> {
    const userDataDir = mkdtempSync(path.join(os.tmpdir(), "tensorwise-chromium-"));
    const context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, viewport: {width: 1360, height: 860}
    });
    await context.tracing.start({screenshots: true, snapshots: true});
    const page = context.pages()[0] ?? await context.newPage();
    return {
        context,
        page,
        async close(failedTest) {
            if (failedTest != null) {
                const name = failedTest.replace(/[^A-Za-z0-9_-]+/g, "-");
                mkdirSync(path.join(resultsDir, "failures"), {recursive: true});
                await page.screenshot({path: path.join(resultsDir, "failures", `${name}.png`), fullPage: true}).catch(() => {});
                await context.tracing.stop({path: path.join(resultsDir, "failures", `${name}.trace.zip`)}).catch(() => {});
            } else
                await context.tracing.stop().catch(() => {});
            await context.close();
            rmSync(userDataDir, {recursive: true, force: true});
        }
    };
}

/** A screenshot of a screen, kept as a test artifact. */
export async function keepScreenshot(page: Page, name: string): Promise<void> {
    mkdirSync(screenshotsDir, {recursive: true});
    await page.screenshot({path: path.join(screenshotsDir, `${name}.png`)});
}
