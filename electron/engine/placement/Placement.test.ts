import { describe, expect, it } from "vitest";
import { compilePlacement } from "./compilePlacement.js";
import {
    bufferTypeNameProblem,
    expandPlacementRules,
    parsePlacementFile,
    placementFromJson,
    placementFromValue,
    placementToFile,
    placementToJson,
    PlacementFileError,
    type Placement
} from "./Placement.js";
import { llamaTensorList, seededRandom } from "./testing/llamaTensorList.js";

const tensors = llamaTensorList({ layers: 32 });

function errorOf(run: () => unknown): PlacementFileError {
    try {
        run();
    } catch (error) {
        if (error instanceof PlacementFileError) return error;
        throw error;
    }
    throw new Error("expected a PlacementFileError");
}

describe("placement files", () => {
    it("round-trips a placement through JSON text", () => {
        const random = seededRandom(3);
        const placement: Placement = {
            defaultBufferType: "Vulkan0",
            assignments: Object.fromEntries(tensors.filter(() => random() < 0.3).map((t) => [t.name, random() < 0.5 ? "CPU" : "Vulkan_Host"]))
        };
        const text = placementToJson(placement);
        expect(text.endsWith("\n")).toBe(true);
        expect(JSON.parse(text)).toMatchObject({ version: 1, defaultBufferType: "Vulkan0" });
        expect(placementFromJson(text, tensors)).toEqual(placement);
        expect(placementFromValue(placementToFile(placement), tensors)).toEqual(placement);
    });

    it("expands hand-written rules (later rules win, explicit tensors win over rules)", () => {
        const file = {
            version: 1,
            defaultBufferType: "CUDA0",
            rules: [
                { match: { layers: "all", roles: ["ffn_up", "ffn_gate", "ffn_down"] }, bufferType: "CPU", comment: "FFN off the GPU" },
                { match: { layers: [0, 3], roles: ["ffn_up"] }, bufferType: "CUDA0" },
                { match: { names: ["output.weight"] }, bufferType: "CPU" }
            ],
            tensors: { "blk.31.attn_q.weight": "CPU", "blk.31.ffn_down.weight": "CUDA0" }
        };
        const placement = placementFromValue(file, tensors);
        const a = placement.assignments;
        expect(a["blk.10.ffn_up.weight"]).toBe("CPU");
        expect(a["blk.2.ffn_up.weight"]).toBe("CUDA0");
        expect(a["blk.2.ffn_gate.weight"]).toBe("CPU");
        expect(a["output.weight"]).toBe("CPU");
        expect(a["blk.31.attn_q.weight"]).toBe("CPU");
        expect(a["blk.31.ffn_down.weight"]).toBe("CUDA0");
        expect(a["blk.0.attn_q.weight"]).toBeUndefined();
        expect(Object.keys(a)).toHaveLength(32 * 3 + 2);
        expect(compilePlacement(placement, tensors).overrides.length).toBeLessThanOrEqual(4);
    });

    it("treats layers: [a, b] as inclusive and never selects non-layer tensors with a layer criterion", () => {
        const a = expandPlacementRules([{ match: { layers: [30, 31] }, bufferType: "CPU" }], tensors);
        expect(Object.keys(a)).toHaveLength(2 * 9);
        expect(a["token_embd.weight"]).toBeUndefined();
    });

    it("rejects a tensor the model does not have", () => {
        const error = errorOf(() => placementFromValue({ version: 1, defaultBufferType: "CUDA0", tensors: { "blk.32.ffn_up.weight": "CPU" } }, tensors));
        expect(error.path).toBe('tensors["blk.32.ffn_up.weight"]');
        expect(error.message).toMatch(/no such tensor in this model/);
    });

    it("rejects a non-string buffer type", () => {
        const error = errorOf(() => placementFromValue({ version: 1, defaultBufferType: "CUDA0", tensors: { "blk.0.ffn_up.weight": 0 } }, tensors));
        expect(error.path).toBe('tensors["blk.0.ffn_up.weight"]');
        expect(error.message).toMatch(/buffer type must be a string, got number 0/);
    });

    it("rejects a wrong or missing version", () => {
        expect(errorOf(() => parsePlacementFile({ version: 2, defaultBufferType: "CUDA0" })).message).toMatch(/version: unsupported version number 2 \(this app reads version 1\)/);
        expect(errorOf(() => parsePlacementFile({ defaultBufferType: "CUDA0" })).path).toBe("version");
        expect(errorOf(() => parsePlacementFile({ version: "1", defaultBufferType: "CUDA0" })).message).toMatch(/the string "1"/);
    });

    it("rejects malformed files with the offending path", () => {
        const cases: [unknown, string, RegExp][] = [
            [[], "", /must be a JSON object, got an array/],
            [{ version: 1 }, "defaultBufferType", /must be a string, got undefined/],
            [{ version: 1, defaultBufferType: "" }, "defaultBufferType", /must not be empty/],
            [{ version: 1, defaultBufferType: "CUDA0", tensor: {} }, "tensor", /unknown field/],
            [{ version: 1, defaultBufferType: "CUDA0", tensors: [] }, "tensors", /must be an object/],
            [{ version: 1, defaultBufferType: "CUDA0", tensors: { x: "CPU,CUDA0" } }, 'tensors["x"]', /comma/],
            [{ version: 1, defaultBufferType: "CUDA0", rules: {} }, "rules", /must be an array/],
            [{ version: 1, defaultBufferType: "CUDA0", rules: [{ match: { role: ["ffn_up"] }, bufferType: "CPU" }] }, "rules[0].match.role", /unknown field \(allowed: layers, roles, names\)/],
            [{ version: 1, defaultBufferType: "CUDA0", rules: [{ match: { layers: [5, 2] }, bufferType: "CPU" }] }, "rules[0].match.layers", /after last layer/],
            [{ version: 1, defaultBufferType: "CUDA0", rules: [{ match: { layers: [0, 1.5] }, bufferType: "CPU" }] }, "rules[0].match.layers", /non-negative integers/],
            [{ version: 1, defaultBufferType: "CUDA0", rules: [{ match: { roles: [] }, bufferType: "CPU" }] }, "rules[0].match.roles", /non-empty array/],
            [{ version: 1, defaultBufferType: "CUDA0", rules: [{ match: {}, bufferType: null }] }, "rules[0].bufferType", /got null/],
            [{ version: 1, defaultBufferType: "CUDA0", rules: [{ bufferType: "CPU" }] }, "rules[0].match", /must be an object/]
        ];
        for (const [value, path, message] of cases) {
            const error = errorOf(() => parsePlacementFile(value));
            expect(error.path, JSON.stringify(value)).toBe(path);
            expect(error.message).toMatch(message);
        }
    });

    it("rejects rules that select nothing or name unknown tensors", () => {
        const typo = { version: 1, defaultBufferType: "CUDA0", rules: [{ match: { roles: ["ffn_upp"] }, bufferType: "CPU" }] };
        const error = errorOf(() => placementFromValue(typo, tensors));
        expect(error.path).toBe("rules[0].match");
        expect(error.message).toMatch(/selects no tensor of this model \(its roles: token_embd, attn_norm/);
        const unknown = { version: 1, defaultBufferType: "CUDA0", rules: [{ match: { names: ["nope.weight"] }, bufferType: "CPU" }] };
        expect(errorOf(() => placementFromValue(unknown, tensors)).message).toMatch(/no tensor named "nope\.weight"/);
    });

    it("reports invalid JSON as a placement file error", () => {
        expect(errorOf(() => placementFromJson("{ version: 1", tensors)).message).toMatch(/^placement file: not valid JSON/);
    });

    it("stores a tensor called __proto__ as data, not as a prototype", () => {
        const odd = [...tensors, { name: "__proto__", layer: null, role: "odd", bytes: 1 }];
        const placement = placementFromJson('{"version":1,"defaultBufferType":"CUDA0","tensors":{"__proto__":"CPU"}}', odd);
        expect(Object.hasOwn(placement.assignments, "__proto__")).toBe(true);
        expect(placementFromJson(placementToJson(placement), odd)).toEqual(placement);
    });

    it("names the problem with a buffer type name", () => {
        expect(bufferTypeNameProblem("CUDA_Host")).toBeNull();
        expect(bufferTypeNameProblem("CUDA 0")).toMatch(/whitespace/);
        expect(bufferTypeNameProblem(7)).toMatch(/got number 7/);
    });
});
