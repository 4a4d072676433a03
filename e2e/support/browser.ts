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

/** A window size, in CSS pixels. */
export type Viewport = {width: number; height: number};

/** The window sizes people use that the layout specs check: a laptop's and a small window's. */
export const VIEWPORTS: readonly Viewport[] = [{width: 1440, height: 900}, {width: 1024, height: 700}];

/** A viewport's name in test titles and screenshot files ("1440x900"). */
export function viewportLabel(viewport: Viewport): string {
    return `${viewport.width}x${viewport.height}`;
}

export function chromiumMissingReason(): string | null {
    return existsSync(CHROMIUM_PATH) ? null : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set TENSORWISE_CHROMIUM)`;
}

/** Opens Chromium with a fresh profile; `viewport` sets the window size (a test may change it with `page.setViewportSize`). */
export async function openBrowser(options: {viewport?: Viewport} = {}): Promise<BrowserSession> {
    const userDataDir = mkdtempSync(path.join(os.tmpdir(), "tensorwise-chromium-"));
    const context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, viewport: options.viewport ?? {width: 1360, height: 860}
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
