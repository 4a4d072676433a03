import {describe, expect, it} from "vitest";
import type {BenchStartRequest} from "../../contract/ipc.js";
import {benchGrid} from "./benchGrid.js";

const base: BenchStartRequest = {
    benchId: "bench-1", budgets: [{kind: "percent", percent: 50}], promptLengths: [64, 32, 64], genLengths: [16],
    strategies: ["optimal", "layers"], repeats: 1
};

describe("benchGrid", () => {
    it("turns the contract request into the engine grid: sorted unique lengths, CLI budget labels, strategies in benchmark order", () => {
        const parsed = benchGrid({...base, budgets: [{kind: "percent", percent: 50}, {kind: "mib", mib: 2048}, {kind: "percent", percent: 50}]});
        expect(parsed).toEqual({
            benchId: "bench-1", path: null, prompts: [32, 64], gens: [16], repeats: 1,
            budgets: [{label: "50%", budget: {kind: "percent", percent: 50}}, {label: "2048MiB", budget: {kind: "mib", mib: 2048}}],
            variants: [{label: "layers", strategy: "layers", handTuned: false}, {label: "optimal", strategy: "optimal", handTuned: false}]
        });
    });

    it("hand-tuned adds the tuned twins of the chosen layers / fit only", () => {
        const labels = (strategies: BenchStartRequest["strategies"]) =>
            benchGrid({...base, strategies, handTuned: true}).variants.map((variant) => variant.label);
        expect(labels(["layers", "optimal"])).toEqual(["layers", "optimal", "layers-tuned"]);
        expect(labels(["fit", "layers"])).toEqual(["layers", "fit", "layers-tuned", "fit-tuned"]);
        expect(labels(["cpu"])).toEqual(["cpu"]);
    });
});
