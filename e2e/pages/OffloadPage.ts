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

    /** The planner's sentences shown with the plan: placement, budget, -ngl, profile. */
    async explanation(): Promise<{placement: string; budget: string; ngl: string; profile: string; profileReused: boolean}> {
        const text = async (id: string) => (await this.page.getByTestId(`plan-why-${id}`).textContent()) ?? "";
        return {
            placement: await text("placement"), budget: await text("budget"), ngl: await text("ngl"), profile: await text("profile"),
            profileReused: (await this.page.getByTestId("plan-why").getAttribute("data-profile-reused")) === "true"
        };
    }

    /** The detail line of one progress step (e.g. "profile"). */
    async stepDetail(step: string): Promise<string> {
        return (await this.page.getByTestId(`step-${step}`).textContent()) ?? "";
    }

    /** Buffer types of the memory estimate shown with the plan, with their planned bytes. */
    async memoryEstimate(): Promise<Record<string, number>> {
        return await this.page.getByTestId("memory-estimate-row").evaluateAll((rows) => Object.fromEntries(
            rows.map((row) => [row.getAttribute("data-buffer-type") ?? "", Number(row.getAttribute("data-bytes"))])));
    }

    async llamaFlags(): Promise<string> {
        return (await this.page.getByTestId("llama-flags").textContent()) ?? "";
    }
}
