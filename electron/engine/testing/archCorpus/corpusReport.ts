/** The corpus run as text: one line per model, each step ok or why not, and a totals line. */
import type {CorpusModelResult, CorpusStepName} from "./checkCorpusModel.js";

export const CORPUS_STEPS: readonly CorpusStepName[] = ["inspect", "plan", "cpu", "gpu"];

/** Which quantized variants a model gets: Q8_0 always, Q4_K where a weight row is a multiple of 256 (its block), MXFP4 for gpt-oss. */
export function quantsFor(arch: string, tensors: readonly {shape: readonly number[]}[]): ("q8_0" | "q4_k" | "mxfp4")[] {
    const quants: ("q8_0" | "q4_k" | "mxfp4")[] = ["q8_0"];
    // source: ggml QK_K = 256; llama-quantize falls back to another type for rows that are not a multiple of it
    if (tensors.some((tensor) => tensor.shape.length >= 2 && tensor.shape[0]! % 256 === 0)) quants.push("q4_k");
    if (arch === "gpt-oss") quants.push("mxfp4");
    return quants;
}

/** `arch file variant: inspect ok, plan ok, cpu ok, gpu FAIL (reason)`; notes after a `;`. */
export function formatModelLine(result: CorpusModelResult): string {
    const steps = CORPUS_STEPS.map((name) => {
        const step = result.steps[name];
        const label = step.status === "ok" ? "ok" : step.status === "fail" ? "FAIL" : step.status;
        return step.reason == null ? `${name} ${label}` : `${name} ${label} (${step.reason})`;
    });
    const notes = result.notes.length > 0 ? `; ${result.notes.join("; ")}` : "";
    return `${result.arch.padEnd(16)} ${result.file.padEnd(30)} ${result.variant.padEnd(9)} ${steps.join(", ")}${notes}`;
}

/** Counts per step and status, and the models with any failing step. */
export type CorpusTotals = {
    models: number;
    architectures: number;
    steps: Record<CorpusStepName, {ok: number; fail: number; stockFail: number; skipped: number}>;
    /** Models where every step that ran is ok (skipped and stock-fail steps aside). */
    allOk: number;
    failing: {arch: string; file: string; steps: CorpusStepName[]}[];
};

export function corpusTotals(results: readonly CorpusModelResult[]): CorpusTotals {
    const steps = Object.fromEntries(CORPUS_STEPS.map((name) => [name, {ok: 0, fail: 0, stockFail: 0, skipped: 0}])) as CorpusTotals["steps"];
    const failing: CorpusTotals["failing"] = [];
    for (const result of results) {
        const failed: CorpusStepName[] = [];
        for (const name of CORPUS_STEPS) {
            const status = result.steps[name].status;
            if (status === "ok") steps[name].ok++;
            else if (status === "fail") { steps[name].fail++; failed.push(name); }
            else if (status === "stock-fail") steps[name].stockFail++;
            else steps[name].skipped++;
        }
        if (failed.length > 0) failing.push({arch: result.arch, file: result.file, steps: failed});
    }
    return {
        models: results.length, architectures: new Set(results.map((result) => result.arch)).size,
        steps, allOk: results.length - failing.length, failing
    };
}

/** `totals: 254 models (121 architectures); inspect 254/254 ok, …; every step ok on 250, failing: arctic-moe.gguf (plan, cpu), …` */
export function formatTotalsLine(totals: CorpusTotals): string {
    const steps = CORPUS_STEPS.map((name) => {
        const counts = totals.steps[name];
        const ran = totals.models - counts.skipped;
        const extra = [counts.stockFail > 0 ? `${counts.stockFail} stock llama.cpp fails too` : "", counts.skipped > 0 ? `${counts.skipped} skipped` : ""]
            .filter((text) => text !== "");
        return `${name} ${counts.ok}/${ran} ok${extra.length > 0 ? ` (${extra.join(", ")})` : ""}`;
    });
    const failing = totals.failing.length === 0 ? "none failing" :
        `failing: ${totals.failing.map((entry) => `${entry.file} (${entry.steps.join(", ")})`).join(", ")}`;
    return `totals: ${totals.models} models (${totals.architectures} architectures); ${steps.join("; ")}; every step ok on ${totals.allOk}; ${failing}`;
}
