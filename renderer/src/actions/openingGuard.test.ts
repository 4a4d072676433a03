// @vitest-environment jsdom
// A conversation that stopped the page must not stop it again at every start (after a reload the page froze
// again, because the newest conversation opens by itself). The page is the real Chat screen; a freeze is a start that
// never reaches the point where the conversation's messages are on the page.
import {act, createElement} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeAll, beforeEach, describe, expect, it} from "vitest";
import type {Conversation, ConversationSummary} from "../../../electron/contract/ipc";
import {Chat} from "../screens/Chat/Chat";
import {useChatStore} from "../stores/chatStore";
import {fakeBridge} from "../testing/fakeBridge";
import {initTransport} from "../transport/getTransport";
import {openConversation, openNewestConversation, refreshConversations} from "./chatActions";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

const fake = fakeBridge();
const conversation = (id: string, title: string): Conversation => ({id, title, updatedAt: 1, messageCount: 1,
    messages: [{id: `${id}-m`, role: "assistant", text: `The reply of ${title}.`, createdAt: 1}]});
const newest = conversation("c2", "Huge reply");
const older = conversation("c1", "Small talk");

let container: HTMLDivElement;
let root: Root;
beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
    fake.handle("conversations.list", () => [newest, older].map(({messages: _messages, ...summary}) => summary as ConversationSummary));
    fake.handle("conversations.notices", () => []);
    fake.handle("conversations.get", ({id}) => (id === newest.id ? newest : older));
});
beforeEach(() => {
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
});
afterEach(() => {
    act(() => root.unmount());
    container.remove();
});

/** A fresh start of the page: empty stores, the list read, the newest conversation opened unless it stopped the page. */
async function start(): Promise<void> {
    useChatStore.setState({activeId: null, conversations: {}, notOpened: null, summaries: []});
    await refreshConversations();
    await openNewestConversation();
}

const showChat = () => act(async () => root.render(createElement(Chat)));

describe("the conversation opened at start", () => {
    it("is not opened by itself again after the page stopped while showing it, until the page has shown it", async () => {
        localStorage.clear();
        // first start: the newest opens, and the page stops before its messages are shown (nothing rendered)
        await start();
        expect(useChatStore.getState().activeId).toBe(newest.id);

        // the next start leaves it closed, and the list says why
        await start();
        expect(useChatStore.getState().activeId).toBeNull();
        await showChat();
        expect(container.querySelector("[data-testid=conversation-not-opened]")!.textContent)
            .toMatch(/^“Huge reply” was not opened at start: the app stopped while showing it last time/);
        expect(container.textContent).not.toContain("The reply of Huge reply.");

        // the user opens it from the list and the page shows it: it opens by itself again from then on
        await act(async () => openConversation(newest.id));
        expect(container.textContent).toContain("The reply of Huge reply.");
        expect(container.querySelector("[data-testid=conversation-not-opened]")).toBeNull();
        act(() => root.unmount());
        root = createRoot(container);
        await start();
        expect(useChatStore.getState().activeId).toBe(newest.id);
    });

    it("opens the newest as before when the page showed the last one it opened", async () => {
        localStorage.clear();
        await act(async () => openConversation(older.id));
        await showChat();
        expect(container.textContent).toContain("The reply of Small talk.");
        await start();
        expect(useChatStore.getState().activeId).toBe(newest.id);
    });
});
