import {describe, expect, it} from "vitest";
import {fitKvCostModel} from "./calibrateKvCost.js";
import {describeKvCostModel} from "./describeKvCostModel.js";
import type {KvCostModel} from "./KvCostModel.js";

/** No figure a reader could not trust: no division by a zero rate, no NaN, no negative time or rate. */
function expectHonestFigures(text: string): void {
    expect(text).not.toMatch(/Infinity|NaN|undefined/);
    expect(text).not.toMatch(/-\d/);
}

const growing: KvCostModel = {
    stateBytes: {headerBytes: 1000, bytesPerToken: 2048},
    save: {fixedMs: 1, msPer: 1 / 2e6},
    load: {fixedMs: 0, msPer: 1 / 500},
    prefill: {fixedMs: 2, msPer: 0.8},
    source: "given"
};

describe("describeKvCostModel", () => {
    it("words each line with growth as a rate: state per token, save and load bandwidth, prefill tokens per second", () => {
        const text = describeKvCostModel(growing);
        expect(text).toBe("KV swap vs recompute (given): state 2048 B/token, save 2.00 GB/s + 1.00 ms each, load 0.500 MB/s, " +
            "prefill 1250 tokens/s + 2.00 ms each");
        expect(text).not.toContain("no growth");
        expectHonestFigures(text);
    });

    it("words a calibration whose points did not grow (a busy machine) as a flat cost, never an infinite rate", () => {
        // The shape fitLinearCost gives when each longer measurement came out no slower: msPer 0, the mean paid once.
        const flat = fitKvCostModel([
            {tokens: 16, stateBytes: 40_000, saveMs: 3, loadMs: 2, prefillMs: 30},
            {tokens: 64, stateBytes: 136_000, saveMs: 2, loadMs: 1, prefillMs: 20}
        ]);
        expect(flat.prefill.msPer).toBe(0);
        expect(flat.save.msPer).toBe(0);
        const text = describeKvCostModel(flat);
        expect(text).toContain("save about 2.50 ms whatever the size (no growth measured)");
        expect(text).toContain("load about 1.50 ms whatever the size (no growth measured)");
        expect(text).toContain("prefill about 25.00 ms whatever the length (no growth measured)");
        expect(text).toContain("state 2000 B/token");
        expect(text).not.toMatch(/tokens\/s|GB\/s|MB\/s/);
        expectHonestFigures(text);
    });

    it("words an all-zero model and one a hand could have broken (NaN, negative) without a single bad figure", () => {
        const zero: KvCostModel = {
            stateBytes: {headerBytes: 0, bytesPerToken: 0}, save: {fixedMs: 0, msPer: 0}, load: {fixedMs: 0, msPer: 0},
            prefill: {fixedMs: 0, msPer: 0}, source: "given"
        };
        const zeroText = describeKvCostModel(zero);
        expect(zeroText).toContain("state about 0 B whatever the length (no growth measured)");
        expect(zeroText).toContain("prefill about 0.00 ms whatever the length (no growth measured)");
        expectHonestFigures(zeroText);

        const broken: KvCostModel = {
            stateBytes: {headerBytes: Number.NaN, bytesPerToken: -5}, save: {fixedMs: -1, msPer: Number.NaN},
            load: {fixedMs: Number.POSITIVE_INFINITY, msPer: -1}, prefill: {fixedMs: 4, msPer: Number.NaN}, source: "given"
        };
        const brokenText = describeKvCostModel(broken);
        expect(brokenText).toContain("state not measured");
        expect(brokenText).toContain("save not measured");
        expect(brokenText).toContain("load not measured");
        expect(brokenText).toContain("prefill about 4.00 ms whatever the length (no growth measured)");
        expectHonestFigures(brokenText);
    });
});
