/**
 * Model output is untrusted text. It is rendered as Markdown, then sanitised by DOMPurify: no scripts, no event
 * handler attributes, no images or frames, and links only to http(s)/mailto. (The CSP blocks inline script too; this
 * is the first line, not the only one.)
 */
import DOMPurify from "dompurify";
import {Marked} from "marked";

const marked = new Marked({gfm: true, breaks: true, async: false});

const ALLOWED_TAGS = [
    "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "li", "ol", "p",
    "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul", "span"
];
const ALLOWED_ATTR = ["href", "title", "align", "start"];
const SAFE_URL = /^(?:https?:|mailto:)/i;

let hooked = false;

function purifier(): typeof DOMPurify {
    if (!hooked) {
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
