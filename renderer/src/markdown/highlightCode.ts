/**
 * Syntax highlighting for code blocks in model replies: highlight.js's core with a handful of common languages
 * registered one by one (the full build would add ~1 MB to the bundle). The result is HTML of `<span class="hljs-…">`
 * around escaped text; renderMarkdown.ts sanitises it like the rest of the reply.
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = {bash, c, cpp, css, go, java, javascript, json, python, rust, sql, typescript, xml, yaml};
for (const [name, language] of Object.entries(LANGUAGES))
    hljs.registerLanguage(name, language);

/**
 * Blocks longer than this are shown plain: a reply is re-rendered on every streamed batch, and highlighting is
 * linear in the block's length.
 */
export const MAX_HIGHLIGHT_CHARS = 20_000;

/** The languages a code block can be highlighted in (their aliases too: `js`, `ts`, `py`, `sh`, `html`, …). */
export const HIGHLIGHTED_LANGUAGES = Object.keys(LANGUAGES);

/**
 * `code` as highlighted HTML and the language's registered name, or `null` when the block's tag names no registered
 * language (or none: guessing costs a pass per language on every streamed batch, and small models often start a reply
 * with indented text that Markdown reads as code), or when the block is longer than {@link MAX_HIGHLIGHT_CHARS}.
 */
export function highlightCode(code: string, languageTag: string | undefined): {html: string; language: string} | null {
    const tag = languageTag?.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
    const language = tag === "" ? undefined : hljs.getLanguage(tag);
    if (language == null || code.length > MAX_HIGHLIGHT_CHARS)
        return null;
    // the registered name, not the alias the reply used (`ts` → `typescript`)
    const name = HIGHLIGHTED_LANGUAGES.find((registered) => hljs.getLanguage(registered) === language) ?? tag;
    return {html: hljs.highlight(code, {language: name, ignoreIllegals: true}).value, language: name};
}
