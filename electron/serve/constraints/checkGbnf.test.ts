/**
 * Grammars from the attacker's side, read as llama.cpp's parser reads them (parseGbnf.ts) and checked for what llama.cpp
 * would do with them (checkGbnf.ts): every grammar and schema of llama.cpp's own grammar tests and examples is
 * accepted; each limit is met exactly at it and refused one past it; unsatisfiable grammars of every shape are refused
 * by name. No model needed: the native side of these checks is in hostileStructures.cpu.test.ts.
 */
import {existsSync, readdirSync, readFileSync} from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {STRUCTURE_LIMITS} from "../../contract/limits.js";
import {checkGbnf} from "./checkGbnf.js";
import {checkJsonSchema} from "./checkJsonSchema.js";
import {GrammarRefusal} from "./GrammarRefusal.js";
import {parseGbnf} from "./parseGbnf.js";

const LLAMA = path.resolve("build/native/llama.cpp");
const missing = existsSync(path.join(LLAMA, "grammars")) ? null : `${LLAMA} is missing (npm ci unpacks llama.cpp's source: native/install.mjs)`;
if (missing != null)
    console.warn(`[skip] llama.cpp's grammar corpus: ${missing}`);

const check = (gbnf: string, options: {maxChars?: number; vocabularySize?: number} = {}) =>
    checkGbnf(parseGbnf(gbnf, options.maxChars ?? STRUCTURE_LIMITS.grammarChars), {vocabularySize: options.vocabularySize});

function refusal(work: () => void): GrammarRefusal {
    try {
        work();
    } catch (error) {
        if (error instanceof GrammarRefusal)
            return error;
        throw error;
    }
    throw new Error("not refused");
}

