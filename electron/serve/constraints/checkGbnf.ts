/**
 * What llama.cpp will do with a grammar, worked out before it does it (on the rules parseGbnf.ts read, the same ones
 * llama.cpp's parser builds):
 * - its left-recursion check (llama_grammar_detect_left_recursion in src/llama-grammar.cpp) recurses into every rule
 *   that can come first, and does not remember a rule it already checked from inside another: `a ::= b | b`,
 *   `b ::= c | c`, … 40 levels deep is 2^40 steps on the thread that makes the grammar. The steps and the depth of that
 *   walk are counted here (memoised), and a left recursion is refused as llama.cpp refuses it;
 * - at every point of a rule, the parse states that can begin there (llama_grammar_advance_stack: one stack per
 *   alternative reached without reading a character, compared pairwise as they are kept) are counted;
 * - a grammar that can match nothing, or that lets a reply reach a point from which nothing can follow (an empty
 *   character class such as `[b-a]`, a rule that never ends, a token the vocabulary lacks), would end the reply with
 *   "Unexpected empty grammar stack" from llama_grammar_accept_impl: it is refused, naming the rule.
 */
import {STRUCTURE_LIMITS} from "../../contract/limits.js";
import type {GbnfElement, GbnfGrammar} from "./parseGbnf.js";
import {GrammarRefusal} from "./GrammarRefusal.js";

type Limits = Pick<typeof STRUCTURE_LIMITS, "grammarLeftmostSteps" | "grammarLeftmostDepth" | "grammarAlternativesAtOnce">;

/** The highest code point llama.cpp's UTF-8 decoding can produce as a character to match. */
const MAX_CODE_POINT = 0x10ffff;

export type CheckGbnfOptions = {
    /** The start rule (llama.cpp's `grammar_root`). Defaults to `"root"`. */
    root?: string;
    /** Tokens of the model's vocabulary: a `<[id]>` at or past it names no token. Defaults to unknown (every id taken as one). */
    vocabularySize?: number;
    limits?: Limits;
};

/** Refuses (GrammarRefusal) a grammar llama.cpp would walk too long, refuse, or be stuck in; returns when it is fine. */
export function checkGbnf(grammar: GbnfGrammar, options: CheckGbnfOptions = {}): void {
    const {root = "root", vocabularySize, limits = STRUCTURE_LIMITS} = options;
    const rootId = grammar.symbols.get(root);
    if (rootId == null || grammar.rules[rootId] == null)
        throw new GrammarRefusal("grammar_syntax", `llama.cpp's grammar parser would refuse it: grammar does not contain a '${root}' symbol`);
    checkLeftmostWalk(grammar, limits);
    checkAlternativesAtOnce(grammar, rootId, limits);
    checkWayForward(grammar, rootId, vocabularySize);
}

/** A rule llama.cpp takes as able to be empty: one with an alternative of no elements (rules_may_be_empty). */
function mayBeEmpty(grammar: GbnfGrammar, rule: number): boolean {
    return grammar.rules[rule]!.alternatives.some((alternative) => alternative.length === 0);
}

/** The rules llama_grammar_detect_left_recursion recurses into from `rule`, in its order (repeats kept). */
function leftmostRefs(grammar: GbnfGrammar, rule: number): number[] {
    const refs: number[] = [];
    for (const alternative of grammar.rules[rule]!.alternatives) {
        for (const element of alternative) {
            if (element.type !== "ref")
                break;
            refs.push(element.rule);
            if (!mayBeEmpty(grammar, element.rule))
                break;
        }
    }
    return refs;
}

/** The left-recursion check's steps and depth, memoised here (llama.cpp does not memoise them), and left recursion itself. */
function checkLeftmostWalk(grammar: GbnfGrammar, limits: Limits): void {
    const steps = new Map<number, number>();
    const depth = new Map<number, number>();
    const inProgress = new Set<number>();
    const tooMany = limits.grammarLeftmostSteps + 1;
    // iterative depth-first walk: the grammar may chain thousands of rules
    const walk = (start: number) => {
        const stack: {rule: number; refs: number[]; next: number}[] = [{rule: start, refs: leftmostRefs(grammar, start), next: 0}];
        inProgress.add(start);
        while (stack.length > 0) {
            const frame = stack.at(-1)!;
            if (frame.next < frame.refs.length) {
                const ref = frame.refs[frame.next++]!;
                if (inProgress.has(ref))
                    throw new GrammarRefusal("grammar_syntax", `llama.cpp would refuse it: unsupported grammar, left recursion detected for nonterminal '${grammar.rules[ref]!.name}'`);
                if (!steps.has(ref)) {
                    if (stack.length >= limits.grammarLeftmostDepth)
                        throw new GrammarRefusal("grammar_limit", `a chain of more than ${limits.grammarLeftmostDepth} rules can each come first in the one before (llama.cpp's left-recursion check recurses once per rule of it)`);
                    inProgress.add(ref);
                    stack.push({rule: ref, refs: leftmostRefs(grammar, ref), next: 0});
                }
                continue;
            }
            stack.pop();
            inProgress.delete(frame.rule);
            steps.set(frame.rule, Math.min(tooMany, frame.refs.reduce((sum, ref) => sum + steps.get(ref)!, 1)));
            depth.set(frame.rule, frame.refs.reduce((deepest, ref) => Math.max(deepest, depth.get(ref)! + 1), 1));
        }
    };
    // llama_grammar_init_impl checks every rule not yet reached from an earlier one
    const reached = new Set<number>();
    let total = 0;
    for (let rule = 0; rule < grammar.rules.length; rule++) {
        if (reached.has(rule))
            continue;
        if (!steps.has(rule))
            walk(rule);
        total += steps.get(rule)!;
        if (total > limits.grammarLeftmostSteps)
            throw new GrammarRefusal("grammar_limit", `llama.cpp's left-recursion check would take more than ${limits.grammarLeftmostSteps} steps over it ` +
                `(its rules branch into the same rules again and again, e.g. \`${grammar.rules[rule]!.name}\`; llama_grammar_detect_left_recursion walks every left-most path)`);
        const pending = [rule];
        reached.add(rule);
        for (let next = pending.pop(); next != null; next = pending.pop())
            for (const ref of leftmostRefs(grammar, next))
                if (!reached.has(ref)) {
                    reached.add(ref);
                    pending.push(ref);
                }
    }
}

