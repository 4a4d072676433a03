import {describe, expect, it} from "vitest";
import type {BenchStartRequest} from "../../contract/ipc.js";
import {parseBenchStart} from "./parseBenchStart.js";

const base: BenchStartRequest = {
    benchId: "bench-1", budgets: [{kind: "percent", percent: 50}], promptLengths: [64, 32, 64], genLengths: [16],
    strategies: ["optimal", "layers"], repeats: 1
};

describe("parseBenchStart", () => {
    it("turns the contract request into the engine grid: sorted unique lengths, CLI budget labels, strategies in benchmark order", () => {
        const parsed = parseBenchStart({...base, budgets: [{kind: "percent", percent: 50}, {kind: "mib", mib: 2048}, {kind: "percent", percent: 50}]});
        expect(parsed).toEqual({
            benchId: "bench-1", path: null, prompts: [32, 64], gens: [16], repeats: 1,
            budgets: [{label: "50%", budget: {kind: "percent", percent: 50}}, {label: "2048MiB", budget: {kind: "mib", mib: 2048}}],
            variants: [{label: "layers", strategy: "layers", handTuned: false}, {label: "optimal", strategy: "optimal", handTuned: false}]
        });
    });

    it("hand-tuned adds the tuned twins of the chosen layers / fit only", () => {
        const labels = (strategies: BenchStartRequest["strategies"]) =>
            parseBenchStart({...base, strategies, handTuned: true}).variants.map((variant) => variant.label);
        expect(labels(["layers", "optimal"])).toEqual(["layers", "optimal", "layers-tuned"]);
        expect(labels(["fit", "layers"])).toEqual(["layers", "fit", "layers-tuned", "fit-tuned"]);
        expect(labels(["cpu"])).toEqual(["cpu"]);
    });

    it("refuses what the engine could not run, with the field named", () => {
        const bad: [Partial<Record<keyof BenchStartRequest, unknown>>, RegExp][] = [
            [{repeats: 0}, /repeats/], [{repeats: 1.5}, /repeats/], [{genLengths: [1]}, /genLengths/], [{promptLengths: []}, /promptLengths/],
            [{promptLengths: [100_000]}, /promptLengths/], [{strategies: ["turbo"]}, /unknown strategies: turbo/], [{strategies: []}, /strategies/],
            [{budgets: [{kind: "auto"}]}, /budget/], [{budgets: [{kind: "percent", percent: 150}]}, /budget/], [{benchId: ""}, /benchId/]
        ];
        for (const [change, message] of bad)
            expect(() => parseBenchStart({...base, ...change} as BenchStartRequest), JSON.stringify(change)).toThrow(message);
    });
});
