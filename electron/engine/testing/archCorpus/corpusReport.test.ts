import {describe, expect, it} from "vitest";
import type {CorpusModelResult, CorpusStep} from "./checkCorpusModel.js";
import {corpusTotals, formatModelLine, formatTotalsLine, quantsFor} from "./corpusReport.js";

const ok: CorpusStep = {status: "ok", reason: null, ms: 1};
const result = (arch: string, file: string, steps: Partial<CorpusModelResult["steps"]> = {}, notes: string[] = []): CorpusModelResult =>
    ({arch, file, variant: "as written", bytes: 1, steps: {inspect: ok, plan: ok, cpu: ok, gpu: ok, ...steps}, notes});

describe("the corpus report", () => {
    it("writes one line per model with each step and the reason of any that did not pass", () => {
        const line = formatModelLine(result("arctic", "arctic-moe.gguf",
            {plan: {status: "fail", reason: "holds 1 experts", ms: 1}, gpu: {status: "skipped", reason: "--gpu none", ms: 0}}, ["2 weight matrices have no tensorwise role"]));
        expect(line).toMatch(/^arctic +arctic-moe\.gguf +as written inspect ok, plan FAIL \(holds 1 experts\), cpu ok, gpu skipped \(--gpu none\); 2 weight matrices/);
    });

    it("counts stock llama.cpp's own failures and skips apart from tensorwise's failures in the totals line", () => {
        const totals = corpusTotals([
            result("llama", "llama-dense.gguf"),
            result("deepseek2", "deepseek2-moe-q8_0.gguf", {cpu: {status: "stock-fail", reason: "GGML_ASSERT", ms: 1}}),
            result("arctic", "arctic-moe.gguf", {inspect: {status: "fail", reason: "x", ms: 1}, plan: {status: "fail", reason: "x", ms: 1}})
        ]);
        expect(totals.allOk).toBe(2);
        expect(formatTotalsLine(totals)).toBe("totals: 3 models (3 architectures); inspect 2/3 ok; plan 2/3 ok; cpu 2/3 ok (1 stock llama.cpp fails too); " +
            "gpu 3/3 ok; every step ok on 2; failing: arctic-moe.gguf (inspect, plan)");
    });

    it("quantizes to Q4_K only where a weight row is a multiple of 256, and to MXFP4 only for gpt-oss", () => {
        expect(quantsFor("deepseek2", [{shape: [128, 512]}, {shape: [256]}])).toEqual(["q8_0"]);
        expect(quantsFor("llama", [{shape: [256, 384]}])).toEqual(["q8_0", "q4_k"]);
        expect(quantsFor("gpt-oss", [{shape: [256, 384, 2]}])).toEqual(["q8_0", "q4_k", "mxfp4"]);
    });
});
