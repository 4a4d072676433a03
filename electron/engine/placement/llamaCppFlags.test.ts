import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { compilePlacement } from "./compilePlacement.js";
import { cliBufferTypeName, renderLayerSplitFlags, renderOverrideFlags, shellQuote } from "./llamaCppFlags.js";
import { llamaTensorList } from "./testing/llamaTensorList.js";

const tensors = llamaTensorList({ layers: 32 });
const FFN = new Set(["ffn_gate", "ffn_up", "ffn_down"]);

/** Mirrors `parse_tensor_buffer_overrides` (common/arg.cpp): split on ',', then at the first '='. */
function llamaCppParse(value: string): { pattern: string; bufferType: string }[] {
    return value.split(",").map((pair) => {
        const at = pair.indexOf("=");
        if (at < 0) throw new Error("invalid value");
        return { pattern: pair.slice(0, at), bufferType: pair.slice(at + 1) };
    });
}

describe("renderOverrideFlags", () => {
    const placement = {
        defaultBufferType: "CUDA0",
        assignments: Object.fromEntries(tensors.filter((t) => FFN.has(t.role) || (t.layer ?? 0) >= 30).map((t) => [t.name, "CPU"]))
    };
    const { overrides } = compilePlacement(placement, tensors);

    it("renders -ngl 999, one -ot per override in order, and the load flags", () => {
        const rendered = renderOverrideFlags(overrides, { modelPath: "/models/my model.gguf", ubatch: 4096, threads: 8 });
        const otValues = rendered.argv.filter((_, i) => rendered.argv[i - 1] === "-ot");
        expect(rendered.argv.slice(0, 4)).toEqual(["-m", "/models/my model.gguf", "-ngl", "999"]);
        expect(otValues.flatMap(llamaCppParse)).toEqual(overrides);
        expect(rendered.argv.slice(-8)).toEqual(["-b", "4096", "-ub", "4096", "-t", "8", "--load-mode", "none"]);
        expect(rendered.command).toMatch(/^llama-cli -m '\/models\/my model\.gguf' -ngl 999 -ot '\^blk/);
    });

    it("round-trips through a real shell", () => {
        const rendered = renderOverrideFlags(overrides, { program: "printf" });
        const out = execFileSync("sh", ["-c", `${rendered.command.replace(/^printf/, "printf '%s\\n'")}`]).toString();
        expect(out.trimEnd().split("\n")).toEqual(rendered.argv);
    });

    it("writes host buffer types as CPU, with a note", () => {
        const rendered = renderOverrideFlags([{ pattern: "^output\\.weight$", bufferType: "CUDA_Host" }]);
        expect(rendered.argv).toContain("^output\\.weight$=CPU");
        expect(rendered.notes).toHaveLength(1);
        expect(cliBufferTypeName("Vulkan_Host")).toBe("CPU");
        expect(cliBufferTypeName("Vulkan0")).toBe("Vulkan0");
    });

    it("offers the older --no-mmap spelling and leaves mmap alone when nothing moves", () => {
        expect(renderOverrideFlags(overrides, { mmapFlagStyle: "no-mmap" }).argv.at(-1)).toBe("--no-mmap");
        expect(renderOverrideFlags([]).argv).toEqual(["-ngl", "999"]);
    });

    it("refuses patterns that llama.cpp's parser would split", () => {
        expect(() => renderOverrideFlags([{ pattern: "a{1,2}", bufferType: "CPU" }])).toThrow(/contains "," or "="/);
        expect(() => renderOverrideFlags([{ pattern: "a=b", bufferType: "CPU" }])).toThrow(/\\x3D/);
        expect(() => renderOverrideFlags(overrides, { threads: 0 })).toThrow(/threads must be a positive integer/);
    });
});

describe("renderLayerSplitFlags", () => {
    it("renders -ngl N with mmap off when partial", () => {
        expect(renderLayerSplitFlags(20, { layerCount: 32, ubatch: 512 }).argv).toEqual(["-ngl", "20", "-ub", "512", "--load-mode", "none"]);
        expect(renderLayerSplitFlags(33, { layerCount: 32 }).argv).toEqual(["-ngl", "33"]);
        expect(renderLayerSplitFlags(33, { layerCount: 32 }).command).toBe("llama-cli -ngl 33");
        expect(() => renderLayerSplitFlags(-1)).toThrow(RangeError);
    });
});

describe("shellQuote", () => {
    it("quotes only when needed and escapes single quotes", () => {
        expect(shellQuote("-ngl")).toBe("-ngl");
        expect(shellQuote("^blk\\.[0-9]+\\.$=CPU")).toBe("'^blk\\.[0-9]+\\.$=CPU'");
        expect(shellQuote("it's")).toBe("'it'\\''s'");
        expect(shellQuote("")).toBe("''");
    });
});
