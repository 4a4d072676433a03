import {describe, expect, it} from "vitest";
import {DEFAULT_OFFLOAD_SETTINGS} from "../../../../stores/planStore";
import {SLOW_TTFT_MS, slowPlanAdvice} from "./slowPlanAdvice";

describe("the slow-plan warning", () => {
    it("calls a plan slow only past the threshold, with the prompt's reading speed", () => {
        expect(slowPlanAdvice({ttftMs: SLOW_TTFT_MS, promptTokens: 512}, DEFAULT_OFFLOAD_SETTINGS)).toBeNull();
        expect(slowPlanAdvice({ttftMs: null, promptTokens: 512}, DEFAULT_OFFLOAD_SETTINGS)).toBeNull();
        expect(slowPlanAdvice(null, DEFAULT_OFFLOAD_SETTINGS)).toBeNull();
        const advice = slowPlanAdvice({ttftMs: 293_000, promptTokens: 512}, DEFAULT_OFFLOAD_SETTINGS)!;
        expect(advice.ttftMs).toBe(293_000);
        expect(advice.promptTokensPerSec).toBeCloseTo(512 / 293, 6);
        // the planner's own choices everywhere: only a smaller model can help
        expect(advice.options).toEqual(["smaller-model"]);
    });

    it("offers to undo each choice the user made that can cost speed", () => {
        const chosen = {...DEFAULT_OFFLOAD_SETTINGS, strategy: "layers" as const, budget: {kind: "mib" as const, mib: 512},
            knobs: {...DEFAULT_OFFLOAD_SETTINGS.knobs, opOffload: false}};
        expect(slowPlanAdvice({ttftMs: 60_000, promptTokens: 512}, chosen)!.options).toEqual(["strategy", "budget", "knobs", "smaller-model"]);
        // the KV cache type is not a speed choice the planner makes
        const q8 = {...DEFAULT_OFFLOAD_SETTINGS, knobs: {...DEFAULT_OFFLOAD_SETTINGS.knobs, kvCacheType: "q8_0" as const}};
        expect(slowPlanAdvice({ttftMs: 60_000, promptTokens: 512}, q8)!.options).toEqual(["smaller-model"]);
    });
});
