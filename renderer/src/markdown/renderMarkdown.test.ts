// @vitest-environment jsdom
import {describe, expect, it} from "vitest";
import {MAX_HIGHLIGHT_CHARS} from "./highlightCode";
import {renderMarkdown} from "./renderMarkdown";

function mount(html: string): HTMLElement {
    const root = document.createElement("div");
    root.innerHTML = html;
    document.body.append(root);
    return root;
}

const attacks = [
    "<script>window.pwned = 1</script>",
    "<img src=x onerror=\"window.pwned = 1\">",
    "[click me](javascript:window.pwned=1)",
    "<a href=\"javascript:window.pwned=1\">link</a>",
    "<a href=\"JaVaScRiPt&colon;window.pwned=1\">encoded</a>",
    "<svg onload=\"window.pwned=1\"><circle r=\"1\"/></svg>",
    "<iframe src=\"javascript:window.pwned=1\"></iframe>",
    "<div onclick=\"window.pwned=1\" style=\"position:fixed\">x</div>",
    "<form action=\"javascript:window.pwned=1\"><button>go</button></form>",
    "![img](x \"t\" onerror=window.pwned=1)",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.pwned=1>"
];

describe("renderMarkdown", () => {
    it("renders ordinary Markdown", () => {
        const html = renderMarkdown("# Title\n\nSome **bold** and `code`.\n\n- a\n- b\n\n[docs](https://example.com)");
        const root = mount(html);
        expect(root.querySelector("h1")?.textContent).toBe("Title");
        expect(root.querySelector("strong")?.textContent).toBe("bold");
        expect(root.querySelectorAll("li")).toHaveLength(2);
        const link = root.querySelector("a");
        expect(link?.getAttribute("href")).toBe("https://example.com");
        expect(link?.getAttribute("rel")).toContain("noopener");
    });

    it.each(attacks)("runs nothing from %s", (attack) => {
        const root = mount(renderMarkdown(`before\n\n${attack}\n\nafter`));
        expect(root.querySelector("script, iframe, img, svg, form, style, object, embed, math")).toBeNull();
        for (const element of root.querySelectorAll("*")) {
            for (const attribute of element.attributes) {
                expect(attribute.name.startsWith("on"), `${element.tagName} ${attribute.name}`).toBe(false);
                expect(attribute.value.toLowerCase().replace(/\s/g, "")).not.toContain("javascript:");
            }
            expect(element.hasAttribute("style")).toBe(false);
        }
        expect((window as unknown as {pwned?: number}).pwned).toBeUndefined();
        // the text around the attack survives (an unclosed raw-HTML block may swallow what follows it)
        expect(root.textContent).toContain("before");
    });

    it("keeps model text that merely looks like HTML readable", () => {
        const root = mount(renderMarkdown("Use `<script>` tags carefully: 1 < 2 && 3 > 2"));
        expect(root.querySelector("code")?.textContent).toBe("<script>");
        expect(root.textContent).toContain("1 < 2 && 3 > 2");
    });
});

describe("code blocks", () => {
    it("highlights a fenced block in its language with highlight.js classes only", () => {
        const root = mount(renderMarkdown("```python\ndef area(r):\n    return 3.14 * r ** 2  # circle\n```"));
        const code = root.querySelector("pre code")!;
        expect(code.className).toBe("hljs language-python");
        expect(code.textContent).toBe("def area(r):\n    return 3.14 * r ** 2  # circle\n");
        expect(code.querySelector(".hljs-keyword")?.textContent).toBe("def");
        expect(code.querySelector(".hljs-number")?.textContent).toBe("3.14");
        expect(code.querySelector(".hljs-comment")?.textContent).toBe("# circle");
    });

    it("recognises aliases; untagged, unknown-language and very long blocks stay plain", () => {
        expect(mount(renderMarkdown("```ts\nconst x: number = 1;\n```")).querySelector("code")?.className).toBe("hljs language-typescript");
        const untagged = mount(renderMarkdown("```\n#include <stdio.h>\nint main(void) { return 0; }\n```")).querySelector("code")!;
        expect(untagged.className).toBe("");
        expect(untagged.querySelector("span")).toBeNull();
        // small models often start a reply with indented text, which Markdown reads as a code block
        expect(mount(renderMarkdown("\t\u0017assistant were")).querySelector("code span")).toBeNull();
        const unknown = mount(renderMarkdown("```brainfuck\n++[>+<-]\n```")).querySelector("code")!;
        expect(unknown.textContent).toBe("++[>+<-]\n");
        expect(unknown.querySelector("span")).toBeNull();
        const long = `\`\`\`python\n${"x = 1\n".repeat(MAX_HIGHLIGHT_CHARS / 6 + 1)}\`\`\``;
        expect(mount(renderMarkdown(long)).querySelector("code span")).toBeNull();
    });

    it("code that looks like markup stays text, and model HTML cannot borrow the app's classes", () => {
        const root = mount(renderMarkdown("```html\n<script>alert(1)</script><img src=x onerror=alert(1)>\n```"));
        expect(root.querySelector("script, img")).toBeNull();
        expect(root.querySelector("code")?.textContent).toContain("<script>alert(1)</script>");
        const spoof = mount(renderMarkdown("<span class=\"crash-banner hljs-keyword\">x</span> <code class=\"error-box\">y</code> <span class=\"hljs-string\">z</span>"));
        const classes = [...spoof.querySelectorAll("[class]")].map((element) => element.getAttribute("class"));
        expect(classes).toEqual(["hljs-string"]);
    });
});
