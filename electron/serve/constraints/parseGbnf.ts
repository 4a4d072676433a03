/**
 * A GBNF grammar read as llama.cpp's parser reads it (llama_grammar_parser in src/llama-grammar.cpp: parse_rule,
 * parse_alternates, parse_sequence, parse_char, parse_token), into the same rules it builds: a group `( … )` becomes a
 * rule of its own, a repetition `S{m,n}` becomes S copied m times and n − m nested optional rules (handle_repetitions),
 * a literal one element per character. Its errors are llama.cpp's. So the checks of checkGbnf.ts see exactly the rules
 * llama.cpp will hold — before llama.cpp's parser, which recurses once per nested group and expands repetitions with no
 * bound of its own, ever sees the text. Where llama.cpp would loop (a repetition whose most is below its least: its
 * `max_times - min_times` wraps around) or outgrow {@link STRUCTURE_LIMITS}, the text is refused here.
 */
import {STRUCTURE_LIMITS} from "../../contract/limits.js";
import {GrammarRefusal} from "./GrammarRefusal.js";

/** One element of a rule's alternative, as llama_grammar_element types it. */
export type GbnfElement =
    /** LLAMA_GRETYPE_CHAR / CHAR_NOT with its CHAR_ALT and CHAR_RNG_UPPER: a set of code points (inclusive ranges). */
    | {readonly type: "char"; readonly negated: boolean; readonly ranges: readonly (readonly [number, number])[]}
    /** LLAMA_GRETYPE_CHAR_ANY (`.`). */
    | {readonly type: "any"}
    /** LLAMA_GRETYPE_TOKEN / TOKEN_NOT (`<[id]>`, `!<[id]>`). */
    | {readonly type: "token"; readonly negated: boolean; readonly id: number}
    /** LLAMA_GRETYPE_RULE_REF. */
    | {readonly type: "ref"; readonly rule: number};

/** A rule: its name (a generated one for groups and repetitions, as llama.cpp names them) and its alternatives. */
export type GbnfRule = {readonly name: string; readonly alternatives: readonly (readonly GbnfElement[])[]};

export type GbnfGrammar = {
    /** By symbol id (llama.cpp's rule index). */
    readonly rules: readonly GbnfRule[];
    readonly symbols: ReadonlyMap<string, number>;
    /** llama_grammar_element entries in all rules (END and ALT markers included), as llama.cpp stores them. */
    readonly elements: number;
};

/** llama.cpp's MAX_REPETITION_THRESHOLD (src/llama-grammar.cpp). */
const MAX_REPETITION_THRESHOLD = 2000;

type Limits = Pick<typeof STRUCTURE_LIMITS, "grammarNesting" | "grammarRules" | "grammarElements">;

const isDigit = (c: string | undefined) => c != null && c >= "0" && c <= "9";
const isWordChar = (c: string | undefined) => c != null && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "-" || isDigit(c));

class Parser {
    /** The source as code points (llama.cpp decodes UTF-8 as it goes). */
    private readonly src: string[];
    private readonly symbols = new Map<string, number>();
    private readonly rules: (GbnfElement[][] | undefined)[] = [];
    private elements = 0;
    private depth = 0;
    private readonly literals = new Map<number, GbnfElement>();

    constructor(text: string, private readonly limits: Limits) {
        this.src = Array.from(text);
    }

    parse(): GbnfGrammar {
        let pos = this.space(0, true);
        while (pos < this.src.length)
            pos = this.rule(pos);
        const nameOf: string[] = [];
        for (const [name, id] of this.symbols)
            nameOf[id] = name;
        for (let id = 0; id < this.rules.length; id++) {
            const rule = this.rules[id];
            if (rule == null)
                throw syntax("Undefined rule");
            for (const alternative of rule)
                for (const element of alternative)
                    if (element.type === "ref" && this.rules[element.rule] == null)
                        throw syntax(`Undefined rule identifier '${nameOf[element.rule] ?? element.rule}'`);
        }
        const rules = this.rules.map((alternatives, id) => ({name: nameOf[id] ?? String(id), alternatives: alternatives!}));
        return {rules, symbols: this.symbols, elements: this.elements};
    }

    private at(pos: number): string | undefined {
        return this.src[pos];
    }

    private rest(pos: number): string {
        return this.src.slice(pos, pos + 20).join("");
    }

