import {describe, expect, it} from "vitest";
import {fitLinearCost, predictKvRestore, type KvCostModel} from "./KvCostModel.js";

const model: KvCostModel = {
    stateBytes: {headerBytes: 1000, bytesPerToken: 2000},
    save: {fixedMs: 1, msPer: 1 / 1e6},
    load: {fixedMs: 0.5, msPer: 1 / 2e6},
    prefill: {fixedMs: 2, msPer: 0.05},
    source: "given"
};

describe("predictKvRestore", () => {
    it("prices swap as bytes over both bandwidths and recompute as a prefill, and picks the cheaper", () => {
        const short = predictKvRestore(model, 10);
        expect(short.stateBytes).toBe(21_000);
        expect(short.swapOutMs).toBeCloseTo(1 + 0.021);
        expect(short.swapInMs).toBeCloseTo(0.5 + 0.0105);
        expect(short.recomputeMs).toBeCloseTo(2.5);
        expect(short.path).toBe("swap");

        const slowDisk = {...model, save: {fixedMs: 1, msPer: 1e-3}};
        const long = predictKvRestore(slowDisk, 1000);
        expect(long.swapMs).toBeGreaterThan(long.recomputeMs);
        expect(long.path).toBe("recompute");
    });
});

describe("fitLinearCost", () => {
    it("recovers a line through exact points", () => {
        const line = fitLinearCost([{amount: 10, cost: 7}, {amount: 20, cost: 12}, {amount: 40, cost: 22}]);
        expect(line.fixedMs).toBeCloseTo(2);
        expect(line.msPer).toBeCloseTo(0.5);
    });

    it("never predicts negative time: a negative intercept gives a line through the origin", () => {
        const line = fitLinearCost([{amount: 10, cost: 1}, {amount: 20, cost: 12}]);
        expect(line.fixedMs).toBe(0);
        expect(line.msPer).toBeGreaterThan(0);
    });

    it("prices points that do not grow with the amount as their mean, paid once", () => {
        expect(fitLinearCost([{amount: 10, cost: 3}, {amount: 20, cost: 1}])).toEqual({fixedMs: 2, msPer: 0});
    });
});
