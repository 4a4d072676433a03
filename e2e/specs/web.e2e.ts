import {describe, it} from "vitest";
import {requiredOrSkip} from "../../electron/engine/testing/requiredOrSkip.js";
import {chromiumMissingReason, openBrowser} from "../support/browser.js";
import {startWebApp} from "../support/webApp.js";
import {defineJourney} from "./journey.js";

const missing = requiredOrSkip("the web-mode e2e run", chromiumMissingReason());
if (missing != null) {
    describe("web mode", () => {
        it.skip(`the whole journey: ${missing}`, () => {});
    });
} else {
    defineJourney("web", async (dataDir, modelsDir) => {
        const server = await startWebApp(dataDir, ["--model-dir", modelsDir]);
        const browser = await openBrowser();
        await browser.page.goto(server.url);
        return {
            page: browser.page,
            reload: async () => {
                await browser.page.reload();
            },
            enginePid: () => server.enginePid(),
            output: () => server.output(),
            close: async (failedTest) => {
                await browser.close(failedTest);
                await server.stop();
            }
        };
    });
}
