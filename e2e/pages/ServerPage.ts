import type {Page} from "playwright-core";

/** The Server screen: on/off, port, key, the base URL clients use. */
export class ServerPage {
    constructor(readonly page: Page) {}

    /** Types a port and applies it (0: any free port). */
    async setPort(port: number): Promise<void> {
        await this.page.getByTestId("server-port").fill(String(port));
        await this.page.getByTestId("server-apply").click();
        await this.page.locator(`[data-testid='server-apply']:disabled`).waitFor();
    }

    async setEnabled(enabled: boolean): Promise<void> {
        const box = this.page.getByTestId("server-enabled");
        if (await box.isChecked() !== enabled) await box.click();
    }

    async waitForStatus(status: string, timeout = 60_000): Promise<void> {
        await this.page.locator(`[data-testid='server-status'][data-status='${status}']`).waitFor({timeout});
    }

    async url(): Promise<string> {
        return (await this.page.getByTestId("server-url").textContent()) ?? "";
    }

    async key(): Promise<string> {
        return (await this.page.getByTestId("server-key").textContent()) ?? "";
    }

    /** The requests listed, newest first: HTTP status and the row's text. */
    async requests(): Promise<{status: string; text: string}[]> {
        return await this.page.getByTestId("served-request").evaluateAll((rows) =>
            rows.map((row) => ({status: row.getAttribute("data-status") ?? "", text: row.textContent ?? ""})));
    }

    async curl(): Promise<string> {
        return (await this.page.getByTestId("server-curl").textContent()) ?? "";
    }
}
