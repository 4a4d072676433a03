import type {Page} from "playwright-core";

/** The Auto-offload screen: controls, the one button, step progress, placement map, prediction. */
export class OffloadPage {
    constructor(readonly page: Page) {}

    async setBudgetPercent(percent: number): Promise<void> {
        await this.page.getByTestId("budget-percent").click();
        await this.page.getByTestId("budget-value").fill(String(percent));
    }

    async setContextSize(tokens: number): Promise<void> {
        await this.page.getByTestId("context-size").fill(String(tokens));
    }

    async setStrategy(strategy: string): Promise<void> {
        await this.page.getByTestId("strategy").selectOption(strategy);
    }

    async run(): Promise<void> {
        await this.page.getByTestId("auto-offload").click();
    }

    /** Names of the progress steps shown while the job ran. */
    async stepNames(): Promise<string[]> {
        const ids = await this.page.locator("[data-testid^='step-']").evaluateAll((elements) => elements.map((element) => element.getAttribute("data-testid") ?? ""));
        return ids.map((id) => id.replace(/^step-/, ""));
    }

    /** Waits for the placed model; throws the engine's message if the job failed. */
    async waitForResult(timeout = 120_000): Promise<void> {
        const result = this.page.getByTestId("offload-result");
        const error = this.page.getByTestId("offload-error");
        await result.or(error).first().waitFor({timeout});
        if (await error.isVisible())
            throw new Error(`auto-offload failed: ${await error.textContent()}`);
    }

    get placementMap() {
        return this.page.getByTestId("placement-map");
    }

    /** Bytes of weights per buffer type, as the plan says (legend of the placement map). */
    async plannedBytes(): Promise<Record<string, number>> {
        return await this.page.getByTestId("placement-legend-item").evaluateAll((elements) => Object.fromEntries(
            elements.map((element) => [element.getAttribute("data-buffer-type") ?? "", Number(element.getAttribute("data-bytes"))])));
    }

    async llamaFlags(): Promise<string> {
        return (await this.page.getByTestId("llama-flags").textContent()) ?? "";
    }
}
