import { describe, expect, it } from "vitest";
import {
    compilePlacement,
    LLAMA_MAX_TENSOR_BUFT_OVERRIDES,
    MAX_OVERRIDE_PATTERNS,
    PlacementCompileError
} from "./compilePlacement.js";
import type { Placement, PlacementTensor } from "./Placement.js";
import { LLAMA_LAYER_ROLES, llamaTensorList, seededRandom } from "./testing/llamaTensorList.js";
import { llamaCppNaturalBufferType, plannedBufferType, resolveBufferTypes } from "./verifyOverrides.js";

const GPU = "CUDA0";
const FFN = new Set(["ffn_gate", "ffn_up", "ffn_down"]);

function placementWhere(tensors: readonly PlacementTensor[], pick: (t: PlacementTensor) => string | null, defaultBufferType = GPU): Placement {
    const assignments: Record<string, string> = {};
    for (const tensor of tensors) {
        const bufferType = pick(tensor);
        if (bufferType !== null) assignments[tensor.name] = bufferType;
    }
    return { defaultBufferType, assignments };
}

/** Independent check: simulate llama.cpp and compare every tensor with the plan. */
function expectRealised(placement: Placement, tensors: readonly PlacementTensor[], overrides: Parameters<typeof resolveBufferTypes>[0]): void {
    const natural = llamaCppNaturalBufferType(placement.defaultBufferType);
    const resolved = resolveBufferTypes(overrides, tensors.map((t) => t.name), placement.defaultBufferType);
    for (const tensor of tensors) {
        expect(resolved.get(tensor.name), tensor.name).toBe(plannedBufferType(placement, tensor.name, natural));
    }
}

function expectPortable(overrides: readonly { pattern: string }[]): void {
    for (const { pattern } of overrides) {
        expect(pattern.startsWith("^"), pattern).toBe(true);
        expect(pattern, "a comma or = would break llama.cpp's -ot parser").not.toMatch(/[,=]/);
    }
}

