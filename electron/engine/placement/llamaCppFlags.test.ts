import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { compilePlacement } from "./compilePlacement.js";
import { cliBufferTypeName, renderLayerSplitFlags, renderLlamaBenchFlags, renderLlamaCppFlags, renderOverrideFlags, shellQuote } from "./llamaCppFlags.js";
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

describe("renderLlamaCppFlags (the one choice of flags for a plan)", () => {
    const settings = { batchSize: 512, threads: 4, useMmap: true };
    it("a whole-layer plan is -ngl N with the plan's own settings; mmap stays on when the plan keeps it", () => {
        expect(renderLlamaCppFlags({ gpuLayers: 20, overrides: [], settings }, { modelPath: "m.gguf", layerCount: 32 }).command)
            .toBe("llama-cli -m m.gguf -ngl 20 -ub 512 -t 4");
        expect(renderLlamaCppFlags({ gpuLayers: 20, overrides: [], settings: { ...settings, useMmap: false } }).argv.slice(-2))
            .toEqual(["--load-mode", "none"]);
    });
    it("overrides (or every layer offloaded) render as -ngl 999 -ot …, and an exact --cpu-moe plan as that flag", () => {
        const overrides = [{ pattern: "^output\\.weight$", bufferType: "Vulkan_Host" }];
        expect(renderLlamaCppFlags({ gpuLayers: "max", overrides, settings: { ...settings, useMmap: false } }).argv)
            .toEqual(["-ngl", "999", "-ot", "^output\\.weight$=CPU", "-ub", "512", "-t", "4", "--load-mode", "none"]);
        expect(renderLlamaCppFlags({ gpuLayers: "max", overrides: [], settings }).argv).toEqual(["-ngl", "999", "-ub", "512", "-t", "4"]);
        const names = ["blk.0.ffn_up_exps.weight", "blk.0.attn_q.weight"];
        expect(renderLlamaCppFlags({ gpuLayers: "max", overrides: [{ pattern: "^blk\\.0\\.ffn_up_exps\\.weight$", bufferType: "CPU" }],
            settings: { ...settings, useMmap: false } }, { tensorNames: names }).argv).toContain("--cpu-moe");
    });
    it("every knob a plan sets is written out: --device none, --no-op-offload, -nkvo, -fa and the KV cache types", () => {
        const knobs = { useGpu: true, opOffload: true, kvOffload: true, flashAttention: false, kvCacheType: "f16" } as const;
        expect(renderLlamaCppFlags({ gpuLayers: 0, overrides: [], settings: { ...settings, ...knobs, useGpu: false } }, { layerCount: 8 }).command)
            .toBe("llama-cli -ngl 0 -ub 512 -t 4 -dev none -fa off");
        expect(renderLlamaCppFlags({ gpuLayers: 0, overrides: [], settings: { ...settings, ...knobs, opOffload: false } }, { layerCount: 8 }).command)
            .toBe("llama-cli -ngl 0 -ub 512 -t 4 --no-op-offload -fa off");
        expect(renderLlamaCppFlags({ gpuLayers: "max", overrides: [], settings: { ...settings, ...knobs, kvOffload: false, flashAttention: true, kvCacheType: "q4_0" } }).argv)
            .toEqual(["-ngl", "999", "-ub", "512", "-t", "4", "-nkvo", "-fa", "on", "-ctk", "q4_0", "-ctv", "q4_0"]);
    });
    it("llama-bench gets the same plan as one ;-joined -ot value, -fa 0 and -lm none", () => {
        expect(renderLlamaBenchFlags({ gpuLayers: "max", overrides: [{ pattern: "^a$", bufferType: "CUDA_Host" }, { pattern: "^b$", bufferType: "CPU" }],
            settings: { batchSize: 4096, threads: 2, useMmap: false } }))
            .toEqual(["-ngl", "999", "-ot", "^a$=CPU;^b$=CPU", "-b", "4096", "-ub", "4096", "-t", "2", "-fa", "0", "-lm", "none"]);
        expect(() => renderLlamaBenchFlags({ gpuLayers: "max", overrides: [{ pattern: "a;b", bufferType: "CPU" }], settings })).toThrow(/splits on/);
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
