import type {Page} from "playwright-core";

export type ScreenName = "chat" | "model" | "offload" | "memory" | "dashboards" | "benchmark";

/** The window around every screen: navigation, engine status, crash banner. */
export class AppShell {
    constructor(readonly page: Page) {}

    async open(url: string): Promise<void> {
        await this.page.goto(url);
        await this.page.getByTestId("engine-status").waitFor();
    }

    async show(screen: ScreenName): Promise<void> {
        await this.page.getByTestId(`nav-${screen}`).click();
        await this.page.locator(`[data-screen="${screen}"]`).waitFor();
    }

    async engineState(): Promise<string | null> {
        return await this.page.getByTestId("engine-status").getAttribute("data-state");
    }

    async waitForEngineState(state: string, timeout = 60_000): Promise<void> {
        await this.page.locator(`[data-testid="engine-status"][data-state="${state}"]`).waitFor({timeout});
    }

    get crashBanner() {
        return this.page.getByTestId("crash-banner");
    }

    async restartEngine(): Promise<void> {
        await this.page.getByTestId("restart-engine").click();
    }
}
