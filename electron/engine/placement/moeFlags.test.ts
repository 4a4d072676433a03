// Expert placements compile to the shortest proved -ot list, and render as llama.cpp's own --cpu-moe / --n-cpu-moe N
// exactly where those flags move the same tensors (checked against the flags' own regexes from common/common.h).
import {describe, expect, it} from "vitest";
import {parseTensorName} from "../gguf/tensorRole.js";
import {resolveSyntheticShape, syntheticTensorSpecs} from "../writer/makeSyntheticModel.js";
import {compilePlacement} from "./compilePlacement.js";
import {renderOverrideFlags} from "./llamaCppFlags.js";
import {cpuMoeOverrides, moeFlagsFor, nCpuMoeOverrides} from "./moeFlags.js";
import type {Placement, PlacementTensor} from "./Placement.js";
import {resolveBufferTypes} from "./verifyOverrides.js";

const tensors: PlacementTensor[] = syntheticTensorSpecs(resolveSyntheticShape({preset: "qwen3-30b-a3b"}), "q8_0")
    .map((spec) => ({name: spec.name, ...parseTensorName(spec.name), bytes: 1}));
const names = tensors.map((t) => t.name);
const GPU = "CUDA0";

function hostOf(pick: (t: PlacementTensor) => boolean): Placement {
    return {defaultBufferType: GPU, assignments: Object.fromEntries(tensors.filter(pick).map((t) => [t.name, "CPU"]))};
}

const isExpert = (t: PlacementTensor): boolean => t.role.endsWith("_exps");

/** Where llama.cpp puts each tensor under these overrides (first regex_search match wins). */
function resolved(overrides: Parameters<typeof resolveBufferTypes>[0]): Map<string, string> {
    return new Map(resolveBufferTypes(overrides, names, GPU));
}

describe("expert placements of Qwen3-30B-A3B's 48 layers", () => {
    it("all experts on the host: one anchored override, rendered as --cpu-moe, same tensors as llama.cpp's own", () => {
        const {overrides} = compilePlacement(hostOf(isExpert), tensors);
        expect(overrides).toHaveLength(1);
        expect(resolved(overrides)).toEqual(resolved(cpuMoeOverrides()));
        const flags = renderOverrideFlags(overrides, {tensorNames: names});
        expect(flags.argv).toEqual(["-ngl", "999", "--cpu-moe", "--load-mode", "none"]);
    });

    it("the experts of layers 0–29: one override, rendered as --n-cpu-moe 30, same tensors as its 30 regexes", () => {
        const {overrides} = compilePlacement(hostOf((t) => isExpert(t) && t.layer! < 30), tensors);
        expect(overrides).toHaveLength(1);
        expect(resolved(overrides)).toEqual(resolved(nCpuMoeOverrides(30)));
        expect(moeFlagsFor(overrides, names)).toEqual(["--n-cpu-moe", "30"]);
        expect(renderOverrideFlags(overrides, {tensorNames: names}).command).toBe("llama-cli -ngl 999 --n-cpu-moe 30 --load-mode none");
    });

    it("per-kind plans stay -ot: up and down experts of layers 0–19 and gate experts of 0–9, in at most 3 overrides", () => {
        const placement = hostOf((t) => (t.role === "ffn_up_exps" || t.role === "ffn_down_exps") ? t.layer! < 20 : t.role === "ffn_gate_exps" && t.layer! < 10);
        const {overrides} = compilePlacement(placement, tensors);
        expect(overrides.length).toBeLessThanOrEqual(3);
        const where = resolved(overrides);
        for (const t of tensors) expect(where.get(t.name), t.name).toBe(placement.assignments[t.name] ?? (t.role === "token_embd" ? "CPU" : GPU));
        expect(moeFlagsFor(overrides, names)).toBeNull();
        const flags = renderOverrideFlags(overrides, {tensorNames: names});
        expect(flags.argv.filter((arg) => arg === "-ot")).toHaveLength(overrides.length);
        console.log(`per-kind plan: ${flags.command}`);
    });

    it("does not call a plan --n-cpu-moe when it also moves a dense tensor or skips a layer", () => {
        const withRouter = compilePlacement(hostOf((t) => (isExpert(t) && t.layer! < 4) || t.name === "blk.0.ffn_gate_inp.weight"), tensors);
        expect(moeFlagsFor(withRouter.overrides, names)).toBeNull();
        const gap = compilePlacement(hostOf((t) => isExpert(t) && t.layer! < 4 && t.layer !== 2), tensors);
        expect(moeFlagsFor(gap.overrides, names)).toBeNull();
        expect(moeFlagsFor([], names)).toBeNull();
    });
});
