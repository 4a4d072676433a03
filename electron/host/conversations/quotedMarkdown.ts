/**
 * A message's text made safe to place under a heading of the Markdown export: the text stays Markdown (a reply's lists,
 * emphasis and code blocks still read as such), but it can neither run HTML in a viewer that renders the file (`<script>`,
 * `<img onerror>`) nor forge the export's own structure (a line `## User` would read as a turn that never happened).
 * By CommonMark's rules: outside code, every `<` and `&` is written as its entity (no raw HTML, no entity the author did
 * not type), and a line that would open an ATX heading (`#` … `######`, also inside a quote or a list item) or underline
 * a setext one (`===`, `---`) gets a backslash before it; inside a fenced code block nothing is changed (it shows as
 * typed), and a fence the message leaves open is closed at its end, so it cannot swallow the turns after it. Inline
 * code spans are left as typed on their line.
 */

/** A fence opening or closing a code block: up to three spaces, then three or more backticks or tildes. */
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/** What may stand before a heading on its line: indentation, quote markers, a list item's marker. */
const CONTAINERS = String.raw`(?:[ 	]*>)*[ 	]*(?:(?:[-*+]|\d{1,9}[.)])[ 	]+)?[ 	]*`;
/** A line that would start an ATX heading: one to six `#` followed by a space or the end of the line. */
const ATX_HEADING = new RegExp(String.raw`^(${CONTAINERS})(#{1,6})(?=[ 	]|$)`);
/** A line that could underline the line above into a setext heading. */
const SETEXT_UNDERLINE = new RegExp(String.raw`^(${CONTAINERS})(=+|-+)[ 	]*$`);

/** `text` escaped for the export (see the module comment). */
export function quotedMarkdown(text: string): string {
    const lines = text.replace(/\r\n?/g, "\n").split("\n");
    const out: string[] = [];
    let fence: {char: string; length: number} | null = null;
    for (const line of lines) {
        const opening = FENCE.exec(line);
        if (fence != null) {
            out.push(line);
            // a closing fence: the same character, at least as long, nothing after it but spaces
            if (opening != null && opening[1]![0] === fence.char && opening[1]!.length >= fence.length && line.slice(opening[0].length).trim() === "")
                fence = null;
            continue;
        }
        if (opening != null && !(opening[1]![0] === "`" && line.slice(opening[0].length).includes("`"))) {
            fence = {char: opening[1]![0]!, length: opening[1]!.length};
            out.push(escapeInfo(line));
            continue;
        }
        out.push(escapeLine(line));
    }
    if (fence != null)
        out.push(fence.char.repeat(fence.length));
    return out.join("\n");
}

/** Text the export puts on a line of its own making (a title after `# `, a model's name): one line, no HTML. */
export function quotedInline(text: string): string {
    return escapeInline(text.replace(/\s+/g, " ").trim());
}

/** A fence's info string (`~~~ <b>`) is text a renderer may show: escaped like a line of text, the fence itself kept. */
function escapeInfo(line: string): string {
    const fence = FENCE.exec(line)![0];
    return fence + escapeInline(line.slice(fence.length));
}

function escapeLine(line: string): string {
    const heading = ATX_HEADING.exec(line);
    if (heading != null)
        return `${heading[1]}\\${heading[2]}${escapeInline(line.slice(heading[0].length))}`;
    const underline = SETEXT_UNDERLINE.exec(line);
    if (underline != null)
        return `${underline[1]}\\${underline[2]}`;
    return escapeInline(line);
}

/** `<` and `&` as entities outside the inline code spans of one line (a span's text shows as typed). */
function escapeInline(line: string): string {
    let out = "";
    let index = 0;
    while (index < line.length) {
        const tick = line.indexOf("`", index);
        if (tick < 0) {
            out += entities(line.slice(index));
            break;
        }
        out += entities(line.slice(index, tick));
        const run = /^`+/.exec(line.slice(tick))![0];
        const close = line.indexOf(run, tick + run.length);
        // a span closes with the same number of backticks (not part of a longer run)
        if (close >= 0 && line[close + run.length] !== "`") {
            out += line.slice(tick, close + run.length);
            index = close + run.length;
        } else {
            out += run;
            index = tick + run.length;
        }
    }
    return out;
}

function entities(text: string): string {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
}
