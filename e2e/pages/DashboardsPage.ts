import type {Page} from "playwright-core";

/** The Dashboards screen: live uPlot charts of TTFT / TPOT / tok/s per reply. */
export class DashboardsPage {
    constructor(readonly page: Page) {}

    async replyCount(): Promise<number> {
        return Number(await this.page.getByTestId("reply-count").textContent());
    }

    async chartPoints(chart: "ttft" | "tpot" | "rate"): Promise<number> {
        return Number(await this.page.getByTestId(`chart-${chart}`).getAttribute("data-points"));
    }

    async chartHasCanvas(chart: "ttft" | "tpot" | "rate"): Promise<boolean> {
        return await this.page.getByTestId(`chart-${chart}`).locator("canvas").count() > 0;
    }
}
