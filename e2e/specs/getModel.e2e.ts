// Get a model in web mode against a local hub (HF_ENDPOINT): search, each quant's predicted speed on this machine
// before any download (after profiling it the way the screen offers, when the fresh data dir has no profile), a
// download with progress, then the model in the library — both the recent models and the models folder's list.
import {mkdtemp, readdir, readFile, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {startLocalHub, type LocalHub} from "../../electron/engine/hub/testing/startLocalHub.js";
import {requiredOrSkip} from "../../electron/engine/testing/requiredOrSkip.js";
import {makeSyntheticModel} from "../../electron/engine/writer/makeSyntheticModel.js";
import {AppShell} from "../pages/AppShell.js";
import {GetModelPage} from "../pages/GetModelPage.js";
import {chromiumMissingReason, openBrowser, type BrowserSession} from "../support/browser.js";
import {startWebApp, type WebApp} from "../support/webApp.js";

const missing = requiredOrSkip("the Get a model e2e", chromiumMissingReason());

describe.skipIf(missing != null)("web mode: Get a model", () => {
    let dir: string;
    let hub: LocalHub;
    let server: WebApp;
    let browser: BrowserSession;
    let failed: string | undefined;

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-e2e-get-model-"));
        await makeSyntheticModel(path.join(dir, "q8.gguf"), {preset: "tiny", layers: 4, embd: 256, ff: 768, type: "q8_0"});
        await makeSyntheticModel(path.join(dir, "f16.gguf"), {preset: "tiny", layers: 4, embd: 256, ff: 768, type: "f16"});
        hub = await startLocalHub({
            "org/tiny-GGUF": [
                {path: "tiny-Q8_0.gguf", content: await readFile(path.join(dir, "q8.gguf"))},
                {path: "tiny-F16.gguf", content: await readFile(path.join(dir, "f16.gguf"))}
            ],
            "other/unrelated": [{path: "x-Q8_0.gguf", content: await readFile(path.join(dir, "q8.gguf"))}]
        });
        // the engine on the CPU with one thread: the screen's "Profile this machine" then measures one device at one thread
        // count (about 20 s) rather than llvmpipe and the CPU at every count (about two minutes); the flow is the same
        server = await startWebApp(path.join(dir, "data"), [], {HF_ENDPOINT: hub.endpoint, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1"});
        browser = await openBrowser();
        await new AppShell(browser.page).open(server.url);
    });
    afterAll(async () => {
        await browser?.close(failed);
        await server?.stop();
        await hub?.close();
        await rm(dir, {recursive: true, force: true});
    });

    it("searches, shows each quant's predicted speed before downloading, downloads with progress, and lists the model", async () => {
        failed = "get-model";
        const shell = new AppShell(browser.page);
        const screen = new GetModelPage(browser.page);
        // the quants are planned by the engine child: wait until it runs (a first start in a fresh checkout takes a while)
        await shell.waitForEngineState("idle", 120_000);
        await shell.show("get-model");
        await screen.search("tiny");
        expect(await browser.page.getByTestId("hub-results").getByRole("button").allInnerTexts()).toEqual(["org/tiny-GGUF"]);

        await screen.chooseRepo("org/tiny-GGUF");
        await screen.quantList.waitFor({timeout: 120_000});
        // the data dir is fresh: no profile yet, so the screen offers to measure this machine, and then plans
        if (await screen.profileButton.isVisible())
            await screen.profileButton.click();
        await screen.waitForPlanned(["Q8_0", "F16"], 300_000);
        for (const quant of ["Q8_0", "F16"]) {
            const [name, , where, ttft, tokensPerSecond] = await screen.quantCells(quant);
            expect(name).toBe(quant);
            expect(where).not.toBe("");
            // each prediction with the range this machine's prediction errors give (assumed on a fresh data dir)
            expect(ttft).toMatch(/^\d+ ms \(about [\d.]+( ms| s)?–[\d.]+ (ms|s)\)$/);
            expect(tokensPerSecond).toMatch(/^[\d.]+ \(about [\d.]+–[\d.]+\)$/);
            expect(Number.parseFloat(tokensPerSecond!)).toBeGreaterThan(0);
        }
        // planned from headers alone: no model file was fetched whole, and nothing is in the models folder yet
        expect(await readdir(path.join(server.dataDir, "models")).catch(() => [])).not.toContain("tiny-Q8_0.gguf");

        // a slow link, so the progress is there to see
        hub.behaviour = {throttle: {chunkBytes: 32 * 1024, delayMs: 25}};
        await screen.download("Q8_0");
        await screen.downloadProgress.waitFor();
        await browser.page.waitForFunction(() => {
            const value = document.querySelector("[data-testid=hub-download-progress]")?.getAttribute("data-progress");
            return value != null && value !== "indeterminate" && Number(value) > 0 && Number(value) < 100;
        }, undefined, {timeout: 60_000});
        // done: the model's card opens, and it is in the library
        await browser.page.getByTestId("model-card").waitFor({timeout: 120_000});
        const file = path.join(server.dataDir, "models", "tiny-Q8_0.gguf");
        expect(await readFile(file)).toEqual(await readFile(path.join(dir, "q8.gguf")));
        await shell.show("model");
        await browser.page.locator(`[data-testid=library-item][data-path="${file}"]`).waitFor();
        await browser.page.locator(`[data-testid=folder-model][data-path="${file}"]`).waitFor({timeout: 10_000});
        expect(await browser.page.locator("[data-testid=folder-model]").allInnerTexts()).toEqual([expect.stringMatching(/^tiny-Q8_0\.gguf\n/)]);
        failed = undefined;
    }, 480_000);
});
