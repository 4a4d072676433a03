// @vitest-environment jsdom
// A reasoning model's reply in the chat: the thinking folded into its own "Thought" block above the answer, not read as
// part of the answer (the Markdown sanitizer used to drop the tags and keep their text in the answer).
import {act} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {ReplyText} from "./ReplyText";

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

const render = (text: string) => act(() => root.render(<ReplyText text={text}/>));

describe("ReplyText", () => {
    it("folds the thinking away above the answer", () => {
        render("<think>\nThe user wants **two** things.\n</think>\n\nHere they are.");
        const thinking = container.querySelector<HTMLDetailsElement>("[data-testid='reply-thinking']")!;
        expect(thinking.open).toBe(false);
        expect(thinking.querySelector("summary")!.textContent).toMatch(/^Thought/);
        expect(thinking.querySelector("strong")!.textContent).toBe("two");
        const answer = [...container.children].filter((element) => element !== thinking).map((element) => element.textContent).join("");
        expect(answer.trim()).toBe("Here they are.");
        expect(answer).not.toContain("The user wants");
    });

    it("says it is still thinking while the thinking streams, with no answer yet", () => {
        render("<think>\nHmm");
        expect(container.querySelector("[data-testid='reply-thinking'] summary")!.textContent).toMatch(/^Thinking…/);
        expect(container.querySelectorAll(".markdown")).toHaveLength(1);
    });

    it("a reply without thinking is the answer alone", () => {
        render("Just **this**.");
        expect(container.querySelector("[data-testid='reply-thinking']")).toBeNull();
        expect(container.textContent?.trim()).toBe("Just this.");
    });
});