    /** parse_space */
    private space(start: number, newlineOk: boolean): number {
        let pos = start;
        for (;;) {
            const c = this.at(pos);
            if (c === " " || c === "\t" || (newlineOk && (c === "\r" || c === "\n")))
                pos++;
            else if (c === "#") {
                while (this.at(pos) != null && this.at(pos) !== "\r" && this.at(pos) !== "\n")
                    pos++;
            } else
                return pos;
        }
    }

    /** parse_name */
    private name(start: number): number {
        let pos = start;
        while (isWordChar(this.at(pos)))
            pos++;
        if (pos === start)
            throw syntax(`expecting name at ${this.rest(start)}`);
        return pos;
    }

    private symbolId(name: string): number {
        let id = this.symbols.get(name);
        if (id == null) {
            id = this.symbols.size;
            this.symbols.set(name, id);
        }
        return id;
    }

    /** generate_symbol_id */
    private generatedId(baseName: string): number {
        const id = this.symbols.size;
        this.symbols.set(`${baseName}_${id}`, id);
        if (this.symbols.size > this.limits.grammarRules)
            throw new GrammarRefusal("grammar_limit", `it expands to more than ${this.limits.grammarRules} rules as llama.cpp's parser writes groups and repetitions out`);
        return id;
    }

    /** One character of a literal: the same element for every occurrence of it. */
    private literal(code: number): GbnfElement {
        let element = this.literals.get(code);
        if (element == null) {
            element = {type: "char", negated: false, ranges: [[code, code]]};
            this.literals.set(code, element);
        }
        return element;
    }

    private addRule(id: number, alternatives: GbnfElement[][]): void {
        this.rules[id] = alternatives;
    }

    private count(elements: number): void {
        this.elements += elements;
        if (this.elements > this.limits.grammarElements)
            throw new GrammarRefusal("grammar_limit", `it expands to more than ${this.limits.grammarElements} elements as llama.cpp's parser writes repetitions out`);
    }

    /** parse_rule */
    private rule(start: number): number {
        const nameEnd = this.name(start);
        let pos = this.space(nameEnd, false);
        const name = this.src.slice(start, nameEnd).join("");
        const id = this.symbolId(name);
        if (!(this.at(pos) === ":" && this.at(pos + 1) === ":" && this.at(pos + 2) === "="))
            throw syntax(`expecting ::= at ${this.rest(pos)}`);
        pos = this.space(pos + 3, true);
        pos = this.alternates(pos, name, id, false);
        if (this.at(pos) === "\r")
            pos += this.at(pos + 1) === "\n" ? 2 : 1;
        else if (this.at(pos) === "\n")
            pos++;
        else if (this.at(pos) != null)
            throw syntax(`expecting newline or end at ${this.rest(pos)}`);
        return this.space(pos, true);
    }

    /** parse_alternates */
    private alternates(start: number, ruleName: string, id: number, nested: boolean): number {
        const alternatives: GbnfElement[][] = [[]];
        let pos = this.sequence(start, ruleName, alternatives[0]!, nested);
        while (this.at(pos) === "|") {
            const alternative: GbnfElement[] = [];
            alternatives.push(alternative);
            this.count(1);
            pos = this.space(pos + 1, true);
            pos = this.sequence(pos, ruleName, alternative, nested);
        }
        this.count(1);
        this.addRule(id, alternatives);
        return pos;
    }

    /** parse_char: one (escaped) character's code point and where the text goes on. */
    private char(pos: number): [number, number] {
        const c = this.at(pos);
        if (c === "\\") {
            const escape = this.at(pos + 1);
            switch (escape) {
                case "x": return this.hex(pos + 2, 2);
                case "u": return this.hex(pos + 2, 4);
                case "U": return this.hex(pos + 2, 8);
                case "t": return [9, pos + 2];
                case "r": return [13, pos + 2];
                case "n": return [10, pos + 2];
                case "\\": case "\"": case "[": case "]": case "-":
                    return [escape.codePointAt(0)!, pos + 2];
                default:
                    throw syntax(`unknown escape at ${this.rest(pos)}`);
            }
        }
        if (c != null)
            return [c.codePointAt(0)!, pos + 1];
        throw syntax("unexpected end of input");
    }

    /** parse_hex */
    private hex(start: number, size: number): [number, number] {
        let value = 0;
        let pos = start;
        for (; pos < start + size; pos++) {
            const c = this.at(pos);
            if (c == null || !/^[0-9a-fA-F]$/.test(c))
                break;
            value = value * 16 + parseInt(c, 16);
        }
        if (pos !== start + size)
            throw syntax(`expecting ${size} hex chars at ${this.rest(start)}`);
        // a uint32_t in llama.cpp
        return [value >>> 0, pos];
    }

