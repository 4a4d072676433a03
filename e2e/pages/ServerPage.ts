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

    /** Adds a client key by name (the form's Enter) and returns it once listed. */
    async addClientKey(name: string): Promise<string> {
        await this.page.getByTestId("client-key-name").fill(name);
        await this.page.getByTestId("client-key-name").press("Enter");
        const row = this.page.locator(`[data-testid='client-key'][data-name='${name}']`);
        await row.waitFor();
        return (await row.locator("code").textContent()) ?? "";
    }

    async revokeClientKey(name: string): Promise<void> {
        const row = this.page.locator(`[data-testid='client-key'][data-name='${name}']`);
        await row.getByTestId("client-key-revoke").click();
        await row.waitFor({state: "detached"});
    }

    /** The client keys listed, by name. */
    async clientKeyNames(): Promise<string[]> {
        return await this.page.getByTestId("client-key").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-name") ?? ""));
    }

    async curl(): Promise<string> {
        return (await this.page.getByTestId("server-curl").textContent()) ?? "";
    }
}