describe.skipIf(missing != null)("llama.cpp's own grammars and schemas pass", () => {
    it("every example grammar of llama.cpp's grammars/ folder", () => {
        const files = readdirSync(path.join(LLAMA, "grammars")).filter((file) => file.endsWith(".gbnf"));
        expect(files.length).toBeGreaterThanOrEqual(8);
        for (const file of files)
            expect(() => check(readFileSync(path.join(LLAMA, "grammars", file), "utf8")), file).not.toThrow();
    });

    it("every grammar and schema of tests/test-grammar-integration.cpp", () => {
        const source = readFileSync(path.join(LLAMA, "tests/test-grammar-integration.cpp"), "utf8");
        const cases = [...source.matchAll(/test_(grammar|schema)\(\s*"((?:[^"\\]|\\.)*)"\s*,(?:\s*\/\/[^\n]*\n)*\s*R"""\(([\s\S]*?)\)"""/g)];
        expect(cases.filter((match) => match[1] === "grammar").length).toBeGreaterThanOrEqual(14);
        expect(cases.filter((match) => match[1] === "schema").length).toBeGreaterThanOrEqual(33);
        for (const [, kind, name, text] of cases) {
            if (kind === "grammar")
                expect(() => check(text!, {vocabularySize: 32_000}), name).not.toThrow();
            else
                expect(() => checkJsonSchema(JSON.parse(text!)), name).not.toThrow();
        }
    });
});

describe("grammar limits, met and one past", () => {
    it("nesting: 64 groups deep is read, 65 is refused before any recursion (100,000 deep too)", () => {
        const nested = (levels: number) => `root ::= ${"(".repeat(levels)}"a"${")".repeat(levels)}`;
        expect(() => check(nested(STRUCTURE_LIMITS.grammarNesting))).not.toThrow();
        expect(refusal(() => check(nested(STRUCTURE_LIMITS.grammarNesting + 1)))).toMatchObject({code: "grammar_limit", message: expect.stringMatching(/nests groups/)});
        expect(refusal(() => check(nested(30_000)))).toMatchObject({code: "grammar_limit"});
        expect(refusal(() => check(nested(100_000), {maxChars: Infinity}))).toMatchObject({code: "grammar_limit"});
    });

    it("length: 65,536 characters are read, 65,537 refused", () => {
        const filled = (length: number) => `root ::= "${"a".repeat(length - 11)}"`;
        expect(filled(STRUCTURE_LIMITS.grammarChars)).toHaveLength(STRUCTURE_LIMITS.grammarChars);
        expect(() => check(filled(STRUCTURE_LIMITS.grammarChars))).not.toThrow();
        expect(refusal(() => check(filled(STRUCTURE_LIMITS.grammarChars + 1)))).toMatchObject({code: "grammar_limit", message: expect.stringMatching(/65537 characters long/)});
    });

    it("repetitions: {m,n} with n below m (which llama.cpp expands without end) is refused; llama.cpp's own bounds are its errors", () => {
        expect(() => check("root ::= \"a\"{3,3}")).not.toThrow();
        expect(() => check("root ::= \"a\"{0,0} \"b\"")).not.toThrow();
        for (const bad of ["root ::= \"a\"{5,3}", "root ::= (\"a\" | \"b\"){2,1}", "root ::= [a-z]{1,0}"])
            expect(refusal(() => check(bad)), bad).toMatchObject({code: "grammar_unsatisfiable", message: expect.stringMatching(/at most .* which nothing can satisfy/)});
        expect(refusal(() => check("root ::= \"a\"{2001}"))).toMatchObject({code: "grammar_syntax", message: expect.stringMatching(/exceeds sane defaults/)});
        expect(refusal(() => check("root ::= (\"a\"{0,50}){0,50}"))).toMatchObject({code: "grammar_syntax"});
    });

    it("expansion: rules and elements as llama.cpp writes repetitions out", () => {
        // each {0,2000} becomes 2000 rules: 11 of them pass 20,000
        expect(refusal(() => check(`root ::= ${"\"a\"{0,2000} ".repeat(11)}`))).toMatchObject({code: "grammar_limit", message: expect.stringMatching(/more than 20000 rules/)});
        expect(() => check(`root ::= ${"\"a\"{0,2000} ".repeat(9)}`)).not.toThrow();
        // a 100-character literal copied 2000 times is 200,000 elements
        expect(refusal(() => check(`root ::= ("x" "${"a".repeat(100)}"{2000})`))).toMatchObject({code: "grammar_limit", message: expect.stringMatching(/elements/)});
    });

    it("fan-out: rules that branch into the same rules again (2^40 steps of llama.cpp's left-recursion check) are refused; 2^10 are fine", () => {
        const fanOut = (levels: number) => ["root ::= d0", ...Array.from({length: levels}, (_, i) => `d${i} ::= d${i + 1} | d${i + 1}`), `d${levels} ::= "x"`].join("\n");
        expect(() => check(fanOut(10))).not.toThrow();
        expect(refusal(() => check(fanOut(40)))).toMatchObject({code: "grammar_limit", message: expect.stringMatching(/left-recursion check would take more than 200000 steps/)});
        // the same walk with nothing at the left: "x" first, the fan-out after it, is never walked by that check
        expect(() => check(fanOut(40).replace("root ::= d0", "root ::= \"x\" d0").replace(/d(\d+) ::= d/g, "d$1 ::= \"y\" d"))).not.toThrow();
    });

    it("a chain of 2049 rules each first in the one before is refused; 2000 pass", () => {
        const chain = (length: number) => [...Array.from({length}, (_, i) => `${i === 0 ? "root" : `c${i}`} ::= c${i + 1} "z"`), `c${length} ::= "x"`].join("\n");
        expect(() => check(chain(2000), {maxChars: Infinity})).not.toThrow();
        expect(refusal(() => check(chain(2049), {maxChars: Infinity}))).toMatchObject({code: "grammar_limit", message: expect.stringMatching(/chain of more than 2048 rules/)});
    });

    it("alternatives at one point: 1024 pass, 1025 are refused", () => {
        const alternatives = (count: number) => `root ::= ${Array.from({length: count}, (_, i) => `"v${i}"`).join(" | ")}`;
        expect(() => check(alternatives(1024))).not.toThrow();
        expect(refusal(() => check(alternatives(1025)))).toMatchObject({code: "grammar_limit", message: expect.stringMatching(/more than 1024 alternatives can begin at one point/)});
        // the same states reached through nested rules count alike
        expect(refusal(() => check(`root ::= a a\na ::= b | b | b | b\nb ::= ${Array.from({length: 300}, (_, i) => `"w${i}"`).join(" | ")}`))).toMatchObject({code: "grammar_limit"});
    });

    it("left recursion is refused as llama.cpp refuses it, directly or through a rule that may be empty", () => {
        for (const bad of ["root ::= root \"a\" | \"b\"", "root ::= a\na ::= b \"x\"\nb ::= a | \"y\"", "root ::= e root \"a\" | \"b\"\ne ::= \"\" | \"c\""])
            expect(refusal(() => check(bad)), bad).toMatchObject({code: "grammar_syntax", message: expect.stringMatching(/left recursion detected/)});
    });
});

describe("grammars with no way forward", () => {
    it.each([
        ["a reversed range", "root ::= [b-a]"],
        ["a negated class of every character", "root ::= [^\\x01-\\U0010FFFF]"],
        ["only the NUL character", "root ::= \"\\x00\""],
        ["a rule that never ends", "root ::= \"a\" root"],
        ["two rules that only call each other", "root ::= \"a\" b\nb ::= \"b\" root"],
        ["a token past the vocabulary", "root ::= <[70000]>"]
    ])("refuses %s: nothing matches", (_name, gbnf) => {
        expect(refusal(() => check(gbnf, {vocabularySize: 32_000}))).toMatchObject({code: "grammar_unsatisfiable", message: expect.stringMatching(/^no text matches it/)});
    });

    it.each([
        ["a dead alternative after a character", "root ::= \"a\" [b-a] | \"b\""],
        ["a dead rule reached later", "root ::= \"a\" x | \"b\"\nx ::= \"c\" y\ny ::= [z-a]"],
        ["a dead repetition", "root ::= \"a\" ([b-a])+ | \"b\""]
    ])("refuses %s: a reply could get stuck", (_name, gbnf) => {
        expect(refusal(() => check(gbnf))).toMatchObject({code: "grammar_unsatisfiable", message: expect.stringMatching(/^a reply can reach a point with no way forward: rule `/)});
    });

    it("accepts what can always finish: optional dead-free loops, negated classes, any character, a token in the vocabulary", () => {
        for (const good of ["root ::= \"a\"*", "root ::= [^\"]+ \".\"", "root ::= . . .", "root ::= <[5]> !<[6]>", "root ::= (\"x\" root)? \"y\"", "root ::= [a-zA-Z0-9_]{1,8}"])
            expect(() => check(good, {vocabularySize: 32_000}), good).not.toThrow();
    });
});

describe("syntax as llama.cpp's parser reads it", () => {
    it.each([
        ["no root", "start ::= \"a\"", /does not contain a 'root' symbol/],
        ["an undefined rule", "root ::= missing", /Undefined rule identifier 'missing'/],
        ["an unclosed literal", "root ::= \"a", /unexpected end of input/],
        ["an unknown escape", "root ::= \"\\q\"", /unknown escape/],
        ["a short hex escape", "root ::= \"\\x4\"", /expecting 2 hex chars/],
        ["a token by name (no vocabulary, as node-llama-cpp parses)", "root ::= <|im_end|>", /no vocab to parse token/],
        ["a repetition with nothing before it", "root ::= *", /expecting preceding item/],
        ["a missing ::=", "root = \"a\"", /expecting ::=/],
        ["an unclosed group", "root ::= (\"a\"", /expecting '\)'/]
    ])("refuses %s with llama.cpp's message", (_name, gbnf, message) => {
        expect(refusal(() => check(gbnf))).toMatchObject({code: "grammar_syntax", message: expect.stringMatching(message)});
    });
});
