import {describe, expect, it} from "vitest";
import {DEFAULT_OFFLOAD_SETTINGS} from "../../../../stores/planStore";
import {optionsTaken, SLOW_TTFT_MS, slowPlanAdvice} from "./slowPlanAdvice";

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

    it("tells which options the user has taken since the slow plan was made, so it is not offered as if nothing changed", () => {
        const planned = {...DEFAULT_OFFLOAD_SETTINGS, strategy: "layers" as const, budget: {kind: "mib" as const, mib: 512},
            knobs: {...DEFAULT_OFFLOAD_SETTINGS.knobs, opOffload: true}};
        const advice = slowPlanAdvice({ttftMs: 60_000, promptTokens: 512}, planned)!;
        expect(optionsTaken(advice, planned)).toEqual([]);
        expect(optionsTaken(advice, {...planned, strategy: "optimal"})).toEqual(["strategy"]);
        expect(optionsTaken(advice, {...planned, budget: {kind: "auto"}})).toEqual(["budget"]);
        expect(optionsTaken(advice, {...planned, knobs: {...planned.knobs, opOffload: null}})).toEqual(["knobs"]);
        // another strategy than the planner's, or one knob of two given back, is not the option taken
        expect(optionsTaken(advice, {...planned, strategy: "oato"})).toEqual([]);
        expect(optionsTaken(slowPlanAdvice({ttftMs: 60_000, promptTokens: 512}, {...planned, knobs: {...planned.knobs, kvOffload: false}})!,
            {...planned, knobs: {...planned.knobs, opOffload: null, kvOffload: false}})).toEqual([]);
        // a smaller model is never "taken" by a setting
        expect(optionsTaken(advice, DEFAULT_OFFLOAD_SETTINGS)).toEqual(["strategy", "budget", "knobs"]);
    });
});
