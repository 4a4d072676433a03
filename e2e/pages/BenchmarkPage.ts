import {readFile} from "node:fs/promises";
import type {Page} from "playwright-core";

/** The Benchmark screen: the grid form, Start / Stop, live progress, results, charts, past runs and export. */
export class BenchmarkPage {
    constructor(readonly page: Page) {}

    /** Fills the grid; lists as the user types them (`"32, 64"`). */
    async setGrid(grid: {budgets?: string; prompts?: string; gens?: string; repeats?: number}): Promise<void> {
        if (grid.budgets != null) await this.page.getByTestId("bench-budgets").fill(grid.budgets);
        if (grid.prompts != null) await this.page.getByTestId("bench-prompts").fill(grid.prompts);
        if (grid.gens != null) await this.page.getByTestId("bench-gens").fill(grid.gens);
        if (grid.repeats != null) await this.page.getByTestId("bench-repeats").fill(String(grid.repeats));
    }

    async selectedStrategies(): Promise<string[]> {
        return await this.page.locator("[data-testid^='bench-strategy-'][aria-pressed='true']")
            .evaluateAll((elements) => elements.map((element) => (element.getAttribute("data-testid") ?? "").replace("bench-strategy-", "")));
    }

    async start(): Promise<void> {
        await this.page.getByTestId("bench-start").click();
    }

    /**
     * Waits until the progress panel has counted at least `done` measurements. Checked every animation frame, so a fast
     * run on a tiny model cannot slip between two polls.
     */
    async waitForProgress(done = 1, timeout = 60_000): Promise<{done: number; total: number; label: string}> {
        // read in the same animation frame that saw the count: a run that finishes right after replaces the panel, and a
        // second look would wait for a panel that is gone (CI once timed out there)
        const handle = await this.page.waitForFunction((least) => {
            const panel = document.querySelector("[data-testid='bench-progress']");
            const counted = Number(panel?.getAttribute("data-done") ?? 0);
            return panel != null && counted >= least
                ? {done: counted, total: Number(panel.getAttribute("data-total")), label: panel.querySelector(".progress-labels")?.textContent ?? ""}
                : null;
        }, done, {polling: "raf", timeout});
        return await handle.jsonValue() as {done: number; total: number; label: string};
    }

    /** Waits for the finished benchmark's report; throws the host's message if it failed. */
    async waitForDone(timeout = 120_000): Promise<void> {
        const done = this.page.locator("[data-testid='bench-detail']:not([data-status='running'])");
        const error = this.page.getByTestId("bench-error");
        await done.or(error).first().waitFor({timeout});
        if (await error.isVisible())
            throw new Error(`benchmark failed: ${await error.textContent()}`);
        await this.page.getByTestId("bench-progress").waitFor({state: "detached", timeout});
    }

    async status(): Promise<string | null> {
        return await this.page.getByTestId("bench-detail").getAttribute("data-status");
    }

    resultRows() {
        return this.page.getByTestId("bench-result-row");
    }

    async pastRunCount(): Promise<number> {
        return await this.page.getByTestId("bench-past-item").count();
    }

    async chartSeries(chart: "ttft" | "tpot"): Promise<number> {
        return Number(await this.page.getByTestId(`bench-chart-${chart}`).getAttribute("data-series"));
    }

    /** Web mode: clicks an Export button and returns the downloaded file's name and text. */
    async download(format: "csv" | "html" | "json"): Promise<{fileName: string; text: string}> {
        const [download] = await Promise.all([this.page.waitForEvent("download"), this.page.getByTestId(`bench-export-${format}`).click()]);
        const file = await download.path();
        return {fileName: download.suggestedFilename(), text: await readFile(file, "utf8")};
    }

    /** Scrolls the screen so the charts are in view (for a screenshot). */
    async scrollToCharts(): Promise<void> {
        await this.page.getByTestId("bench-chart-ttft").scrollIntoViewIfNeeded();
    }
}
