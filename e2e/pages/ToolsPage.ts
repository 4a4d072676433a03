import type {Locator, Page} from "playwright-core";

/** The Tools screen: MCP servers imported, enabled, started, with their tools; and a chat's tool settings and calls. */
export class ToolsPage {
    constructor(readonly page: Page) {}

    server(name: string): Locator {
        return this.page.locator(`[data-testid='tools-server'][data-name='${name}']`);
    }

    /** Pastes an `mcpServers` JSON and imports it; resolves with what the screen says was added. */
    async import(json: string): Promise<string> {
        await this.page.getByTestId("tools-import").locator("summary").click();
        await this.page.getByTestId("tools-import-text").fill(json);
        await this.page.getByTestId("tools-import-run").click();
        return await this.page.getByTestId("tools-import-added").textContent() ?? "";
    }

    async enable(name: string): Promise<void> {
        // the box shows what the host saved: it changes once the host answers
        await this.server(name).getByTestId("tools-server-enabled").click();
        await this.page.waitForFunction((server) => document.querySelector<HTMLInputElement>(`[data-testid='tools-server'][data-name='${server}'] [data-testid='tools-server-enabled']`)?.checked === true, name);
    }

    async start(name: string, status = "running", timeout = 60_000): Promise<void> {
        await this.server(name).getByTestId("tools-server-start").click();
        await this.page.waitForFunction(([server, wanted]) => document.querySelector(`[data-testid='tools-server'][data-name='${server}']`)?.getAttribute("data-status") === wanted,
            [name, status] as const, {timeout});
    }

    async status(name: string): Promise<string | null> {
        return await this.server(name).getAttribute("data-status");
    }

    async toolNames(name: string): Promise<string[]> {
        return await this.server(name).getByTestId("tools-tool").evaluateAll((tools) => tools.map((tool) => tool.getAttribute("data-tool") ?? ""));
    }
}

/** A chat's tools in its settings panel, and the calls of its replies. */
export class ChatToolsPage {
    constructor(readonly page: Page) {}

    /** Turns `tool` of `server` on in the shown chat and sets the tool choice; the panel is closed after (`whileOpen` first). */
    async turnOn(server: string, tool: string, choice: "auto" | "required" | "none", whileOpen?: () => Promise<void>): Promise<void> {
        await this.page.getByTestId("open-chat-settings").click();
        await this.page.getByTestId("chat-tools").waitFor();
        await this.page.getByTestId("setting-toolChoice").selectOption(choice);
        await this.page.getByTestId(`tool-toggle-${server}-${tool}`).click();
        await this.page.getByTestId("composer-tools").waitFor();
        await whileOpen?.();
        await this.page.getByTestId("chat-settings-close").click();
    }

    calls(): Locator {
        return this.page.getByTestId("tool-call");
    }

    /** Waits until the last call is in `state`. */
    async waitForLastCall(state: string, timeout = 120_000): Promise<void> {
        await this.page.waitForFunction((wanted) => [...document.querySelectorAll("[data-testid='tool-call']")].at(-1)?.getAttribute("data-state") === wanted,
            state, {timeout});
    }

    /** Answers every call waiting in the last round with `decision`; resolves with how many there were. */
    async decideAll(decision: "approve" | "always" | "deny"): Promise<number> {
        const waiting = this.page.locator(`[data-testid='tool-call'][data-state='pending'] [data-testid='tool-${decision}']`);
        const count = await waiting.count();
        for (let index = 0; index < count; index++)
            await waiting.nth(0).click().then(() => this.page.waitForFunction((before) =>
                document.querySelectorAll("[data-testid='tool-call'][data-state='pending'] [data-testid='tool-approve']").length < before, count - index));
        return count;
    }
}
