import type {Page} from "playwright-core";

/** The Chat screen: conversations, messages, composer, stop and regenerate. */
export class ChatPage {
    constructor(readonly page: Page) {}

    async newConversation(): Promise<void> {
        const before = await this.page.getByTestId("conversation-item").count();
        await this.page.getByTestId("new-conversation").click();
        await this.page.waitForFunction((count) => document.querySelectorAll("[data-testid='conversation-item']").length > count, before);
    }

    async setOptions(options: {maxTokens?: number; temperature?: number}): Promise<void> {
        if (options.maxTokens != null)
            await this.page.getByTestId("max-tokens").fill(String(options.maxTokens));
        if (options.temperature != null)
            await this.page.getByTestId("temperature").fill(String(options.temperature));
    }

    async send(text: string): Promise<void> {
        await this.page.getByTestId("composer-input").fill(text);
        await this.page.getByTestId("send").click();
    }

    get streaming() {
        return this.page.getByTestId("message-streaming");
    }

    /** Tokens the streaming reply has shown so far (engine count). */
    async streamedTokens(): Promise<number> {
        return Number(await this.streaming.getAttribute("data-tokens") ?? 0);
    }

    async stop(): Promise<void> {
        await this.page.getByTestId("stop").click();
    }

    assistantMessages() {
        return this.page.getByTestId("message-assistant");
    }

    userMessages() {
        return this.page.getByTestId("message-user");
    }

    async waitForReplyCount(count: number, timeout = 90_000): Promise<void> {
        await this.page.waitForFunction((n) => document.querySelectorAll("[data-testid='message-assistant']").length >= n &&
            document.querySelector("[data-testid='message-streaming']") == null, count, {timeout});
    }

    /** Engine timing of the last reply. */
    async lastTiming(): Promise<{ttftMs: number; tpotMs: number | null; text: string}> {
        const timing = this.page.getByTestId("message-timing").last();
        await timing.waitFor();
        const tpot = await timing.getAttribute("data-tpot");
        return {
            ttftMs: Number(await timing.getAttribute("data-ttft")),
            tpotMs: tpot == null || tpot === "" ? null : Number(tpot),
            text: (await timing.textContent()) ?? ""
        };
    }

    async lastAssistantStopped(): Promise<string | null> {
        return await this.assistantMessages().last().getAttribute("data-stopped");
    }

    async title(): Promise<string> {
        return (await this.page.getByTestId("conversation-title").textContent()) ?? "";
    }

    async conversationCount(): Promise<number> {
        return await this.page.getByTestId("conversation-item").count();
    }
}