/**
 * The parse states (stacks) that can begin at each point of each rule, counted without reading a character, as
 * llama_grammar_advance_stack makes them: at most {@link Limits.grammarAlternativesAtOnce} at any point.
 */
function checkAlternativesAtOnce(grammar: GbnfGrammar, rootId: number, limits: Limits): void {
    const cap = limits.grammarAlternativesAtOnce + 1;
    // per rule: stacks its reference begins (`starts`), and ways to get through it reading nothing (`passes`)
    const starts = new Map<number, number>();
    const passes = new Map<number, number>();
    const inProgress = new Set<number>();
    const ruleCounts = (rule: number): void => {
        // left recursion is refused before this runs, and the depth of first elements is bounded by checkLeftmostWalk;
        // a rule met again inside itself through rules that match nothing (llama.cpp's check sees only empty
        // alternatives) begins no new state there: llama_grammar_advance_stack drops a stack it has seen
        if (starts.has(rule) || inProgress.has(rule))
            return;
        inProgress.add(rule);
        let begun = 0;
        let through = 0;
        for (const alternative of grammar.rules[rule]!.alternatives) {
            const counted = sequenceCounts(alternative, 0);
            begun = Math.min(cap, begun + counted.starts);
            through = Math.min(cap, through + counted.passes);
        }
        inProgress.delete(rule);
        starts.set(rule, begun);
        passes.set(rule, through);
    };
    const elementCounts = (element: GbnfElement): {starts: number; passes: number} => {
        if (element.type !== "ref")
            return {starts: 1, passes: 0};
        ruleCounts(element.rule);
        return {starts: starts.get(element.rule) ?? 0, passes: passes.get(element.rule) ?? 0};
    };
    const sequenceCounts = (sequence: readonly GbnfElement[], from: number): {starts: number; passes: number} => {
        let begun = 0;
        let ways = 1;
        for (let index = from; index < sequence.length && ways > 0; index++) {
            const counted = elementCounts(sequence[index]!);
            begun = Math.min(cap, begun + ways * counted.starts);
            ways = Math.min(cap, ways * counted.passes);
        }
        return {starts: begun, passes: ways};
    };
    const tooMany = (rule: number) => new GrammarRefusal("grammar_limit", `more than ${limits.grammarAlternativesAtOnce} alternatives can begin at one point of rule ` +
        `\`${grammar.rules[rule]!.name}\` (llama.cpp keeps one parse state per alternative and compares each new one with all the others)`);
    // where a reply starts: llama_grammar_init_impl's stacks of the start rule
    ruleCounts(rootId);
    if (starts.get(rootId)! >= cap)
        throw tooMany(rootId);
    for (const rule of grammar.rules.keys()) {
        for (const alternative of grammar.rules[rule]!.alternatives) {
            // from the end back: what begins at each point is its element's, and what follows it where it can be passed
            let following = 0;
            for (let index = alternative.length - 1; index >= 0; index--) {
                const counted = elementCounts(alternative[index]!);
                following = Math.min(cap, counted.starts + counted.passes * following);
                if (following >= cap)
                    throw tooMany(rule);
            }
        }
    }
}

const classMatches = new WeakMap<GbnfElement, boolean>();

/** Whether a character class or token matches anything. */
function elementCanMatch(element: GbnfElement, vocabularySize: number | undefined): boolean {
    if (element.type !== "char")
        return classMatchesSomething(element, vocabularySize);
    let matches = classMatches.get(element);
    if (matches == null) {
        matches = classMatchesSomething(element, vocabularySize);
        classMatches.set(element, matches);
    }
    return matches;
}

