import type {Page} from "playwright-core";
import type {Screen} from "../../renderer/src/stores/uiStore.js";

/** The app's screens, as its navigation names them. */
export type ScreenName = Screen;

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

/** Where an element is after scrolling it into view: inside the viewport (with its size), or not. */
export type Reach = {inViewport: boolean; top: number; bottom: number; viewportHeight: number};

/**
 * Scrolls the last element of the screen shown (the deepest last child of `[data-screen]`, or `selector`) into view and
 * reports whether it then lies within the window: what a user can reach by scrolling.
 */
export async function reachLast(page: import("playwright-core").Page, selector?: string): Promise<Reach> {
    return await page.evaluate((chosen) => {
        let element: Element | null = chosen != null ? document.querySelector(chosen) : document.querySelector("[data-screen] > *");
        if (chosen == null)
            while (element != null && element.lastElementChild != null)
                element = element.lastElementChild;
        if (element == null)
            throw new Error(`nothing matches ${chosen ?? "[data-screen]"}`);
        element.scrollIntoView({block: "end"});
        const box = element.getBoundingClientRect();
        return {
            inViewport: box.top >= -1 && box.bottom <= window.innerHeight + 1 && box.height > 0,
            top: box.top, bottom: box.bottom, viewportHeight: window.innerHeight
        };
    }, selector);
}
