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

    it("variants: custom:<a llama.cpp command>, commas and all, each measured as its own variant; a command llama.cpp would refuse is refused", () => {
        const variants = parseVariants("layers,optimal,custom:-ngl 99 -ot blk\\.0\\.ffn_up=CPU,blk\\.1\\.ffn_up=CPU -fa on,custom:llama-bench -ngl 4 -ts 1", false);
        expect(variants.map((v) => v.label)).toEqual(["layers", "optimal", "custom", "custom-2"]);
        expect(variants[2]!.llamaCommand).toBe("-ngl 99 -ot blk\\.0\\.ffn_up=CPU,blk\\.1\\.ffn_up=CPU -fa on");
        expect(variants[3]!.llamaCommand).toBe("llama-bench -ngl 4 -ts 1");
        expect(() => parseVariants("optimal,custom:-ngl 99 --no-mmap", false)).toThrow(/--no-mmap: not a flag of this llama.cpp/);
        expect(() => parseVariants("optimal,custom:", false)).toThrow(/needs a llama.cpp command/);
    });
});
