// @vitest-environment jsdom
// The sidebar's search and import: the list shows only the host's hits with where each matched (as text, never
// markup), a slower answer to an older search never replaces a newer one, Esc brings the whole list back, and a refused
// import says why and changes nothing.
import {act} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeAll, beforeEach, describe, expect, it} from "vitest";
import type {ConversationSearchHit, ConversationSummary} from "../../../../../../electron/contract/ipc";
import {TensorwiseError} from "../../../../../../electron/contract/TensorwiseError";
import {useChatStore} from "../../../../stores/chatStore";
import {useConversationListStore} from "../../../../stores/conversationListStore";
import {deferred, fakeBridge} from "../../../../testing/fakeBridge";
import {initTransport} from "../../../../transport/getTransport";
import {ConversationList} from "./ConversationList";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

const fake = fakeBridge();
const summaries: ConversationSummary[] = [
    {id: "c3", title: "Pancakes", updatedAt: 3, messageCount: 2},
    {id: "c2", title: "Borrow checker", updatedAt: 2, messageCount: 2},
    {id: "c1", title: "Bash loops", updatedAt: 1, messageCount: 4}
];

let container: HTMLDivElement;
let root: Root;

beforeAll(() => {
    window.tensorwise = fake.bridge;
    initTransport();
    fake.handle("conversations.list", () => summaries);
    fake.handle("conversations.notices", () => []);
});
beforeEach(async () => {
    useChatStore.getState().setSummaries(summaries);
    useConversationListStore.getState().setQuery("");
    useConversationListStore.getState().setError(null);
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
    await act(async () => root.render(<ConversationList/>));
});
afterEach(async () => {
    await act(async () => root.unmount());
    container.remove();
});

function titles(): string[] {
    return [...container.querySelectorAll("[data-testid=conversation-item] .conversation-title")].map((item) => item.textContent ?? "");
}

function searchBox(): HTMLInputElement {
    return container.querySelector<HTMLInputElement>("[data-testid=conversation-search]")!;
}

/** Types `text` into the search box as a user would (React listens to the native input event). */
async function type(text: string): Promise<void> {
    await act(async () => {
        const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!;
        setter.call(searchBox(), text);
        searchBox().dispatchEvent(new Event("input", {bubbles: true}));
    });
}

/** Lets the search's typing pause pass and its answer arrive. */
async function settle(ms = 250): Promise<void> {
    await act(async () => new Promise((resolve) => setTimeout(resolve, ms)));
}

const borrowHit: ConversationSearchHit = {
    ...summaries[1]!, match: {in: "message", messageId: "m1", role: "assistant", before: "the ", match: "<b>borrow</b>", after: " of x"}
};

describe("the conversation search", () => {
    it("shows only the host's hits, the match as text, and Esc brings every conversation back", async () => {
        const asked: string[] = [];
        fake.handle("conversations.search", ({query}) => {
            asked.push(query);
            return [borrowHit];
        });
        await type("borrow");
        await settle();
        expect(asked).toEqual(["borrow"]);
        expect(titles()).toEqual(["Borrow checker"]);
        const match = container.querySelector("[data-testid=search-match]")!;
        expect(match.textContent).toBe("Reply: the <b>borrow</b> of x");
        expect(match.querySelector("mark")?.textContent).toBe("<b>borrow</b>");
        expect(match.querySelector("b")).toBeNull();

        await act(async () => {
            searchBox().dispatchEvent(new KeyboardEvent("keydown", {key: "Escape", bubbles: true}));
        });
        expect(searchBox().value).toBe("");
        expect(titles()).toEqual(["Pancakes", "Borrow checker", "Bash loops"]);
    });

    it("keeps the newer search's hits when the older one answers last", async () => {
        const slow = deferred<ConversationSearchHit[]>();
        fake.handle("conversations.search", ({query}) => query === "b" ? slow.promise : [borrowHit]);
        await type("b");
        await settle();
        await type("borrow");
        await settle();
        expect(titles()).toEqual(["Borrow checker"]);
        await act(async () => slow.resolve(summaries.map((summary) => ({...summary, match: {in: "title"}}))));
        expect(titles()).toEqual(["Borrow checker"]);
    });

    it("says so when nothing matches", async () => {
        fake.handle("conversations.search", () => []);
        await type("zebra");
        await settle();
        expect(titles()).toEqual([]);
        expect(container.querySelector("[data-testid=search-empty]")?.textContent).toBe("No conversation contains “zebra”");
    });
});

describe("importing a conversation", () => {
    it("shows the host's refusal above the list and changes nothing", async () => {
        const sentence = "This file cannot be imported: it is version 2 of the conversation file, and this app reads version 1.";
        const sent: string[] = [];
        fake.handle("conversations.import", ({text}) => {
            sent.push(text);
            throw new TensorwiseError("bad-request", sentence);
        });
        const input = container.querySelector<HTMLInputElement>("[data-testid=import-conversation-file]")!;
        const content = '{"format": "tensorwise.conversation", "version": 2}';
        const file = new File([content], "chat.json", {type: "application/json"});
        // jsdom's File has no text(), which every browser's has
        Object.defineProperty(file, "text", {value: () => Promise.resolve(content)});
        Object.defineProperty(input, "files", {value: [file], configurable: true});
        await act(async () => input.dispatchEvent(new Event("change", {bubbles: true})));
        await settle(50);
        expect(sent).toEqual(['{"format": "tensorwise.conversation", "version": 2}']);
        expect(container.querySelector("[data-testid=conversation-list-error]")?.textContent).toBe(sentence);
        expect(titles()).toEqual(["Pancakes", "Borrow checker", "Bash loops"]);
        expect(useChatStore.getState().activeId).toBeNull();
    });
});