describe("compilePlacement", () => {
    const llama32 = llamaTensorList({ layers: 32 });

    it("needs no override when nothing moves", () => {
        const compiled = compilePlacement({ defaultBufferType: GPU, assignments: {} }, llama32);
        expect(compiled.overrides).toEqual([]);
    });

    it("puts all FFN weights of 32 layers on the CPU with 1 pattern", () => {
        const placement = placementWhere(llama32, (t) => (FFN.has(t.role) ? "CPU" : null));
        const { overrides } = compilePlacement(placement, llama32);
        expect(overrides).toEqual([{ pattern: "^blk\\.[0-9]+\\.ffn_(?:gate|up|down)\\.weight$", bufferType: "CPU" }]);
        expectRealised(placement, llama32, overrides);
    });

    it("ignores assignments that restate the default", () => {
        const placement = placementWhere(llama32, (t) => (FFN.has(t.role) ? "CPU" : t.role === "token_embd" ? "CPU" : GPU));
        const { overrides } = compilePlacement(placement, llama32);
        expect(overrides).toHaveLength(1);
        expectRealised(placement, llama32, overrides);
    });

    it("puts FFN of layers 0-15 on the CPU with one ranged pattern", () => {
        const placement = placementWhere(llama32, (t) => (FFN.has(t.role) && (t.layer ?? 99) <= 15 ? "CPU" : null));
        const { overrides } = compilePlacement(placement, llama32);
        expect(overrides).toEqual([{ pattern: "^blk\\.(?:[0-9]|1[0-5])\\.ffn_(?:gate|up|down)\\.weight$", bufferType: "CPU" }]);
        expectRealised(placement, llama32, overrides);
    });

    it("puts the last 8 layers on the CPU with one layer-prefix pattern", () => {
        const placement = placementWhere(llama32, (t) => (t.layer !== null && t.layer >= 24 ? "CPU" : null));
        const { overrides } = compilePlacement(placement, llama32);
        expect(overrides).toHaveLength(1);
        expect(overrides[0]?.bufferType).toBe("CPU");
        expect(overrides[0]?.pattern).toMatch(/^\^blk\\\.\(\?:2\[4-9\]\|3/);
        expectRealised(placement, llama32, overrides);
    });

    it("uses an earlier exception pattern to keep one tensor of a moved block where it is", () => {
        const placement = placementWhere(llama32, (t) => (t.layer !== null && t.layer >= 16 && t.name !== "blk.20.attn_norm.weight" ? "CPU" : null));
        const { overrides } = compilePlacement(placement, llama32);
        expect(overrides.length).toBeLessThanOrEqual(2);
        expectRealised(placement, llama32, overrides);
    });

    it("moves token_embd onto the GPU explicitly (llama.cpp keeps the input layer on the CPU by default)", () => {
        const placement: Placement = { defaultBufferType: GPU, assignments: { "token_embd.weight": GPU, "output.weight": "CPU" } };
        const { overrides } = compilePlacement(placement, llama32);
        expect(overrides).toEqual([
            { pattern: "^token_embd\\.weight$", bufferType: GPU },
            { pattern: "^output\\.weight$", bufferType: "CPU" }
        ]);
        expectRealised(placement, llama32, overrides);
    });

    it("keeps FFN on CPU and the last layers entirely on CPU in 2 patterns", () => {
        const placement = placementWhere(llama32, (t) => (t.layer !== null && (FFN.has(t.role) || t.layer >= 28) ? "CPU" : null));
        const { overrides } = compilePlacement(placement, llama32);
        expect(overrides).toHaveLength(2);
        expectRealised(placement, llama32, overrides);
    });

    it("needs no overrides on a CPU-only machine", () => {
        const placement = placementWhere(llama32, () => "CPU", "CPU");
        expect(compilePlacement(placement, llama32).overrides).toEqual([]);
    });

    for (const [layers, seed] of [[32, 1], [32, 2], [32, 3], [80, 4], [80, 5], [80, 6]] as const) {
        it(`realises a random per-tensor plan exactly (${layers} layers, seed ${seed})`, () => {
            const tensors = llamaTensorList({ layers });
            const random = seededRandom(seed);
            const bufferTypes = [GPU, "CPU", "CUDA_Host", "CUDA1"];
            const placement = placementWhere(tensors, () => bufferTypes[Math.floor(random() * bufferTypes.length)] as string);
            const { overrides } = compilePlacement(placement, tensors);
            expectRealised(placement, tensors, overrides);
            expectPortable(overrides);
            expect(overrides.length).toBeLessThan(tensors.length);
        });
    }

    for (const [layers, seed] of [[32, 11], [80, 12]] as const) {
        it(`realises a random mostly-blocky plan with few patterns (${layers} layers, seed ${seed})`, () => {
            const tensors = llamaTensorList({ layers });
            const random = seededRandom(seed);
            const cut = Math.floor(layers / 2);
            // Layers past the cut on CPU, FFN before it on CPU, and ~2% random flips.
            const placement = placementWhere(tensors, (t) => {
                const base = t.layer !== null && (t.layer >= cut || FFN.has(t.role)) ? "CPU" : GPU;
                return random() < 0.02 ? (base === "CPU" ? GPU : "CPU") : base;
            });
            const { overrides } = compilePlacement(placement, tensors);
            expectRealised(placement, tensors, overrides);
            expect(overrides.length).toBeLessThan(40);
        });
    }

    it("handles models whose layers have different tensors (absent cells are don't-cares)", () => {
        const tensors = llamaTensorList({ layers: 12 }).filter((t) => !(t.layer !== null && t.layer % 3 === 0 && t.role === "ffn_gate"));
        tensors.push({ name: "blk.3.ffn_gate_exps.weight", layer: 3, role: "ffn_gate_exps", bytes: 1 });
        const placement = placementWhere(tensors, (t) => (t.role.startsWith("ffn_gate") ? "CPU" : null));
        const { overrides } = compilePlacement(placement, tensors);
        expectRealised(placement, tensors, overrides);
    });

    it("escapes odd tensor names and still realises the plan", () => {
        const tensors: PlacementTensor[] = [
            ...llamaTensorList({ layers: 2 }),
            { name: "weird,name=x(1).weight", layer: null, role: "weird", bytes: 1 },
            { name: "blk.01.ffn_up.weight", layer: null, role: "odd", bytes: 1 },
            { name: "blk.1.ffn_up.weight.extra", layer: 1, role: "extra", bytes: 1 }
        ];
        const placement = placementWhere(tensors, (t) => (t.name.includes("ffn_up") && t.role !== "odd") || t.role === "weird" ? "CPU" : null);
        const { overrides } = compilePlacement(placement, tensors);
        expectRealised(placement, tensors, overrides);
        expectPortable(overrides);
    });

    it("lists large exception blocks before small ones and exceptions before bases", () => {
        const placement = placementWhere(llama32, (t) => (t.layer === null ? null : t.layer === 5 && t.role === "attn_q" ? GPU : "CPU"));
        const { overrides } = compilePlacement(placement, llama32);
        expectRealised(placement, llama32, overrides);
        expect(overrides.at(-1)?.bufferType).toBe("CPU");
    });

    it("rejects assignments to tensors the model does not have", () => {
        const placement: Placement = { defaultBufferType: GPU, assignments: { "blk.99.ffn_up.weight": "CPU" } };
        expect(() => compilePlacement(placement, llama32)).toThrow(/blk\.99\.ffn_up\.weight.*no such tensor/);
    });

    it("refuses plans that need more overrides than allowed, with a clear message", () => {
        const random = seededRandom(7);
        const placement = placementWhere(llama32, () => (random() < 0.5 ? "CPU" : GPU));
        expect(() => compilePlacement(placement, llama32, { maxOverrides: 2 })).toThrow(PlacementCompileError);
        expect(() => compilePlacement(placement, llama32, { maxOverrides: 2 })).toThrow(/more than llama\.cpp accepts \(2\)/);
        expect(() => compilePlacement(placement, llama32, { maxOverrides: MAX_OVERRIDE_PATTERNS + 1 })).toThrow(RangeError);
    });

    it("honours llama.cpp's limit (source value 4096 including the terminator)", () => {
        expect(LLAMA_MAX_TENSOR_BUFT_OVERRIDES).toBe(4096);
        expect(MAX_OVERRIDE_PATTERNS).toBe(4095);
    });

    it("accepts a custom natural placement (e.g. a multi-GPU layer split)", () => {
        const natural = (name: string): string => {
            const layer = /^blk\.(\d+)\./.exec(name)?.[1];
            return layer !== undefined && Number(layer) >= 16 ? "CUDA1" : name.startsWith("token_embd") ? "CPU" : "CUDA0";
        };
        const placement = placementWhere(llama32, (t) => (FFN.has(t.role) ? "CPU" : null));
        const { overrides } = compilePlacement(placement, llama32, { natural });
        expect(overrides).toHaveLength(1);
        const resolved = resolveBufferTypes(overrides, llama32.map((t) => t.name), natural);
        for (const tensor of llama32) expect(resolved.get(tensor.name)).toBe(plannedBufferType(placement, tensor.name, natural));
    });

    it("covers every llama role in the fixture", () => {
        expect(new Set(llama32.filter((t) => t.layer === 0).map((t) => t.role))).toEqual(new Set(LLAMA_LAYER_ROLES));
    });
});
