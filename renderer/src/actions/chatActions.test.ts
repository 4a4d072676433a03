// @vitest-environment jsdom
// A Send right after a settings change: the reply must be generated with the settings the user sees, so chat.send
// waits for the conversation's settings saves still in flight, and saves land in the order they were made.
import {beforeAll, describe, expect, it} from "vitest";
import type {ChatSettings, Conversation} from "../../../electron/contract/ipc";
import {useChatStore} from "../stores/chatStore";
import {deferred, fakeBridge} from "../testing/fakeBridge";
import {initTransport} from "../transport/getTransport";
import {saveSettings, sendMessage} from "./chatActions";

const fake = fakeBridge();
const conversation: Conversation = {id: "c1", title: "c1", updatedAt: 1, messageCount: 0, messages: []};

beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
    fake.handle("conversations.list", () => []);
    fake.handle("conversations.notices", () => []);
    useChatStore.getState().putConversation(conversation);
    useChatStore.getState().setActive("c1");
});

describe("settings saves and Send", () => {
    it("sends only after the settings saves in flight have landed, which land in order", async () => {
        const saved: ChatSettings[] = [];
        const first = deferred<Conversation>();
        fake.handle("conversations.setSettings", async ({settings}) => {
            // the first save is slow: the second must not overtake it
            if (saved.length === 0 && settings.temperature == null)
                await first.promise;
            saved.push(settings);
            return {...conversation, settings};
        });
        let sentWith: ChatSettings | undefined;
        fake.handle("chat.send", () => {
            sentWith = saved.at(-1);
            return null as never;
        });
        const one = saveSettings("c1", {maxTokens: 24});
        const two = saveSettings("c1", {maxTokens: 24, temperature: 0});
        const send = sendMessage("hello");
        await new Promise((resolve) => setTimeout(resolve, 10));
        expect(fake.requests).not.toContain("chat.send");
        first.resolve(conversation);
        await Promise.all([one, two, send]);
        expect(saved).toEqual([{maxTokens: 24}, {maxTokens: 24, temperature: 0}]);
        expect(sentWith).toEqual({maxTokens: 24, temperature: 0});
    });
});