    /** parse_int */
    private int(start: number): number {
        let pos = start;
        while (isDigit(this.at(pos)))
            pos++;
        if (pos === start)
            throw syntax(`expecting integer at ${this.rest(start)}`);
        return pos;
    }

    /** parse_token, without a vocabulary (as node-llama-cpp's LlamaGrammar parses): only `<[id]>`. */
    private token(start: number): [number, number] {
        let pos = start;
        if (this.at(pos) !== "<")
            throw syntax(`expecting '<' at ${this.rest(pos)}`);
        pos++;
        if (this.at(pos) !== "[")
            throw syntax(`no vocab to parse token at ${this.rest(start)}`);
        pos++;
        const intEnd = this.int(pos);
        const id = Number(this.src.slice(pos, intEnd).join(""));
        pos = intEnd;
        if (this.at(pos) !== "]")
            throw syntax(`expecting ']' at ${this.rest(pos)}`);
        pos++;
        if (this.at(pos) !== ">")
            throw syntax(`expecting '>' at ${this.rest(pos)}`);
        return [id, pos + 1];
    }

    /** parse_sequence: appends one alternative's elements to `rule`. */
    private sequence(start: number, ruleName: string, rule: GbnfElement[], nested: boolean): number {
        let lastSymStart = rule.length;
        let pos = start;
        let prevRules = 1;

        const repeat = (minTimes: number, maxTimes: number) => {
            const noMax = maxTimes === Infinity;
            if (lastSymStart === rule.length)
                throw syntax(`expecting preceding item to */+/?/{ at ${this.rest(pos)}`);
            const previous = rule.slice(lastSymStart);
            const totalRules = !noMax && maxTimes > 0 ? maxTimes : minTimes > 0 ? minTimes : 1;
            if (prevRules * totalRules > MAX_REPETITION_THRESHOLD)
                throw syntax("number of rules that are going to be repeated multiplied by the new repetition exceeds sane defaults, please reduce the number of repetitions or rule complexity");
            if (!noMax && maxTimes < minTimes)
                throw new GrammarRefusal("grammar_unsatisfiable",
                    `a repetition {${minTimes},${maxTimes}} asks for at least ${minTimes} and at most ${maxTimes}, which nothing can satisfy (llama.cpp would expand it without end)`);
            if (minTimes === 0)
                rule.length = lastSymStart;
            else
                for (let i = 1; i < minTimes; i++) {
                    this.count(previous.length);
                    rule.push(...previous);
                }
            let lastRecRule = 0;
            const optional = noMax ? 1 : maxTimes - minTimes;
            for (let i = 0; i < optional; i++) {
                const recRule = this.generatedId(ruleName);
                const first = [...previous];
                if (i > 0 || noMax)
                    first.push({type: "ref", rule: noMax ? recRule : lastRecRule});
                this.count(first.length + 2);
                this.addRule(recRule, [first, []]);
                lastRecRule = recRule;
            }
            if (optional > 0) {
                this.count(1);
                rule.push({type: "ref", rule: lastRecRule});
            }
            prevRules *= totalRules;
        };

        while (pos < this.src.length) {
            const c = this.at(pos)!;
            if (c === "\"") {
                pos++;
                lastSymStart = rule.length;
                prevRules = 1;
                while (this.at(pos) !== "\"") {
                    if (this.at(pos) == null)
                        throw syntax("unexpected end of input");
                    const [code, next] = this.char(pos);
                    pos = next;
                    this.count(1);
                    rule.push(this.literal(code));
                }
                pos = this.space(pos + 1, nested);
            } else if (c === "[") {
                pos++;
                let negated = false;
                if (this.at(pos) === "^") {
                    pos++;
                    negated = true;
                }
                lastSymStart = rule.length;
                prevRules = 1;
                const ranges: [number, number][] = [];
                while (this.at(pos) !== "]") {
                    if (this.at(pos) == null)
                        throw syntax("unexpected end of input");
                    const [low, next] = this.char(pos);
                    pos = next;
                    let high = low;
                    if (this.at(pos) === "-" && this.at(pos + 1) !== "]") {
                        if (this.at(pos + 1) == null)
                            throw syntax("unexpected end of input");
                        [high, pos] = this.char(pos + 1);
                    }
                    ranges.push([low, high]);
                }
                this.count(Math.max(1, ranges.length * 2));
                rule.push({type: "char", negated, ranges});
                pos = this.space(pos + 1, nested);
            } else if (c === "<" || c === "!") {
                let negated = false;
                if (c === "!") {
                    negated = true;
                    pos++;
                }
                const [id, end] = this.token(pos);
                lastSymStart = rule.length;
                prevRules = 1;
                this.count(1);
                rule.push({type: "token", negated, id});
                pos = this.space(end, nested);
            } else if (isWordChar(c)) {
                const nameEnd = this.name(pos);
                const ref = this.symbolId(this.src.slice(pos, nameEnd).join(""));
                pos = this.space(nameEnd, nested);
                lastSymStart = rule.length;
                prevRules = 1;
                this.count(1);
                rule.push({type: "ref", rule: ref});
            } else if (c === "(") {
                if (this.depth >= this.limits.grammarNesting)
                    throw new GrammarRefusal("grammar_limit", `it nests groups \`( … )\` more than ${this.limits.grammarNesting} deep (llama.cpp's parser recurses once per level)`);
                pos = this.space(pos + 1, true);
                const rulesBefore = this.symbols.size;
                const subRule = this.generatedId(ruleName);
                this.depth++;
                pos = this.alternates(pos, ruleName, subRule, true);
                this.depth--;
                prevRules = Math.max(1, this.symbols.size - rulesBefore);
                lastSymStart = rule.length;
                this.count(1);
                rule.push({type: "ref", rule: subRule});
                if (this.at(pos) !== ")")
                    throw syntax(`expecting ')' at ${this.rest(pos)}`);
                pos = this.space(pos + 1, nested);
            } else if (c === ".") {
                lastSymStart = rule.length;
                prevRules = 1;
                this.count(1);
                rule.push({type: "any"});
                pos = this.space(pos + 1, nested);
            } else if (c === "*") {
                pos = this.space(pos + 1, nested);
                repeat(0, Infinity);
            } else if (c === "+") {
                pos = this.space(pos + 1, nested);
                repeat(1, Infinity);
            } else if (c === "?") {
                pos = this.space(pos + 1, nested);
                repeat(0, 1);
            } else if (c === "{") {
                pos = this.space(pos + 1, nested);
                if (!isDigit(this.at(pos)))
                    throw syntax(`expecting an int at ${this.rest(pos)}`);
                let intEnd = this.int(pos);
                const minTimes = Number(this.src.slice(pos, intEnd).join(""));
                pos = this.space(intEnd, nested);
                let maxTimes = Infinity;
                if (this.at(pos) === "}") {
                    maxTimes = minTimes;
                    pos = this.space(pos + 1, nested);
                } else if (this.at(pos) === ",") {
                    pos = this.space(pos + 1, nested);
                    if (isDigit(this.at(pos))) {
                        intEnd = this.int(pos);
                        maxTimes = Number(this.src.slice(pos, intEnd).join(""));
                        pos = this.space(intEnd, nested);
                    }
                    if (this.at(pos) !== "}")
                        throw syntax(`expecting '}' at ${this.rest(pos)}`);
                    pos = this.space(pos + 1, nested);
                } else
                    throw syntax(`expecting ',' at ${this.rest(pos)}`);
                if (minTimes > MAX_REPETITION_THRESHOLD)
                    throw syntax("number of repetitions exceeds sane defaults, please reduce the number of repetitions");
                if (maxTimes !== Infinity && maxTimes > MAX_REPETITION_THRESHOLD && maxTimes >= minTimes)
                    maxTimes = Infinity;
                repeat(minTimes, maxTimes);
            } else
                break;
        }
        return pos;
    }
}

function syntax(message: string): GrammarRefusal {
    return new GrammarRefusal("grammar_syntax", `llama.cpp's grammar parser would refuse it: ${message.split("\n")[0]!.slice(0, 200)}`);
}

/**
 * Reads `text` as llama.cpp's grammar parser does, refusing it (GrammarRefusal) as llama.cpp would, or where llama.cpp
 * would loop or grow past `limits`. `maxChars`: the longest text read at all.
 */
export function parseGbnf(text: string, maxChars: number, limits: Limits = STRUCTURE_LIMITS): GbnfGrammar {
    if (text.length > maxChars)
        throw new GrammarRefusal("grammar_limit", `it is ${text.length} characters long, over the ${maxChars} this server reads`);
    return new Parser(text, limits).parse();
}
