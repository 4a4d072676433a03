import type {Page} from "playwright-core";

/** The Get a model screen: hub search, each quant's predicted speed on this machine, profile, download. */
export class GetModelPage {
    constructor(readonly page: Page) {}

    async search(query: string): Promise<void> {
        await this.page.getByTestId("hub-query").fill(query);
        await this.page.getByTestId("hub-search").click();
        await this.page.getByTestId("hub-results").waitFor();
    }

    /** Clicks a search result: its quants are planned. */
    async chooseRepo(repo: string): Promise<void> {
        await this.page.getByTestId("hub-results").getByRole("button", {name: repo, exact: true}).click();
    }

    get quantList() {
        return this.page.getByTestId("hub-quants");
    }

    get profileButton() {
        return this.page.getByTestId("hub-profile");
    }

    quantRow(quant: string) {
        return this.page.getByTestId(`hub-quant-${quant}`);
    }

    /** A quant row's cells as text: quant, size, where, TTFT, tokens/s, GPU memory, RAM. */
    async quantCells(quant: string): Promise<string[]> {
        return await this.quantRow(quant).locator("td").allInnerTexts();
    }

    /** Waits until every one of `quants` shows a plan (its TTFT in ms), the profile button gone. */
    async waitForPlanned(quants: readonly string[], timeout: number): Promise<void> {
        await this.page.waitForFunction((names) => document.querySelector("[data-testid=hub-profile]") == null && names.every((name) =>
            /^\d+ ms\b/.test(document.querySelector(`[data-testid="hub-quant-${name}"] td:nth-child(4)`)?.textContent ?? "")), quants, {timeout});
    }

    async download(quant: string): Promise<void> {
        await this.quantRow(quant).getByRole("button", {name: "Download"}).click();
    }

    get downloadProgress() {
        return this.page.getByTestId("hub-download-progress");
    }
}
