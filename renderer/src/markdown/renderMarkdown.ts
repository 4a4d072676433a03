/**
 * Model output is untrusted text. It is rendered as Markdown, then sanitised by DOMPurify: no scripts, no event
 * handler attributes, no images or frames, and links only to http(s)/mailto. (The CSP blocks inline script too; this
 * is the first line, not the only one.) Code blocks are syntax-highlighted (highlightCode.ts) before sanitising; the
 * only classes that survive are highlight.js's own, so model text cannot dress itself in the app's styles.
 */
import DOMPurify from "dompurify";
import {Marked, type Tokens} from "marked";
import {highlightCode} from "./highlightCode";

function escapeHtml(text: string): string {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const marked = new Marked({
    gfm: true, breaks: true, async: false,
    renderer: {
        code({text, lang, escaped}: Tokens.Code): string | false {
            if (escaped === true)
                return false;
            // as marked's own code renderer: one trailing newline
            const highlighted = highlightCode(text.replace(/\n+$/, ""), lang);
            if (highlighted == null)
                return false;
            return `<pre><code class="hljs language-${escapeHtml(highlighted.language)}">${highlighted.html}\n</code></pre>\n`;
        }
    }
});

/** A class token highlight.js writes (`hljs`, `hljs-keyword`, `language-python`, a sub-scope like `function_`). */
const HIGHLIGHT_CLASS = /^(?:hljs(?:-[a-z0-9_-]+)?|language-[a-z0-9+#._-]+|[a-z]+_+)$/i;

const ALLOWED_TAGS = [
    "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "li", "ol", "p",
    "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul", "span"
];
const ALLOWED_ATTR = ["href", "title", "align", "start", "class"];
const SAFE_URL = /^(?:https?:|mailto:)/i;

let hooked = false;

function purifier(): typeof DOMPurify {
    if (!hooked) {
        DOMPurify.addHook("uponSanitizeAttribute", (node, data) => {
            if (data.attrName !== "class")
                return;
            const tokens = data.attrValue.split(/\s+/).filter((token) => token !== "");
            data.keepAttr = (node.tagName === "SPAN" || node.tagName === "CODE") && tokens.length > 0 && tokens.every((token) => HIGHLIGHT_CLASS.test(token));
            data.forceKeepAttr = undefined;
        });
        DOMPurify.addHook("afterSanitizeAttributes", (node) => {
            if (node.tagName === "A") {
                const href = node.getAttribute("href") ?? "";
                if (!SAFE_URL.test(href.trim()))
                    node.removeAttribute("href");
                else {
                    node.setAttribute("target", "_blank");
                    node.setAttribute("rel", "noopener noreferrer nofollow");
                }
            }
        });
        hooked = true;
    }
    return DOMPurify;
}

/** Markdown → sanitised HTML, safe to insert into the page. */
export function renderMarkdown(text: string): string {
    const html = marked.parse(text) as string;
    return purifier().sanitize(html, {
        ALLOWED_TAGS, ALLOWED_ATTR, ALLOWED_URI_REGEXP: SAFE_URL, ADD_ATTR: ["target", "rel"], KEEP_CONTENT: true
    });
}
