// @vitest-environment jsdom
// A Send right after a settings change: the reply must be generated with the settings the user sees, so chat.send
// waits for the conversation's settings saves still in flight, and saves land in the order they were made.
import {beforeAll, describe, expect, it} from "vitest";
import type {ChatMessage, ChatSettings, Conversation} from "../../../electron/contract/ipc";
import {DEFAULT_CHAT_SETTINGS} from "../stores/chatStore";
import {useChatStore} from "../stores/chatStore";
import {deferred, fakeBridge} from "../testing/fakeBridge";
import {initTransport} from "../transport/getTransport";
import {editAndResend, newConversation, saveSettings, sendMessage} from "./chatActions";

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
        fake.handle("chat.send", ({text}) => {
            sentWith = saved.at(-1);
            return {id: "saved-hello", role: "user", text, createdAt: 1};
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

describe("messages shown before the host confirms them", () => {
    it("an edit right after a reply names the message as the host saved it, not the id it was shown with", async () => {
        useChatStore.getState().putConversation({...conversation, id: "c2", messages: []});
        useChatStore.getState().setActive("c2");
        fake.handle("chat.send", ({text}) => ({id: "host-q1", role: "user", text, createdAt: 2}));
        await sendMessage("first question");
        const reply: ChatMessage = {id: "host-a1", role: "assistant", text: "an answer", createdAt: 3};
        // as wireEvents.ts does on chat.done
        const stream = Object.values(useChatStore.getState().streams).find((candidate) => candidate.conversationId === "c2")!;
        useChatStore.getState().finishStream(stream.streamId, reply);
        const shown = useChatStore.getState().conversations.c2!.messages;
        expect(shown.map((message) => message.id)).toEqual(["host-q1", "host-a1"]);

        const edits: {messageId: string; text: string}[] = [];
        fake.handle("chat.edit", ({messageId, text}) => {
            edits.push({messageId, text});
            return {id: "host-q2", role: "user", text, createdAt: 4};
        });
        await editAndResend("c2", shown[0]!.id, "first question, edited");
        expect(edits).toEqual([{messageId: "host-q1", text: "first question, edited"}]);
        // the edited message, shown at once, takes the host's id too: a second edit names it
        expect(useChatStore.getState().conversations.c2!.messages.map((message) => message.id)).toEqual(["host-q2"]);
    });
});

describe("+ New chat", () => {
    it("starts from the default settings, not the system prompt and sampling of the conversation shown", async () => {
        const created: (ChatSettings | undefined)[] = [];
        fake.handle("conversations.create", ({settings}) => {
            created.push(settings);
            return {id: `new-${created.length}`, title: "New chat", updatedAt: 5, messageCount: 0, messages: [], ...(settings != null && {settings})};
        });
        fake.handle("conversations.setSettings", ({settings}) => ({...conversation, settings}));
        useChatStore.getState().setActive("c1");
        expect(await saveSettings("c1", {systemPrompt: "You are a pirate.", temperature: 1.3, topK: 7})).toBeNull();
        await newConversation();
        expect(created).toEqual([DEFAULT_CHAT_SETTINGS]);
        expect(useChatStore.getState().conversations["new-1"]!.settings).toEqual(DEFAULT_CHAT_SETTINGS);

        // settings chosen with no conversation shown are the explicit "for the next new chat" choice
        useChatStore.getState().setActive(null);
        await saveSettings(null, {systemPrompt: "Be brief.", maxTokens: 64});
        await newConversation();
        expect(created[1]).toEqual({systemPrompt: "Be brief.", maxTokens: 64});
    });
});
