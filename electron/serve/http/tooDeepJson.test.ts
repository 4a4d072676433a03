import {describe, expect, it} from "vitest";
import {jsonDepth, tooDeepJson} from "./tooDeepJson.js";

describe("how deep request JSON nests", () => {
    const bytes = (text: string) => Buffer.from(text);

    it("counts brackets outside strings only, escapes included", () => {
        expect(jsonDepth(bytes("1"))).toBe(0);
        expect(jsonDepth(bytes("{\"a\":[1,{\"b\":[]}]}"))).toBe(4);
        expect(jsonDepth(bytes("{\"a\":\"[[[[{{{{\"}"))).toBe(1);
        expect(jsonDepth(bytes("{\"a\":\"\\\"[[[[\\\\\",\"b\":[[]]}"))).toBe(3);
        expect(jsonDepth(bytes("[".repeat(25_000) + "]".repeat(25_000)))).toBe(25_000);
    });

    it("names the path of the first value past the limit, shortened when long, without recursion", () => {
        expect(tooDeepJson({a: [{b: 1}]}, 3)).toBeNull();
        expect(tooDeepJson({a: [{b: {}}]}, 3)).toBe("a[0].b");
        expect(tooDeepJson({"weird key": {x: {}}}, 2)).toBe("[\"weird key\"].x");
        let deep: unknown = {};
        for (let i = 0; i < 25_000; i++)
            deep = {a: deep};
        expect(tooDeepJson({tools: [{parameters: deep}]}, 128)).toBe("tools[0].parameters.a.a.a.a.a…(128 levels)");
    });
});
