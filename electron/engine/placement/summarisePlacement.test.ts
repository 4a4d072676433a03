import { describe, expect, it } from "vitest";
import type { Placement } from "./Placement.js";
import { summarisePlacement } from "./summarisePlacement.js";
import { LLAMA_LAYER_ROLES, llamaTensorList } from "./testing/llamaTensorList.js";

const tensors = llamaTensorList({ layers: 32 });
const FFN = new Set(["ffn_gate", "ffn_up", "ffn_down"]);

describe("summarisePlacement", () => {
    const placement: Placement = {
        defaultBufferType: "CUDA0",
        assignments: Object.fromEntries(tensors.filter((t) => FFN.has(t.role)).map((t) => [t.name, "CPU"]))
    };
    const summary = summarisePlacement(placement, tensors);

    it("totals bytes and tensors per buffer type, counting the input layer on the CPU", () => {
        const ffnBytes = tensors.filter((t) => FFN.has(t.role)).reduce((s, t) => s + t.bytes, 0);
        const embd = tensors.find((t) => t.name === "token_embd.weight")?.bytes ?? 0;
        const all = tensors.reduce((s, t) => s + t.bytes, 0);
        expect(summary.totalBytes).toBe(all);
        expect(summary.totalTensors).toBe(tensors.length);
        expect(summary.byBufferType).toEqual([
            { bufferType: "CPU", bytes: ffnBytes + embd, tensors: 96 + 1 },
            { bufferType: "CUDA0", bytes: all - ffnBytes - embd, tensors: tensors.length - 97 }
        ]);
        expect(summary.movedTensors).toBe(96);
        expect(summary.movedBytes).toBe(ffnBytes);
    });

    it("builds a layer × role map", () => {
        expect(summary.roles).toEqual([...LLAMA_LAYER_ROLES]);
        expect(summary.rows.map((r) => r.layer)).toEqual(Array.from({ length: 32 }, (_, i) => i));
        const row = summary.rows[7];
        expect(row?.cells.map((c) => c?.bufferType)).toEqual(LLAMA_LAYER_ROLES.map((r) => (FFN.has(r) ? "CPU" : "CUDA0")));
        expect(row?.cells.every((c) => c !== null && !c.mixed && c.tensors === 1)).toBe(true);
        expect(row?.byBufferType.map((e) => e.bufferType)).toEqual(["CPU", "CUDA0"]);
        expect(summary.globals.map((g) => [g.name, g.bufferType])).toEqual([
            ["token_embd.weight", "CPU"],
            ["output_norm.weight", "CUDA0"],
            ["output.weight", "CUDA0"]
        ]);
    });

    it("marks cells split over buffer types and leaves missing roles empty", () => {
        const withBias = [
            ...tensors.filter((t) => !(t.layer === 1 && t.role === "attn_norm")),
            { name: "blk.0.attn_q.bias", layer: 0, role: "attn_q", bytes: 16384 }
        ];
        const s = summarisePlacement({ defaultBufferType: "CUDA0", assignments: { "blk.0.attn_q.bias": "CPU" } }, withBias);
        const cell = s.rows[0]?.cells[s.roles.indexOf("attn_q")];
        expect(cell).toMatchObject({ bufferType: "CUDA0", mixed: true, tensors: 2 });
        expect(s.rows[1]?.cells[s.roles.indexOf("attn_norm")]).toBeNull();
    });
});
