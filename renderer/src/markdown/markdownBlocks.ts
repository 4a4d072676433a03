/**
 * What of a message is parsed as Markdown, and in which pieces, so that no content can stop the page (a reply of
 * 4,000,000 characters of nested blockquotes held the main thread for over a minute, and again after every reload:
 * e2e/specs/hugeConversation.e2e.ts opens one).
 * - Only the first {@link MAX_MARKDOWN_CHARS} characters are rendered as Markdown; the Markdown component folds the
 *   rest behind "Show all", which shows the text as plain text, up to {@link MAX_PLAIN_CHARS}.
 * - Blockquotes and list items nest at most {@link MAX_NESTING_DEPTH} deep on a line: marked lexes a quote's content
 *   again for every level (its blockquote tokenizer calls `blockTokens` on the inner text), so `>` repeated n times
 *   costs n passes; deeper markers are kept as text.
 * - The text is cut into top-level blocks at blank lines outside code fences, each rendered on its own: while a reply
 *   streams only its last block changes, so only that block is parsed again, never the whole message per token.
 *   A blank line is a cut only when the next line starts at the margin and does not start a list item, so list items
 *   and indented continuations stay in the block they belong to.
 */

/** Characters of one message rendered as Markdown. */
export const MAX_MARKDOWN_CHARS = 50_000;
/** Characters of one message "Show all" shows, as plain text; the whole text stays in Copy and the export. */
export const MAX_PLAIN_CHARS = 1_000_000;
/** Blockquote and list levels a line opens; its further markers show as text. */
export const MAX_NESTING_DEPTH = 8;

/** A fence opening or closing a code block: up to three spaces, then three or more backticks or tildes. */
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/** One container marker where the last one ended: a blockquote's `>` or a list item's marker, up to three spaces before it. */
const CONTAINER = /[ \t]{0,3}(>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))[ \t]?/y;
/** A list item's marker at the margin. */
const LIST_ITEM = /^(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/;

/** `text` cut to at most `max` characters at a block boundary where there is one (a whole block is never split). */
export function markdownPrefix(text: string, max = MAX_MARKDOWN_CHARS): string {
    if (text.length <= max)
        return text;
    const cut = text.lastIndexOf("\n\n", max);
    return text.slice(0, cut > max / 2 ? cut + 2 : max);
}

/**
 * `line` with at most `maxDepth` leading containers (blockquote markers and list item markers, which nest on one
 * line: `> > - - x`); the markers beyond are escaped so that they read as the characters they are.
 */
function capLineNesting(line: string, maxDepth: number): string {
    let position = 0;
    let depth = 0;
    let capped = "";
    for (;;) {
        CONTAINER.lastIndex = position;
        const marker = CONTAINER.exec(line);
        if (marker == null)
            break;
        const symbol = marker[1]!;
        capped += depth < maxDepth ? marker[0]
            : marker[0].replace(symbol, `${symbol.slice(0, -1)}\\${symbol.slice(-1)}`);
        depth++;
        position = CONTAINER.lastIndex;
    }
    return depth <= maxDepth ? line : capped + line.slice(position);
}

/**
 * `text` as blocks to render one by one (see the module comment), containers capped at `maxDepth` per line. Joined,
 * the blocks are `text` except for the escaped markers beyond the cap.
 */
export function markdownBlocks(text: string, maxDepth = MAX_NESTING_DEPTH): string[] {
    const lines = text.split("\n");
    const blocks: string[] = [];
    let block: string[] = [];
    let fence: {char: string; length: number} | null = null;
    let blank = false;
    for (const line of lines) {
        const opening = FENCE.exec(line);
        if (fence == null && blank && line !== "" && !/^\s/.test(line) && !LIST_ITEM.test(line) && block.length > 0) {
            blocks.push(block.join("\n") + "\n");
            block = [];
        }
        if (fence != null) {
            if (opening != null && opening[1]![0] === fence.char && opening[1]!.length >= fence.length && line.slice(opening[0].length).trim() === "")
                fence = null;
            block.push(line);
            blank = false;
            continue;
        }
        if (opening != null) {
            fence = {char: opening[1]![0]!, length: opening[1]!.length};
            block.push(line);
            blank = false;
            continue;
        }
        block.push(capLineNesting(line, maxDepth));
        blank = line.trim() === "";
    }
    blocks.push(block.join("\n"));
    return blocks;
}
