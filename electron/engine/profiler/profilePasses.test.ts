import {describe, expect, it} from "vitest";
import {passBoundary, passLabel, passProgress} from "./profilePasses.js";

describe("profile passes share one bar", () => {
    it("the fraction runs across passes and never reaches a pass's end before it ends", () => {
        const bound = 20_000;
        const points = [0, 1, 2].flatMap((index) => [0, 5_000, 19_000, 40_000].map((elapsed) => passProgress({index, count: 3}, elapsed, bound).fraction));
        for (let i = 1; i < points.length; i++) expect(points[i]).toBeGreaterThanOrEqual(points[i - 1]!);
        expect(passProgress({index: 0, count: 3}, 40_000, bound).fraction).toBeLessThan(passBoundary({index: 0, count: 3}, true));
        expect(passBoundary({index: 2, count: 3}, true)).toBe(1);
        expect(passBoundary({index: 1, count: 3}, false)).toBeCloseTo(1 / 3);
    });

    it("the time left counts the later passes, and is never negative", () => {
        expect(passProgress({index: 0, count: 2}, 5_000, 20_000).leftMs).toBe(35_000);
        expect(passProgress({index: 1, count: 2}, 25_000, 20_000).leftMs).toBe(0);
        expect(passProgress(undefined, 5_000, 20_000)).toEqual({fraction: 0.25, leftMs: 15_000});
        expect(passProgress(undefined, 5_000, 0).leftMs).toBe(0);
    });

    it("a lone pass is not numbered", () => {
        expect(passLabel(undefined)).toBe("");
        expect(passLabel({index: 0, count: 1})).toBe("");
        expect(passLabel({index: 1, count: 4})).toBe(" (pass 2 of 4)");
    });
});
