/**
 * Building blocks for the regex sources handed to llama.cpp's tensor buffer-type overrides.
 *
 * Everything produced here uses only syntax that means the same in JavaScript `RegExp` (no flags) and in C++
 * `std::regex` with the default ECMAScript grammar: literals, `\`-escaped syntax characters, `\xHH`, `[0-9]`-style
 * classes, `(?:…)`, `|`, `+`, `^` and `$`. It never emits `,` or `=` (llama.cpp's `--override-tensor` parser splits
 * on both; source: `parse_tensor_buffer_overrides`, common/arg.cpp), so every pattern survives the CLI too.
 */

const SYNTAX_CHARACTERS = /[\\^$.*+?()[\]{}|]/g;

/**
 * Escapes `text` so it matches itself literally. `,` and `=` become `\x2C` / `\x3D` so the pattern can be written
 * as `<pattern>=<buffer type>` in a comma-separated `--override-tensor` list.
 */
export function escapeRegexLiteral(text: string): string {
    return text.replace(SYNTAX_CHARACTERS, "\\$&").replace(/,/g, "\\x2C").replace(/=/g, "\\x3D");
}

/** Whether `source` has a `|` outside every group and class (i.e. it must be grouped before concatenation). */
function hasTopLevelAlternation(source: string): boolean {
    let depth = 0;
    let inClass = false;
    for (let i = 0; i < source.length; i++) {
        const char = source[i];
        if (char === "\\") i++;
        else if (inClass) inClass = char !== "]";
        else if (char === "[") inClass = true;
        else if (char === "(") depth++;
        else if (char === ")") depth--;
        else if (char === "|" && depth === 0) return true;
    }
    return false;
}

/** Wraps `source` in a non-capturing group when it has a top-level alternation, so it can be concatenated. */
export function groupIfAlternation(source: string): string {
    return hasTopLevelAlternation(source) ? `(?:${source})` : source;
}

/**
 * Regex source matching exactly the given strings (assuming the caller anchors it), with their common prefix and
 * suffix factored out: `ffn_up.weight`, `ffn_gate.weight` → `ffn_(?:up|gate)\.weight`. Single-character middles
 * become a class: `attn_[qkv]\.weight`. Order of the branches follows the input order.
 */
export function literalAlternation(strings: readonly string[]): string {
    const unique = [...new Set(strings)];
    if (unique.length === 0) throw new Error("literalAlternation: no strings given");
    if (unique.length === 1) return escapeRegexLiteral(unique[0] as string);

    // Work on code points so a surrogate pair is never split.
    const points = unique.map((text) => Array.from(text));
    const shortest = Math.min(...points.map((p) => p.length));
    // Leave at least one character in every middle so no branch is empty.
    let prefix = 0;
    while (prefix < shortest - 1 && points.every((p) => p[prefix] === points[0]?.[prefix])) prefix++;
    let suffix = 0;
    const at = (p: string[], fromEnd: number): string | undefined => p[p.length - 1 - fromEnd];
    while (prefix + suffix < shortest - 1 && points.every((p) => at(p, suffix) === at(points[0] as string[], suffix))) {
        suffix++;
    }
    const first = points[0] as string[];
    const head = escapeRegexLiteral(first.slice(0, prefix).join(""));
    const tail = escapeRegexLiteral(first.slice(first.length - suffix).join(""));
    const middles = points.map((p) => p.slice(prefix, p.length - suffix).join(""));
    const middle = middles.every((m) => /^[A-Za-z0-9_]$/.test(m))
        ? `[${middles.join("")}]`
        : `(?:${middles.map(escapeRegexLiteral).join("|")})`;
    return head + middle + tail;
}

/** `[3]` → `3`, `[1,2]` → `[12]`, `[0..9]` → `[0-9]`, `[0,1,2,5]` → `[0-25]`. Digits must be sorted and unique. */
function digitClass(digits: readonly number[]): string {
    if (digits.length === 1) return String(digits[0]);
    const runs: string[] = [];
    let start = 0;
    for (let i = 1; i <= digits.length; i++) {
        if (i < digits.length && digits[i] === (digits[i - 1] as number) + 1) continue;
        const lo = digits[start] as number;
        const hi = digits[i - 1] as number;
        runs.push(hi === lo ? `${lo}` : hi === lo + 1 ? `${lo}${hi}` : `${lo}-${hi}`);
        start = i;
    }
    return `[${runs.join("")}]`;
}

/**
 * Branches matching exactly `strings`, all digit strings of one length, sorted and unique. Leading digits whose
 * remaining-digit languages are equal share one class, recursively (a minimal automaton for a finite language,
 * rendered as a regex).
 */
