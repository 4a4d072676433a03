/**
 * A newcomer's walk, timed: open the app, drop a model, "Load — auto-offload" (which measures this machine the first
 * time), "Start chatting", six turns with one edit sent by Enter, turn the server on, run the curl it shows, drop a
 * second model and load it. Each step's wait is sampled in the page (waitSampler.ts) and summarised: how long it
 * took, its longest stretch with nothing on screen saying what is under way (an unexplained wait), its longest stretch
 * in which what was shown did not change, and the status texts shown. Written to test-results/walk/walk.{json,md}.
 *
 * A measurement, not a test of speed: it fails only when the walk cannot be completed. Run it alone (timings on a
 * shared machine are noisy): `npm run walk`.
 */
import {execFile} from "node:child_process";
import {mkdir, mkdtemp, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {promisify} from "node:util";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../../electron/engine/writer/makeSyntheticModel.js";
import {requiredOrSkip} from "../../electron/engine/testing/requiredOrSkip.js";
import {AppShell} from "../../e2e/pages/AppShell.js";
import {ChatPage} from "../../e2e/pages/ChatPage.js";
import {ModelPage} from "../../e2e/pages/ModelPage.js";
import {ServerPage} from "../../e2e/pages/ServerPage.js";
import {chromiumMissingReason, openBrowser, type BrowserSession} from "../../e2e/support/browser.js";
import {resultsDir} from "../../e2e/support/paths.js";
import {startWebApp, type WebApp} from "../../e2e/support/webApp.js";
import {pageNow, readSamples, startSampler, summariseWait, type StepWait} from "./waitSampler.js";

/** What a user would call the wait "explained" within: the walk's verdict column. */
const EXPLAINED_WITHIN_MS = 2000;

const missing = requiredOrSkip("the newcomer walk", chromiumMissingReason());
describe.skipIf(missing != null)("a newcomer's walk, timed", () => {
    let app: WebApp;
    let browser: BrowserSession;
    let modelsDir: string;
    const steps: {name: string; startMs: number; endMs: number}[] = [];

    beforeAll(async () => {
        modelsDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-walk-models-"));
        // a 8-layer, 1024-wide model (~110 MB at Q8_0): loads and replies take seconds here, as a real model's do
        await makeSyntheticModel(path.join(modelsDir, "first-model.gguf"), {preset: "small", type: "q8_0", name: "first-model"});
        await makeSyntheticModel(path.join(modelsDir, "second-model.gguf"), {preset: "tiny", name: "second-model"});
        app = await startWebApp(await mkdtemp(path.join(os.tmpdir(), "tensorwise-walk-data-")));
        browser = await openBrowser({viewport: {width: 1440, height: 900}});
    }, 300_000);
    afterAll(async () => {
        await browser?.close();
        await app?.stop();
    });

    /** Runs one step of the walk, from the user's action to `done`, and records its span on the page's clock. */
    async function step(name: string, action: () => Promise<void>): Promise<void> {
        const startMs = await pageNow(browser.page);
        await action();
        steps.push({name, startMs, endMs: await pageNow(browser.page)});
    }

    it("walks from an empty app to a served reply and a second model", async () => {
        const page = browser.page;
        const shell = new AppShell(page);
        const model = new ModelPage(page);
        const chat = new ChatPage(page);
        await page.goto(app.url);
        await startSampler(page);
        await step("open the app", () => shell.waitForEngineState("idle"));
        await shell.show("model");
        await step("drop a model", async () => {
            await model.dropFile(path.join(modelsDir, "first-model.gguf"));
            await model.card.waitFor({timeout: 120_000});
        });
        await step("Load — auto-offload (first time: measures the machine)", async () => {
            await page.getByTestId("go-offload").click();
            await page.getByTestId("start-chatting").first().waitFor({timeout: 600_000});
        });
        await step("Start chatting", async () => {
            await page.getByTestId("start-chatting").first().click();
            await page.locator("[data-testid='composer-input']:focus").waitFor();
        });
        const questions = ["Hello! What can you do?", "Tell me about the moon.", "And the sun?", "Which is bigger?", "Thanks. One more fact?", "Bye!"];
        for (const [index, question] of questions.entries()) {
            if (index === 3) {
                // before the fourth turn, the third question is edited and sent again with Enter
                await step("edit question 3, send it with Enter", async () => {
                    await chat.userMessages().last().getByTestId("edit").click();
                    await page.getByTestId("edit-input").fill(`${questions[2]} (edited)`);
                    await page.getByTestId("edit-input").press("Enter");
                    await page.getByTestId("edit-input").waitFor({state: "detached"});
                    await chat.waitForReplyCount(3, 600_000);
                });
            }
            const count = await chat.assistantMessages().count();
            await step(`turn ${index + 1}: ${question}`, async () => {
                await chat.send(question);
                await chat.waitForReplyCount(count + 1, 600_000);
            });
        }
        const server = new ServerPage(page);
        await shell.show("server");
        await server.setPort(0);
        await step("turn the server on", async () => {
            await server.setEnabled(true);
            await server.waitForStatus("serving", 600_000);
        });
        const curl = await server.curl();
        let curlOutput = "";
        await step("run the curl the Server screen shows", async () => {
            // the user's terminal: the command exactly as shown (the copy button copies the same text)
            const {stdout} = await promisify(execFile)("bash", ["-c", curl], {timeout: 600_000, maxBuffer: 16 << 20});
            curlOutput = stdout;
        });
        expect(curlOutput).toContain("choices");
        await shell.show("model");
        await step("drop a second model and load it", async () => {
            await model.dropFile(path.join(modelsDir, "second-model.gguf"));
            await page.getByTestId("model-name").filter({hasText: "second-model"}).first().waitFor({timeout: 120_000});
            await page.getByTestId("go-offload").click();
            await page.getByTestId("start-chatting").first().waitFor({timeout: 600_000});
        });

        const samples = await readSamples(page);
        const rows: ({name: string} & StepWait)[] = steps.map((span) => ({name: span.name, ...summariseWait(samples, span.startMs, span.endMs)}));
        const dir = path.join(resultsDir, "walk");
        await mkdir(dir, {recursive: true});
        await writeFile(path.join(dir, "walk.json"), JSON.stringify({machine: {cpus: os.cpus().length, model: os.cpus()[0]?.model}, steps: rows}, null, 2));
        const seconds = (ms: number) => (ms / 1000).toFixed(1);
        const table = [
            `| step | took (s) | longest unexplained (s) | longest unchanged (s) | explained within ${EXPLAINED_WITHIN_MS / 1000} s | what was shown (first 3) |`,
            "|---|---|---|---|---|---|",
            ...rows.map((row) => `| ${row.name} | ${seconds(row.durationMs)} | ${seconds(row.longestUnexplainedMs)} | ${seconds(row.longestUnchangedMs)} | ` +
                `${row.longestUnexplainedMs <= EXPLAINED_WITHIN_MS ? "yes" : "**no**"} | ${row.shown.slice(0, 3).map((text) => text.replace(/\|/g, "/")).join("<br>")} |`)
        ].join("\n");
        await writeFile(path.join(dir, "walk.md"), `${table}\n`);
        console.log(`[walk]\n${table}`);
    }, 3_600_000);
});
