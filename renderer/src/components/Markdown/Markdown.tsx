import {memo, useMemo, useState} from "react";
import {markdownBlocks, markdownPrefix, MAX_PLAIN_CHARS} from "../../markdown/markdownBlocks";
import {renderMarkdown} from "../../markdown/renderMarkdown";
import "./Markdown.css";

/**
 * Untrusted model output as sanitised Markdown (see renderMarkdown), bounded so no content can stop the page
 * (markdownBlocks.ts): the first MAX_MARKDOWN_CHARS characters as Markdown, one block at a time, so a reply
 * that streams parses only its last block again; a longer text folded behind "Show all", which shows it as plain text
 * up to {@link MAX_PLAIN_CHARS}.
 */
export function Markdown({text}: {text: string}) {
    const [showAll, setShowAll] = useState(false);
    const shown = useMemo(() => markdownPrefix(text), [text]);
    const blocks = useMemo(() => blockCache.get(shown, markdownBlocks), [shown]);
    const folded = shown.length < text.length;
    if (folded && showAll) {
        const plain = text.slice(0, MAX_PLAIN_CHARS);
        return (
            <div className="markdown markdown-plain" data-testid="markdown-plain">
                {plain}
                <div className="markdown-fold faint" data-testid="markdown-fold">
                    {plain.length < text.length
                        ? `Shown as plain text: the first ${plain.length.toLocaleString("en-US")} of ${text.length.toLocaleString("en-US")} characters (Copy or export the conversation for the rest).`
                        : `Shown as plain text: all ${text.length.toLocaleString("en-US")} characters.`}
                    {" "}<button className="button ghost small" type="button" onClick={() => setShowAll(false)}>Show less</button>
                </div>
            </div>
        );
    }
    return (
        <div className="markdown">
            {blocks.map((block, index) => <MarkdownBlock key={index} text={block}/>)}
            {folded && (
                <div className="markdown-fold faint" data-testid="markdown-fold">
                    {`Showing the first ${shown.length.toLocaleString("en-US")} of ${text.length.toLocaleString("en-US")} characters.`}
                    {" "}<button className="button ghost small" type="button" data-testid="markdown-show-all" onClick={() => setShowAll(true)}>Show all</button>
                </div>
            )}
        </div>
    );
}

/**
 * What was parsed, kept across mounts: going back to the Chat screen mounts every message again, and a long reply's
 * 50,000 characters of Markdown were parsed again each time (a click to the Chat screen took 2.5× an ordinary chat's
 * with one open: e2e/specs/hugeConversation.e2e.ts). Least recently used first out; bounded by characters kept.
 */
class ParsedCache<T> {
    private readonly entries = new Map<string, T>();
    private chars = 0;

    /** `make(key)`, made once while kept; the least recently used go first once the keys pass {@link CACHE_CHARS}. */
    get(key: string, make: (key: string) => T): T {
        const hit = this.entries.get(key);
        if (hit !== undefined) {
            this.entries.delete(key);
            this.entries.set(key, hit);
            return hit;
        }
        const value = make(key);
        this.entries.set(key, value);
        this.chars += key.length;
        for (const old of this.entries.keys()) {
            if (this.chars <= CACHE_CHARS || old === key) break;
            this.entries.delete(old);
            this.chars -= old.length;
        }
        return value;
    }
}

const CACHE_CHARS = 4_000_000;
const blockCache = new ParsedCache<string[]>();
const htmlCache = new ParsedCache<string>();

/** One top-level block, parsed again only when its own text changes. */
const MarkdownBlock = memo(function MarkdownBlock({text}: {text: string}) {
    const html = useMemo(() => htmlCache.get(text, renderMarkdown), [text]);
    return <div className="markdown-block" dangerouslySetInnerHTML={{__html: html}}/>;
});
