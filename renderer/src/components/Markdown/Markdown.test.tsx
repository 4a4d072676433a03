// @vitest-environment jsdom
// Content that stopped the page: a reply of 4,000,000 characters of nested Markdown blockquotes held the main
// thread for over a minute. What is rendered is bounded by construction (markdownBlocks.ts), checked here on the DOM:
// the elements, the nesting depth and the characters rendered as Markdown are capped whatever the reply's size, the
// rest is one click away as plain text, and a streamed reply parses only its last block again.
import {act} from "react";
import {createRoot, type Root} from "react-dom/client";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {MAX_MARKDOWN_CHARS, MAX_NESTING_DEPTH, MAX_PLAIN_CHARS} from "../../markdown/markdownBlocks";
import {Markdown} from "./Markdown";

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

const render = (text: string) => act(() => root.render(<Markdown text={text}/>));

/** The deepest blockquote nesting in the page. */
function quoteDepth(): number {
    let deepest = 0;
    for (const quote of container.querySelectorAll("blockquote")) {
        let depth = 0;
        for (let node: Element | null = quote; node != null; node = node.parentElement)
            depth += node.tagName === "BLOCKQUOTE" ? 1 : 0;
        deepest = Math.max(deepest, depth);
    }
    return deepest;
}

/** `unit` repeated to exactly `length` characters. */
const sized = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

describe("Markdown, bounded", () => {
    it("renders a 4,000,000-character reply of nested blockquotes as a bounded page, the rest one click away", () => {
        const text = sized(`${">".repeat(2000)} deep\n`, 4_000_000);
        render(text);
        // a few hundred elements, quotes nested no deeper than the cap, at most the cap's characters as Markdown
        expect(container.querySelectorAll("*").length).toBeLessThan(1000);
        expect(quoteDepth()).toBe(MAX_NESTING_DEPTH);
        const markdown = container.querySelector(".markdown")!;
        expect((markdown.textContent ?? "").length).toBeLessThanOrEqual(MAX_MARKDOWN_CHARS);
        expect(container.querySelector("[data-testid=markdown-fold]")!.textContent).toMatch(/^Showing the first [\d,]+ of 4,000,000 characters\. Show all$/);

        act(() => container.querySelector<HTMLButtonElement>("[data-testid=markdown-show-all]")!.click());
        const plain = container.querySelector("[data-testid=markdown-plain]")!;
        // plain text: no Markdown element at all, and at most the plain cap of characters
        expect(plain.querySelectorAll("blockquote").length).toBe(0);
        expect(container.querySelectorAll("*").length).toBeLessThan(10);
        expect(plain.firstChild!.textContent!.length).toBe(MAX_PLAIN_CHARS);
        expect(container.querySelector("[data-testid=markdown-fold]")!.textContent).toMatch(/the first 1,000,000 of 4,000,000 characters/);
    }, 60_000);

    it("caps blockquotes and list items nested on one line, keeping the deeper markers as text", () => {
        render(`${"> ".repeat(30)}bottom\n\n${"- ".repeat(30)}item`);
        expect(quoteDepth()).toBe(MAX_NESTING_DEPTH);
        expect(container.querySelector("blockquote")!.textContent).toContain(`${"> ".repeat(30 - MAX_NESTING_DEPTH).trim()} bottom`);
        let lists = 0;
        for (let list = container.querySelector("ul"); list != null; list = list.querySelector("ul"))
            lists++;
        expect(lists).toBe(MAX_NESTING_DEPTH);
    });

    it("shows a long ordinary reply's start as Markdown and all of it as plain text on request, and back", () => {
        const text = sized("A paragraph with **bold** words in it.\n\n", 200_000);
        render(text);
        expect(container.querySelectorAll("strong").length).toBeGreaterThan(100);
        expect((container.querySelector(".markdown")!.textContent ?? "").length).toBeLessThanOrEqual(MAX_MARKDOWN_CHARS);
        act(() => container.querySelector<HTMLButtonElement>("[data-testid=markdown-show-all]")!.click());
        expect(container.querySelector("[data-testid=markdown-plain]")!.firstChild!.textContent).toBe(text);
        expect(container.querySelector("[data-testid=markdown-fold]")!.textContent).toMatch(/all 200,000 characters/);
        act(() => container.querySelector<HTMLButtonElement>("[data-testid=markdown-fold] button")!.click());
        expect(container.querySelector("[data-testid=markdown-plain]")).toBeNull();
    });

    it("leaves a short reply whole: no fold, its Markdown as before", () => {
        render("# Title\n\nSome **bold**.\n\n- a\n- b\n\n```js\nconst x = 1;\n\nconst y = 2;\n```\n\nafter");
        expect(container.querySelector("[data-testid=markdown-fold]")).toBeNull();
        expect(container.querySelector("h1")!.textContent).toBe("Title");
        expect(container.querySelectorAll("li")).toHaveLength(2);
        // the blank line inside the fence does not cut the code block
        expect(container.querySelectorAll("pre")).toHaveLength(1);
        expect(container.querySelector("pre")!.textContent).toBe("const x = 1;\n\nconst y = 2;\n");
    });

    it("parses only the last block again while a reply streams: the blocks before keep their elements", () => {
        const paragraphs = Array.from({length: 40}, (_, index) => `Paragraph ${index} has *some* words in it.`);
        const tokens = paragraphs.join("\n\n").split(/(?<= )/);
        let text = "";
        let first: Element | null = null;
        for (const token of tokens) {
            text += token;
            render(text);
            first ??= text.includes("\n\nParagraph 1") ? container.querySelector(".markdown p") : null;
        }
        expect(first).not.toBeNull();
        // the first paragraph's element is the one made when it was complete, untouched by the hundreds of updates after
        expect(container.querySelector(".markdown p")).toBe(first);
        expect(container.querySelectorAll("em")).toHaveLength(40);
        expect(container.querySelectorAll("p")).toHaveLength(40);
    });
});
