import {describe, expect, it} from "vitest";
import {parseNvidiaSmiCsv} from "../benchEnvironment.js";
import {llamaBenchArgv} from "../benchFlags.js";
import {bestPerPoint, benchContextSize} from "../runBench.js";
import {median, summariseSamples} from "../stats.js";
import {fixtureReport} from "../testing/fixtureReport.js";
import {CSV_COLUMNS, csvField, reportCsv} from "./reportCsv.js";
import {reportHtml} from "./reportHtml.js";
import {escapeHtml, lineChartSvg, niceTicks} from "./svgChart.js";
import {STRATEGY_STYLES} from "../../../contract/strategyStyles.js";
import {predictionErrors, rangeCoverage, speedups, targetChecks} from "./summariseReport.js";

function parseCsvLine(line: string): string[] {
    const fields: string[] = [];
    let current = "";
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
        const c = line[i]!;
        if (quoted) {
            if (c === "\"" && line[i + 1] === "\"") { current += "\""; i++; } else if (c === "\"") quoted = false; else current += c;
        } else if (c === "\"") quoted = true;
        else if (c === ",") { fields.push(current); current = ""; } else current += c;
    }
    return [...fields, current];
}

describe("report builders", () => {
    const report = fixtureReport();

    it("CSV: the header, one row per point (a failed run gets one row), and every row as wide as the header", () => {
        const lines = reportCsv(report).trimEnd().split("\n");
        expect(lines[0]).toBe(CSV_COLUMNS.join(","));
        // 7 ok runs × 3 points + 1 failed run
        expect(lines).toHaveLength(1 + 7 * 3 + 1);
        for (const line of lines.slice(1)) expect(parseCsvLine(line)).toHaveLength(CSV_COLUMNS.length);
        const header = CSV_COLUMNS as readonly string[];
        const rows = lines.slice(1).map(parseCsvLine);
        const at = (row: string[], column: string) => row[header.indexOf(column)];
        const optimal64 = rows.find((r) => at(r, "budget") === "50%" && at(r, "variant") === "optimal" && at(r, "kind") === "ttft" && at(r, "tokens") === "64")!;
        expect(Number(at(optimal64, "median_ms"))).toBe(20);
        expect(Number(at(optimal64, "speedup_vs_layers"))).toBeCloseTo(5, 6);
        expect(Number(at(optimal64, "speedup_vs_fit"))).toBeCloseTo(10, 6);
        expect(Number(at(optimal64, "speedup_vs_best_tuned"))).toBeCloseTo(25 / 20, 6);
        expect(Number(at(optimal64, "error_pct"))).toBeCloseTo(5, 6);
        const failed = rows.find((r) => at(r, "status") === "failed")!;
        expect(at(failed, "error")).toBe("out of memory, \"CUDA0\"");
        expect(at(failed, "kind")).toBe("");
    });

    it("csvField quotes commas, quotes and newlines", () => {
        expect(csvField("a,b")).toBe("\"a,b\"");
        expect(csvField("say \"hi\"")).toBe("\"say \"\"hi\"\"\"");
        expect(csvField(null)).toBe("");
        expect(csvField(1.5)).toBe("1.5000");
        expect(csvField(3)).toBe("3");
    });

    it("speed-ups: baseline time over variant time; best-tuned is the faster hand-tuned baseline per point", () => {
        const cells = speedups(report);
        const get = (budget: string, variant: string, baseline: string, kind: string, tokens: number) =>
            cells.find((c) => c.budget === budget && c.variant === variant && c.baseline === baseline && c.kind === kind && c.tokens === tokens);
        expect(get("50%", "optimal", "layers", "ttft", 2048)?.speedup).toBeCloseTo(2, 9);
        expect(get("50%", "optimal", "layers", "tpot", 32)?.speedup).toBeCloseTo(1.25, 9);
        // best tuned at 2048: min(1300 layers-tuned, 1250 fit-tuned) = 1250
        expect(get("50%", "optimal", "best-tuned", "ttft", 2048)?.baselineMs).toBe(1250);
        expect(get("50%", "layers", "layers", "ttft", 64)?.speedup).toBe(1);
        // fit failed at 75%: no cells against it there; no tuned runs at 75% either
        expect(get("75%", "optimal", "fit", "ttft", 64)).toBeUndefined();
        expect(get("75%", "optimal", "best-tuned", "ttft", 64)).toBeUndefined();
        expect(get("75%", "optimal", "layers", "ttft", 64)?.speedup).toBe(5);
    });

    it("speed-ups against the MoE baselines, in their own HTML table, where the report has their runs", () => {
        expect(speedups(report, ["cpu-moe"])).toEqual([]);
        expect(reportHtml(report)).not.toContain("vs cpu-moe");
        // a cpu-moe run twice as slow as optimal at every point of the 50% budget
        const optimal = report.runs.find((run) => run.budget === "50%" && run.variant.label === "optimal")!;
        const cpuMoe = {...optimal, id: "50%/cpu-moe", variant: {label: "cpu-moe", strategy: "cpu-moe" as const, handTuned: false},
            points: optimal.points.map((p) => ({...p, medianMs: 2 * p.medianMs}))};
        const moeReport = {...report, runs: [...report.runs, cpuMoe]};
        const cells = speedups(moeReport, ["cpu-moe"]).filter((c) => c.variant === "optimal" && c.budget === "50%");
        expect(cells.length).toBe(optimal.points.length);
        for (const cell of cells) expect(cell.speedup).toBeCloseTo(2, 9);
        expect(reportHtml(moeReport)).toContain("vs cpu-moe (llama.cpp --cpu-moe");
    });

    it("prediction errors: median absolute % error per variant, split by TTFT and TPOT", () => {
        const errors = predictionErrors(report);
        const layers = errors.find((e) => e.variant === "layers")!;
        // ttft errors: |90-100|/100=10%, |2100-2000|/2000=5%, |55-50|/50=10%, 0% → median 7.5; tpot: 5%, 0% → 2.5
        expect(layers.ttft).toBeCloseTo(7.5, 9);
        expect(layers.tpot).toBeCloseTo(2.5, 9);
        expect(layers.points).toBe(6);
        expect(errors.find((e) => e.variant === "fit")!.all).toBe(0);
        expect(errors.find((e) => e.variant === "layers-tuned")).toMatchObject({ttft: null, tpot: null, all: null, points: 0});
    });

    it("target checks for optimal per budget", () => {
        const [half, threeQuarters] = targetChecks(report);
        expect(half).toMatchObject({budget: "50%", shortPrompt: 64, longPrompt: 2048, ttftShortVsLayers: 5, tpotVsLayers: 1.25});
        // vs best tuned: pp64 25/20, pp2048 1250/1000, tg32 36/32 → worst 1.125
        expect(half!.worstVsBestTuned).toBeCloseTo(1.125, 9);
        expect(half!.ttftLongVsBestTuned).toBeCloseTo(1.25, 9);
        expect(half!.tpotOverFloor).toBeCloseTo(3.2, 9);
        expect(threeQuarters).toMatchObject({ttftShortVsLayers: 5, worstVsBestTuned: null, ttftLongVsBestTuned: null});
    });

    it("HTML: self-contained (no external URLs, scripts or imports), with the charts and tables", () => {
        const html = reportHtml(report);
        expect(html).not.toMatch(/https?:\/\//i);
        expect(html).not.toMatch(/\b(src|href)\s*=/i);
        expect(html).not.toMatch(/@import|url\(/i);
        expect(html).toContain("<svg");
        expect(html.match(/<svg /g)?.length).toBe(2 + 2 + 3);
        expect(html).toContain("vs layers");
        expect(html).toContain("Predicted vs measured");
        expect(html).toContain("NVIDIA H100 80GB HBM3");
        expect(html).toContain("out of memory, &quot;CUDA0&quot;");
    });

    it("HTML for a user: the app's strategy colours and words, targets explained, no references a reader cannot open", () => {
        const html = reportHtml(report);
        for (const label of ["layers", "optimal", "layers-tuned"] as const) {
            expect(html, label).toContain(`background:${STRATEGY_STYLES[label].color}`);
            expect(html, label).toContain(escapeHtml(STRATEGY_STYLES[label].description));
        }
        expect(html).toContain(`stroke="${STRATEGY_STYLES.fit.color}"`);
        expect(html).toMatch(/First token vs layers<\/b>: how many times sooner/);
        expect(html).not.toMatch(/issue \d|seed 0|cf\. Fig|Fig\. \d/i);
        expect(html).toContain("3 repeats per point");
        const once = reportHtml({...report, settings: {...report.settings, repeats: 1}});
        expect(once).toContain("1 repeat per point");
        expect(once).toContain("One measurement per point (1 repeat)");
        expect(once).not.toMatch(/\b1 repeats\b/);
    });

    it("log-axis ticks sit at round values, also when the data spans less than a decade", () => {
        expect(niceTicks(1, 1000, true)).toEqual([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]);
        expect(niceTicks(2097, 5552, true)).toEqual([3000, 4000, 5000]);
        expect(niceTicks(2097, 2400, true)).toEqual([2100, 2200, 2300, 2400]);
        const svg = lineChartSvg([{name: "layers", color: "#000", points: [{x: 64, y: 2621}, {x: 2048, y: 4441}]}],
            {title: "t", xLabel: "x", yLabel: "y", logX: true, logY: true});
        const yTicks = [...svg.matchAll(/class="tick" text-anchor="end"[^>]*>([^<]+)</g)].map((match) => match[1]);
        expect(yTicks.length).toBeGreaterThanOrEqual(2);
        for (const tick of yTicks) expect(tick, "a round tick").toMatch(/^[1-9]0*$|^[1-9]\.?0*k$/);
    });

    it("HTML escapes what it shows from the report", () => {
        const evil = {...report, model: {...report.model, path: "/m/<script>alert(1)</script>.gguf"}};
        expect(reportHtml(evil)).not.toContain("<script>");
    });
});

describe("bench helpers", () => {
    it("median and spread", () => {
        expect(median([3, 1, 2])).toBe(2);
        expect(median([4, 1, 2, 3])).toBe(2.5);
        expect(summariseSamples([9, 10, 11])).toEqual({medianMs: 10, minMs: 9, maxMs: 11, spreadPct: 20});
        expect(() => median([])).toThrow();
    });

    it("llama-bench flags: one -ot value with ;-separated pairs, host buffer types as CPU, no mmap as -lm none", () => {
        const defaults = {useGpu: true, opOffload: true, kvOffload: true, flashAttention: false, kvCacheType: "f16"} as const;
        const plan = {gpuLayers: "max" as const, overrides: [{pattern: "^blk\\.0\\.ffn_up\\.weight$", bufferType: "CUDA_Host"},
            {pattern: "^blk\\.1\\.ffn_up\\.weight$", bufferType: "CPU"}], batchSize: 4096, contextSize: 4096, threads: 16, useMmap: false,
        hostWeightBytes: 1, gpuWeightBytes: 1, predictedVramBytes: 1, notes: [], knobs: defaults};
        const cells = {modelPath: "m.gguf", layerCount: 32, prompts: [64, 2048], gens: [32, 128], repeats: 3};
        expect(llamaBenchArgv(plan, cells)).toEqual(["-m", "m.gguf", "-ngl", "999", "-ot", "^blk\\.0\\.ffn_up\\.weight$=CPU;^blk\\.1\\.ffn_up\\.weight$=CPU",
            "-b", "4096", "-ub", "4096", "-t", "16", "-fa", "0", "-lm", "none", "-p", "64,2048", "-n", "32,128", "-r", "3", "-o", "json"]);
        // every knob that is not llama.cpp's default gets its flag: none is dropped on the way to stock llama-bench
        expect(llamaBenchArgv({...plan, knobs: {...defaults, opOffload: false, kvOffload: false, flashAttention: true, kvCacheType: "q8_0"}}, cells).join(" "))
            .toContain("-fa 1 -lm none -nopo 1 -nkvo 1 -ctk q8_0 -ctv q8_0 -p");
        expect(llamaBenchArgv({...plan, gpuLayers: 0, overrides: [], useMmap: true, knobs: {...defaults, useGpu: false}}, cells).join(" "))
            .toBe("-m m.gguf -ngl 0 -b 4096 -ub 4096 -t 16 -fa 0 -dev none -p 64,2048 -n 32,128 -r 3 -o json");
    });

    it("nvidia-smi CSV", () => {
        expect(parseNvidiaSmiCsv("name, driver_version, memory.total [MiB]\nNVIDIA H100 80GB HBM3, 580.65.06, 81559 MiB\n"))
            .toEqual([{name: "NVIDIA H100 80GB HBM3", driver: "580.65.06", memoryTotal: "81559 MiB"}]);
        expect(parseNvidiaSmiCsv("")).toEqual([]);
    });

    it("hand-tuned runs keep the fastest micro-batch per point; the context fits the longest request", () => {
        const p = (ms: number, batchSize: number) => ({kind: "ttft" as const, tokens: 64, samplesMs: [ms], medianMs: ms, minMs: ms, maxMs: ms,
            spreadPct: 0, tokensPerSec: 1, predictedMs: null, batchSize});
        expect(bestPerPoint([[p(10, 512)], [p(8, 2048)]])).toEqual([p(8, 2048)]);
        expect(benchContextSize([32, 2048], [32, 128], 1, 8)).toBe(2304);
    });
});

describe("ranges in a report", () => {
    it("counts, per variant, the cells whose measurement fell inside the range predicted for it, and shows the share", () => {
        const report = fixtureReport();
        const runs = report.runs.map((run, r) => ({...run, points: run.points.map((point, i) => ({...point,
            // every other point's range misses its measurement in the first run; the rest hold theirs
            predictedRangeMs: r === 0 && i % 2 === 1 ? {lowMs: point.medianMs * 2, highMs: point.medianMs * 3} : {lowMs: point.medianMs * 0.9, highMs: point.medianMs * 1.1}}))}));
        const coverage = rangeCoverage({...report, runs});
        const first = coverage.find((c) => c.variant === runs[0]!.variant.label)!;
        expect(first.cells).toBeGreaterThan(1);
        expect(first.held).toBe(first.cells - runs.filter((run) => run.variant.label === first.variant && run.status === "ok")
            .reduce((misses, run) => misses + (run === runs[0] ? run.points.filter((_, i) => i % 2 === 1).length : 0), 0));
        expect(reportHtml({...report, runs})).toContain("Within the predicted range");
        // a report from before ranges existed shows no such table
        expect(rangeCoverage(report)).toEqual([]);
        expect(reportHtml(report)).not.toContain("Within the predicted range");
    });
});