function sameLengthBranches(strings: readonly string[]): string[] {
    if (strings.length === 0) return [];
    if ((strings[0] as string).length === 0) return [""];
    const tailsByDigit = new Map<number, string[]>();
    for (const text of strings) {
        const digit = Number(text[0]);
        const tails = tailsByDigit.get(digit) ?? [];
        tails.push(text.slice(1));
        tailsByDigit.set(digit, tails);
    }
    const digitsByTail = new Map<string, number[]>();
    for (const digit of [...tailsByDigit.keys()].sort((a, b) => a - b)) {
        const tail = sameLengthBranches(tailsByDigit.get(digit) as string[]);
        const key = tail.length === 1 ? (tail[0] as string) : `(?:${tail.join("|")})`;
        const digits = digitsByTail.get(key) ?? [];
        digits.push(digit);
        digitsByTail.set(key, digits);
    }
    return [...digitsByTail].map(([tail, digits]) => digitClass(digits) + tail);
}

function assertNonNegativeInteger(value: number, what: string): void {
    if (!Number.isSafeInteger(value) || value < 0) {
        throw new RangeError(`${what} must be a non-negative safe integer, got ${value}`);
    }
}

/**
 * Regex source (no anchors, possibly a top-level alternation — wrap it with {@link groupIfAlternation}) matching
 * exactly the decimal spellings, without leading zeros, of the given non-negative integers.
 *
 * `{0..31}` → `[0-9]|[12][0-9]|3[01]`; `{3, 7, 12..15}` → `[37]|1[2-5]`.
 */
export function integerSetToRegex(values: Iterable<number>): string {
    const sorted = [...new Set(values)].sort((a, b) => a - b);
    if (sorted.length === 0) throw new RangeError("integerSetToRegex: the set is empty");
    for (const value of sorted) assertNonNegativeInteger(value, "integerSetToRegex: every value");
    const byLength = new Map<number, string[]>();
    for (const value of sorted) {
        const text = String(value);
        const group = byLength.get(text.length) ?? [];
        group.push(text);
        byLength.set(text.length, group);
    }
    return [...byLength.values()].flatMap(sameLengthBranches).join("|");
}

/** Branches for `[lo, hi]` where both are digit strings of one length (leading zeros allowed inside). */
function sameLengthRange(lo: string, hi: string): string[] {
    if (lo === hi) return [lo];
    const rest = lo.length - 1;
    const loFirst = Number(lo[0]);
    const hiFirst = Number(hi[0]);
    if (rest === 0) return [digitClass(range(loFirst, hiFirst))];
    if (loFirst === hiFirst) return sameLengthRange(lo.slice(1), hi.slice(1)).map((b) => `${loFirst}${b}`);

    const anyRest = "[0-9]".repeat(rest);
    const loTail = lo.slice(1);
    const hiTail = hi.slice(1);
    const loTailIsMin = loTail === "0".repeat(rest);
    const hiTailIsMax = hiTail === "9".repeat(rest);
    const branches: string[] = [];
    if (!loTailIsMin) branches.push(...sameLengthRange(loTail, "9".repeat(rest)).map((b) => `${loFirst}${b}`));
    const middleLo = loTailIsMin ? loFirst : loFirst + 1;
    const middleHi = hiTailIsMax ? hiFirst : hiFirst - 1;
    if (middleLo <= middleHi) branches.push(digitClass(range(middleLo, middleHi)) + anyRest);
    if (!hiTailIsMax) branches.push(...sameLengthRange("0".repeat(rest), hiTail).map((b) => `${hiFirst}${b}`));
    return branches;
}

function range(lo: number, hi: number): number[] {
    return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
}

/**
 * Regex source (no anchors, possibly a top-level alternation) matching exactly the decimal spellings of the
 * integers in `[lo, hi]`, both inclusive, without enumerating them: `100..127` → `1[01][0-9]|12[0-7]`.
 */
export function integerRangeToRegex(lo: number, hi: number): string {
    assertNonNegativeInteger(lo, "integerRangeToRegex: lo");
    assertNonNegativeInteger(hi, "integerRangeToRegex: hi");
    if (lo > hi) throw new RangeError(`integerRangeToRegex: lo (${lo}) is greater than hi (${hi})`);
    const branches: string[] = [];
    for (let length = String(lo).length; length <= String(hi).length; length++) {
        const lengthMin = length === 1 ? 0 : 10 ** (length - 1);
        const lengthMax = 10 ** length - 1;
        const from = Math.max(lo, lengthMin);
        const to = Math.min(hi, lengthMax);
        branches.push(...sameLengthRange(String(from), String(to)));
    }
    return branches.join("|");
}
