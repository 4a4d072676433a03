/**
 * How deep JSON nests, measured without recursion, so a body of 25,000 nested arrays is refused, not a stack overflow
 * (JSON.stringify and every recursive reader of it would overflow, answering 500): a scan of the text first (one pass
 * over its bytes, cheap enough for a 4 MiB body on the server's thread), and only for JSON that is too deep a walk of
 * the parsed value for the path where.
 */

const OPEN_BRACE = 0x7b, OPEN_BRACKET = 0x5b, CLOSE_BRACE = 0x7d, CLOSE_BRACKET = 0x5d, QUOTE = 0x22, BACKSLASH = 0x5c;

/** The deepest nesting of arrays and objects in JSON `text` (valid or not: it only counts brackets outside strings). */
export function jsonDepth(text: Uint8Array): number {
    let depth = 0;
    let deepest = 0;
    let inString = false;
    for (let index = 0; index < text.length; index++) {
        const byte = text[index]!;
        if (inString) {
            if (byte === BACKSLASH)
                index++;
            else if (byte === QUOTE)
                inString = false;
        } else if (byte === QUOTE)
            inString = true;
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
            if (++depth > deepest)
                deepest = depth;
        } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET)
            depth--;
    }
    return deepest;
}

/** The path (`tools[0].function.parameters.properties.a…`) of the first value deeper than `maxDepth`, or `null`. */
export function tooDeepJson(value: unknown, maxDepth: number): string | null {
    type Step = {value: object; depth: number; key: string | number | null; parent: Step | null};
    const stack: Step[] = typeof value === "object" && value != null ? [{value, depth: 0, key: null, parent: null}] : [];
    for (let next = stack.pop(); next != null; next = stack.pop()) {
        if (next.depth >= maxDepth) {
            const path: (string | number)[] = [];
            for (let step: Step | null = next; step?.key != null; step = step.parent)
                path.unshift(step.key);
            return showPath(path);
        }
        const entries: [string | number, unknown][] = Array.isArray(next.value) ? next.value.map((item, index) => [index, item]) : Object.entries(next.value);
        for (const [key, item] of entries)
            if (typeof item === "object" && item != null)
                stack.push({value: item, depth: next.depth + 1, key, parent: next});
    }
    return null;
}

/** A path as a field name, its first steps and its last, around an ellipsis when long. */
function showPath(path: readonly (string | number)[]): string {
    const text = (steps: readonly (string | number)[]) => steps.map((step, index) =>
        typeof step === "number" ? `[${step}]` : /^[A-Za-z_$][\w$-]*$/.test(step) ? `${index === 0 ? "" : "."}${step}` : `[${JSON.stringify(step.slice(0, 40))}]`).join("");
    return path.length <= 12 ? text(path) : `${text(path.slice(0, 8))}…(${path.length} levels)`;
}
