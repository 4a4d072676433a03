import {describe, expect, it} from "vitest";
import {DEFAULT_BENCH_FORM} from "../stores/benchStore";
import {benchRequest, parseLengths} from "./benchActions";

describe("the Benchmark form → bench.start", () => {
    it("the defaults make the modest grid: 50% budget, prompts 32/64/128, generations 16/32, layers and optimal, one repeat", () => {
        expect(benchRequest(DEFAULT_BENCH_FORM, "bench-x")).toEqual({
            benchId: "bench-x", budgets: [{kind: "percent", percent: 50}], promptLengths: [32, 64, 128], genLengths: [16, 32],
            strategies: ["layers", "optimal"], repeats: 1, handTuned: false
        });
    });

    it("reads lists the way people type them and says what is wrong otherwise", () => {
        expect(parseLengths(" 128,32  64,, 32 ", "Prompt lengths", 1)).toEqual([32, 64, 128]);
        expect(benchRequest({...DEFAULT_BENCH_FORM, budgets: "25%, 75%"}, "b").budgets).toEqual([{kind: "percent", percent: 25}, {kind: "percent", percent: 75}]);
        expect(() => parseLengths("32, abc", "Prompt lengths", 1)).toThrow(/Prompt lengths: enter whole numbers ≥ 1/);
        expect(() => benchRequest({...DEFAULT_BENCH_FORM, gens: "1"}, "b")).toThrow(/Generation lengths/);
        expect(() => benchRequest({...DEFAULT_BENCH_FORM, budgets: "120"}, "b")).toThrow(/up to 100/);
        expect(() => benchRequest({...DEFAULT_BENCH_FORM, strategies: []}, "b")).toThrow(/at least one strategy/);
    });
});
