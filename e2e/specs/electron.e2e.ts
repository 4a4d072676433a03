/** The same journey through Playwright's Electron launcher, when an Electron binary exists; skipped (with why) otherwise. */
import path from "node:path";
import {describe, it} from "vitest";
import {_electron} from "playwright-core";
import {findElectron} from "../support/electronApp.js";
import {repoRoot} from "../support/paths.js";
import {keepScreenshot} from "../support/browser.js";
import {defineJourney} from "./journey.js";
import {isolatedCacheEnv} from "../../electron/engine/testing/isolatedCacheEnv.js";

const electron = findElectron();
if ("reason" in electron) {
    console.warn(`skipping the Electron e2e run: ${electron.reason}`);
    describe("electron", () => {
        it.skip(`the whole journey: ${electron.reason}`, () => {});
    });
} else {
    defineJourney("electron", async (dataDir) => {
        const app = await _electron.launch({
            executablePath: electron.path,
            args: [repoRoot],
            env: {...process.env, TENSORWISE_DATA_DIR: dataDir, ...isolatedCacheEnv(path.join(dataDir, "cache")), GGML_VK_VISIBLE_DEVICES: process.env.GGML_VK_VISIBLE_DEVICES ?? "0", TENSORWISE_THREADS: "2"} as Record<string, string>
        });
        let log = "";
        const pids: number[] = [];
        const onData = (chunk: Buffer) => {
            log += chunk.toString();
            for (const match of chunk.toString().matchAll(/engine started pid=(\d+)/g))
                pids.push(Number(match[1]));
        };
        app.process().stdout?.on("data", onData);
        app.process().stderr?.on("data", onData);
        const page = await app.firstWindow();
        await app.context().tracing.start({screenshots: true, snapshots: true});
        return {
            page,
            reload: async () => {
                await page.reload();
            },
            enginePid: async () => {
                while (pids.length === 0)
                    await new Promise((resolve) => setTimeout(resolve, 100));
                return pids.at(-1)!;
            },
            output: () => log,
            close: async (failedTest) => {
                if (failedTest != null)
                    await keepScreenshot(page, `failure-${failedTest.replace(/[^A-Za-z0-9_-]+/g, "-")}`).catch(() => {});
                await app.context().tracing.stop(failedTest != null ? {path: `${repoRoot}/test-results/failures/${failedTest.replace(/[^A-Za-z0-9_-]+/g, "-")}.trace.zip`} : undefined).catch(() => {});
                await app.close();
            }
        };
    });
}
