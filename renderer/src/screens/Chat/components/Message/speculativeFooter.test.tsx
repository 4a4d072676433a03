// @vitest-environment jsdom
// A reply's footer says what speculative decoding did: draft tokens accepted of those proposed; nothing without it.
import {act} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import type {ChatMessage} from "../../../../../../electron/contract/ipc";
import {Message} from "./Message";

(globalThis as {IS_REACT_ACT_ENVIRONMENT?: boolean}).IS_REACT_ACT_ENVIRONMENT = true;

let container: HTMLDivElement;
let root: Root;
beforeEach(() => {
    container = document.createElement("div");
    document.body.append(container);
    root = createRoot(container);
});
afterEach(() => {
    act(() => root.unmount());
    container.remove();
});

const reply = (extra: Partial<ChatMessage>): ChatMessage => ({id: "a", role: "assistant", text: "loop loop loop", createdAt: 1,
    timing: {promptTokens: 5, generatedTokens: 40, ttftMs: 30, tpotMs: 12, totalMs: 500}, ...extra});

describe("a reply's speculation in its footer", () => {
    it("shows the draft tokens accepted of those proposed, naming the kind", () => {
        act(() => root.render(<Message message={reply({speculative: {kind: "ngram", drafted: 61, accepted: 31}})} actions={{}}/>));
        const shown = container.querySelector("[data-testid=message-speculative]");
        expect(shown?.textContent).toBe("drafts 31 / 61 accepted");
        expect(shown?.getAttribute("title")).toMatch(/n-gram lookup/);
    });

    it("shows nothing for a reply without speculation, or one whose speculation never found a draft", () => {
        act(() => root.render(<><Message message={reply({})} actions={{}}/><Message message={reply({speculative: {kind: "ngram", drafted: 0, accepted: 0}})} actions={{}}/></>));
        expect(container.querySelector("[data-testid=message-speculative]")).toBeNull();
        expect(container.querySelectorAll("[data-testid=message-timing]")).toHaveLength(2);
    });
});
