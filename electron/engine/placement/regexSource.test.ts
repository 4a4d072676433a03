import { describe, expect, it } from "vitest";
import {
    escapeRegexLiteral,
    groupIfAlternation,
    integerRangeToRegex,
    integerSetToRegex,
    literalAlternation
} from "./regexSource.js";
import { seededRandom } from "./testing/llamaTensorList.js";

const PROBE_LIMIT = 1000;

function anchored(source: string): RegExp {
    return new RegExp(`^${groupIfAlternation(source)}$`);
}

/** Every n in [0, PROBE_LIMIT) plus zero-padded spellings must match iff n is in the set. */
function expectExactly(source: string, contains: (n: number) => boolean): void {
    const regex = anchored(source);
    for (let n = 0; n < PROBE_LIMIT; n++) {
        if (regex.test(String(n)) !== contains(n)) {
            throw new Error(`${source}: ${n} ${contains(n) ? "not matched" : "matched"}`);
        }
        if (regex.test(`0${n}`)) throw new Error(`${source}: matched leading-zero 0${n}`);
    }
    expect(regex.test("")).toBe(false);
}

describe("integerRangeToRegex", () => {
    it("renders known ranges compactly", () => {
        expect(integerRangeToRegex(0, 9)).toBe("[0-9]");
        expect(integerRangeToRegex(10, 15)).toBe("1[0-5]");
        expect(integerRangeToRegex(100, 127)).toBe("1[01][0-9]|12[0-7]");
        expect(integerRangeToRegex(0, 31)).toBe("[0-9]|[12][0-9]|3[01]");
        expect(integerRangeToRegex(7, 7)).toBe("7");
    });

    it("is exact for every range within 0..200 (exhaustive)", () => {
        for (let lo = 0; lo <= 200; lo++) {
            for (let hi = lo; hi <= 200; hi++) {
                expectExactly(integerRangeToRegex(lo, hi), (n) => n >= lo && n <= hi);
            }
        }
    });

    it("handles large bounds without enumerating them", () => {
        const source = integerRangeToRegex(1234, 987654);
        const regex = anchored(source);
        for (const n of [1233, 1234, 1235, 9999, 10000, 500000, 987654, 987655, 999999]) {
            expect(regex.test(String(n))).toBe(n >= 1234 && n <= 987654);
        }
    });

    it("rejects bad bounds", () => {
        expect(() => integerRangeToRegex(5, 4)).toThrow(/greater than/);
        expect(() => integerRangeToRegex(-1, 4)).toThrow(/non-negative/);
        expect(() => integerRangeToRegex(0.5, 4)).toThrow(/non-negative/);
    });
});

describe("integerSetToRegex", () => {
    it("matches the range helper on every range within 0..200 (exhaustive)", () => {
        for (let lo = 0; lo <= 200; lo++) {
            for (let hi = lo; hi <= 200; hi++) {
                const values = Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
                expectExactly(integerSetToRegex(values), (n) => n >= lo && n <= hi);
            }
        }
    });

    it("is exact for random sets (seeded)", () => {
        const random = seededRandom(42);
        for (let trial = 0; trial < 1500; trial++) {
            const density = random();
            const max = 1 + Math.floor(random() * 300);
            const set = new Set<number>();
            for (let n = 0; n <= max; n++) if (random() < density) set.add(n);
            if (set.size === 0) set.add(max);
            expectExactly(integerSetToRegex(set), (n) => set.has(n));
        }
    });

    it("merges leading digits with equal tails", () => {
        expect(integerSetToRegex([3, 7, 12, 13, 14, 15])).toBe("[37]|1[2-5]");
        expect(integerSetToRegex([16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31])).toBe("1[6-9]|2[0-9]|3[01]");
        expect(integerSetToRegex([1, 3, 5])).toBe("[135]");
    });

    it("rejects empty sets and bad values", () => {
        expect(() => integerSetToRegex([])).toThrow(/empty/);
        expect(() => integerSetToRegex([-3])).toThrow(/non-negative/);
    });
});

describe("escapeRegexLiteral", () => {
    const names = ["blk.0.ffn_up.weight", "a+b*c?(d)[e]{f}|g^h$i\\j", "x,y=z", "per_layer.token_embd.weight", "π.weight"];

    it("matches each name literally and only it", () => {
        for (const name of names) {
            const regex = new RegExp(`^${escapeRegexLiteral(name)}$`);
            expect(regex.test(name)).toBe(true);
            expect(regex.test(`${name}x`)).toBe(false);
        }
        expect(new RegExp(`^${escapeRegexLiteral("blk.0.ffn_up.weight")}$`).test("blkX0Xffn_upXweight")).toBe(false);
    });

    it("never emits a comma or an equals sign (llama.cpp's -ot parser splits on both)", () => {
        const escaped = escapeRegexLiteral("x,y=z");
        expect(escaped).toBe("x\\x2Cy\\x3Dz");
        expect(escaped).not.toMatch(/[,=]/);
    });
});

describe("literalAlternation", () => {
    it("factors common prefixes and suffixes", () => {
        expect(literalAlternation(["ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"])).toBe("ffn_(?:gate|up|down)\\.weight");
        expect(literalAlternation(["attn_q.weight", "attn_k.weight", "attn_v.weight"])).toBe("attn_[qkv]\\.weight");
        expect(literalAlternation(["output.weight"])).toBe("output\\.weight");
    });

    it("matches exactly its strings, including prefixes of one another", () => {
        const sets = [
            ["ffn_up.weight", "ffn_up.weight.extra", "ffn_up"],
            ["a", "ab", "abc"],
            ["x.bias", "x.weight", "y.weight"],
            ["attn_norm.weight", "attn_norm_2.weight", "ffn_norm.weight"]
        ];
        for (const set of sets) {
            const regex = new RegExp(`^${groupIfAlternation(literalAlternation(set))}$`);
            for (const s of set) expect(regex.test(s)).toBe(true);
            const others = ["", "a.weight", "ffn_up.", "abcd", "x.weightx", "attn_norm", "b", "ffn_up.weigh"];
            for (const s of others.filter((o) => !set.includes(o))) expect(regex.test(s)).toBe(false);
        }
    });

    it("rejects an empty list", () => {
        expect(() => literalAlternation([])).toThrow(/no strings/);
    });
});

describe("groupIfAlternation", () => {
    it("groups only top-level alternations", () => {
        expect(groupIfAlternation("a|b")).toBe("(?:a|b)");
        expect(groupIfAlternation("x(?:a|b)y")).toBe("x(?:a|b)y");
        expect(groupIfAlternation("[|]")).toBe("[|]");
        expect(groupIfAlternation("\\|")).toBe("\\|");
    });
});