function classMatchesSomething(element: GbnfElement, vocabularySize: number | undefined): boolean {
    if (element.type === "any")
        return true;
    if (element.type === "token")
        return element.negated || vocabularySize == null || element.id < vocabularySize;
    if (element.type !== "char")
        return true;
    const ranges = element.ranges.filter(([low, high]) => low <= high);
    if (!element.negated)
        return ranges.some(([low, high]) => high >= 1 && low <= MAX_CODE_POINT);
    // a negated class matches something unless its ranges cover every character 1..MAX_CODE_POINT
    const sorted = ranges.map(([low, high]) => [Math.max(1, low), Math.min(MAX_CODE_POINT, high)] as const).sort((a, b) => a[0] - b[0]);
    let covered = 0;
    for (const [low, high] of sorted) {
        if (low > covered + 1)
            return true;
        covered = Math.max(covered, high);
    }
    return covered < MAX_CODE_POINT;
}

function describeElement(element: GbnfElement, grammar: GbnfGrammar): string {
    if (element.type === "ref")
        return `\`${grammar.rules[element.rule]!.name}\`, which can match nothing`;
    if (element.type === "token")
        return `the token <[${element.id}]>, which this model's vocabulary does not have`;
    const text = element.type === "char"
        ? `[${element.negated ? "^" : ""}${element.ranges.map(([low, high]) => low === high ? codeText(low) : `${codeText(low)}-${codeText(high)}`).join("")}]`
        : ".";
    return `the character class ${text}, which matches no character`;
}

function codeText(code: number): string {
    return code >= 0x21 && code <= 0x7e && !"\\[]^-".includes(String.fromCodePoint(code)) ? String.fromCodePoint(code) : `\\u{${code.toString(16)}}`;
}

/**
 * Every rule the start rule can reach must be able to finish (match some finite text) in every alternative a reply can
 * enter: otherwise the grammar leaves the sampler with no allowed token at that point, and llama.cpp's accept fails.
 */
function checkWayForward(grammar: GbnfGrammar, rootId: number, vocabularySize: number | undefined): void {
    // the rules that can finish: those with an alternative of elements that can each match, worked out as rules are
    // found to finish (each alternative waits for the rules it refers to; linear in the grammar's size)
    const finishes = new Set<number>();
    const canFinish = (element: GbnfElement) => element.type === "ref" ? finishes.has(element.rule) : elementCanMatch(element, vocabularySize);
    const waiting = new Map<number, {rule: number; left: number}[]>();
    const ready: number[] = [];
    grammar.rules.forEach((rule, id) => {
        for (const alternative of rule.alternatives) {
            if (!alternative.every((element) => element.type === "ref" || elementCanMatch(element, vocabularySize)))
                continue;
            const refs = new Set(alternative.flatMap((element) => element.type === "ref" ? [element.rule] : []));
            if (refs.size === 0) {
                ready.push(id);
                continue;
            }
            const entry = {rule: id, left: refs.size};
            for (const ref of refs) {
                const list = waiting.get(ref);
                if (list == null)
                    waiting.set(ref, [entry]);
                else
                    list.push(entry);
            }
        }
    });
    for (let id = ready.pop(); id != null; id = ready.pop()) {
        if (finishes.has(id))
            continue;
        finishes.add(id);
        for (const entry of waiting.get(id) ?? [])
            if (--entry.left === 0)
                ready.push(entry.rule);
    }
    const rootName = grammar.rules[rootId]!.name;
    if (!finishes.has(rootId))
        throw new GrammarRefusal("grammar_unsatisfiable", `no text matches it: its start rule \`${rootName}\` never finishes ` +
            `(${whyNot(grammar, rootId, canFinish)}); a reply held to it would have no way forward`);
    const reached = new Set([rootId]);
    const pending = [rootId];
    for (let next = pending.pop(); next != null; next = pending.pop()) {
        const rule = grammar.rules[next]!;
        for (const alternative of rule.alternatives) {
            const stuck = alternative.find((element) => !canFinish(element));
            if (stuck != null)
                throw new GrammarRefusal("grammar_unsatisfiable", `a reply can reach a point with no way forward: rule \`${rule.name}\` goes on with ` +
                    `${describeElement(stuck, grammar)}${stuck.type === "ref" ? ` (${whyNot(grammar, stuck.rule, canFinish)})` : ""}`);
            for (const element of alternative)
                if (element.type === "ref" && !reached.has(element.rule)) {
                    reached.add(element.rule);
                    pending.push(element.rule);
                }
        }
    }
}

/** Why `rule` never finishes, in a few words: the first element of each alternative that cannot. */
function whyNot(grammar: GbnfGrammar, rule: number, canFinish: (element: GbnfElement) => boolean): string {
    const stuck = grammar.rules[rule]!.alternatives.map((alternative) => alternative.find((element) => !canFinish(element))).filter((element) => element != null);
    const first = stuck.find((element) => element.type !== "ref");
    if (first != null)
        return describeElement(first, grammar);
    return "every alternative goes on with a rule that never finishes: it only refers to itself or to such rules";
}
