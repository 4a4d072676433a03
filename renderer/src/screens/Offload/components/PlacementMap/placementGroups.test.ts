import {describe, expect, it} from "vitest";
import {placementGroups} from "./placementGroups";

describe("placementGroups", () => {
    it("puts a MoE model's routed expert weights in their own block, keeping each layer's buffer types", () => {
        const groups = placementGroups({
            roles: ["attn_q", "ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps", "ffn_up_shexp"],
            grid: [
                ["Vulkan0", "Vulkan0", "CPU", "CPU", "Vulkan0", "Vulkan0"],
                ["Vulkan0", "Vulkan0", "Vulkan0", null, "Vulkan0", "CPU"]
            ],
            expertRoles: ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"]
        });
        expect(groups).toEqual([
            {kind: "dense", roles: ["attn_q", "ffn_gate_inp", "ffn_up_shexp"], rows: [["Vulkan0", "Vulkan0", "Vulkan0"], ["Vulkan0", "Vulkan0", "CPU"]]},
            {kind: "experts", roles: ["ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"], rows: [["CPU", "CPU", "Vulkan0"], ["Vulkan0", null, "Vulkan0"]]}
        ]);
    });

    it("keeps a dense model in one block (no expert roles, or a view from before they were named)", () => {
        expect(placementGroups({roles: ["attn_q", "ffn_up"], grid: [["CPU", "Vulkan0"]], expertRoles: []}).map((g) => g.kind)).toEqual(["dense"]);
        expect(placementGroups({roles: ["attn_q", "ffn_up"], grid: [["CPU", "Vulkan0"]]}).map((g) => g.kind)).toEqual(["dense"]);
    });
});
