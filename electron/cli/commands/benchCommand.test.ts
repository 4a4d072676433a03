import {describe, expect, it} from "vitest";
import {parseBudgetList, parseVariants} from "./benchCommand.js";

describe("tensorwise bench: its flags", () => {
    it("budgets: a trailing % applies to the list; MiB otherwise", () => {
        expect(parseBudgetList("25,50,75%").map((b) => b.label)).toEqual(["25%", "50%", "75%"]);
        expect(parseBudgetList("25,50,75%")[1]!.budget).toEqual({kind: "percent", percent: 50});
        expect(parseBudgetList("2048,4096")[0]!.budget).toEqual({kind: "mib", mib: 2048});
        expect(() => parseBudgetList("150%")).toThrow(/at most 100%/);
        expect(() => parseBudgetList("x")).toThrow();
    });

    it("variants: --hand-tuned adds layers-tuned / fit-tuned for the baselines present", () => {
        expect(parseVariants("cpu,layers,fit,optimal", true).map((v) => v.label)).toEqual(["cpu", "layers", "fit", "optimal", "layers-tuned", "fit-tuned"]);
        expect(parseVariants("layers", false)).toEqual([{label: "layers", strategy: "layers", handTuned: false}]);
        expect(parseVariants("fit-tuned", false)).toEqual([{label: "fit-tuned", strategy: "fit", handTuned: true}]);
        expect(() => parseVariants("oato-tuned", false)).toThrow();
        expect(() => parseVariants("fast", false)).toThrow();
    });
});
