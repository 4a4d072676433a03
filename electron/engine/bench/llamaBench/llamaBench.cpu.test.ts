import {spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {probeEngine} from "../../testing/probeEngine.js";
import {requiredOrSkip} from "../../testing/requiredOrSkip.js";
import {makeTestModel} from "../../testing/testModels.js";
import {stockRatios} from "../report/summariseReport.js";
import {runBench} from "../runBench.js";
import {defaultLlamaBenchPaths, ensureLlamaBench, LlamaBenchUnavailable} from "./buildLlamaBench.js";
import {parseLlamaBenchJson} from "./runLlamaBench.js";

describe("llama-bench output and build errors (no model)", () => {
    it("reads pp and tg cells from llama-bench's JSON, after any log lines, at the median repetition like our own points", () => {
        const text = "log line\n[\n{\"n_prompt\": 64, \"n_gen\": 0, \"avg_ts\": 48.5, \"stddev_ts\": 1.5, \"samples_ns\": [1000000000, 1600000000, 1280000000]},\n" +
            "{\"n_prompt\": 0, \"n_gen\": 32, \"avg_ts\": 18.6, \"stddev_ts\": 0.2, \"samples_ns\": [1600000000, 3200000000]}\n]\n";
        expect(parseLlamaBenchJson(text)).toEqual([
            // pp: the median repetition took 1280 ms for 64 tokens
            {kind: "ttft", tokens: 64, tokensPerSec: 50, meanTokensPerSec: 48.5, stdevTokensPerSec: 1.5, samplesMs: [1000, 1600, 1280]},
            // tg: 50 and 100 ms per token, median 75 ms
            {kind: "tpot", tokens: 32, tokensPerSec: 1000 / 75, meanTokensPerSec: 18.6, stdevTokensPerSec: 0.2, samplesMs: [50, 100]}
        ]);
        // an older llama-bench without samples: its mean is all there is
        expect(parseLlamaBenchJson("[{\"n_prompt\": 0, \"n_gen\": 8, \"avg_ts\": 20}]")[0]).toMatchObject({tokensPerSec: 20, samplesMs: []});
        expect(() => parseLlamaBenchJson("error: failed to load model")).toThrow(/no JSON results/);
    });

    it("a missing compiler is a sentence naming what to install, and nothing is left half-built", () => {
        const paths = defaultLlamaBenchPaths("cpu");
        if (!fs.existsSync(paths.libDir)) return; // the other tier covers installs without the cpu build
        const cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-llama-bench-"));
        const saved = process.env.CXX;
        process.env.CXX = path.join(cacheRoot, "no-such-compiler");
        try {
            expect(() => ensureLlamaBench("cpu", {paths: {...paths, cacheRoot}})).toThrow(LlamaBenchUnavailable);
            expect(() => ensureLlamaBench("cpu", {paths: {...paths, cacheRoot}})).toThrow(/no C\+\+ compiler .*install g\+\+/);
            const built = fs.readdirSync(cacheRoot).flatMap((dir) => fs.readdirSync(path.join(cacheRoot, dir)));
            expect(built.filter((name) => name.startsWith("llama-bench"))).toEqual([]);
        } finally {
            if (saved == null) delete process.env.CXX; else process.env.CXX = saved;
            fs.rmSync(cacheRoot, {recursive: true, force: true});
        }
    });
});

const probe = await probeEngine("cpu");
const compiler = spawnSync(process.env.CXX ?? "g++", ["--version"]);
const skip = requiredOrSkip("bench --llama-bench on the CPU build",
    probe.reason ?? (compiler.status === 0 ? null : `no C++ compiler (${process.env.CXX ?? "g++"}) to build llama-bench`));

describe.skipIf(skip != null)("bench --llama-bench on a generated model, CPU only (real llama-bench)", () => {
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-bench-stock-"));
    afterAll(async () => {
        await probe.engine?.llama.dispose();
        fs.rmSync(outDir, {recursive: true, force: true});
    });

    // building llama-bench the first time takes about a minute on 2 quiet cores; the cache makes later runs quick
    it("runs stock llama-bench on every cell with the recorded flags and reports tokens/s ratios for pp and tg", async () => {
        const modelPath = await makeTestModel("bench-stock-tiny", {preset: "tiny", type: "f16"});
        const report = await runBench(probe.engine!, {
            modelPath, budgets: [{label: "0%", budget: {kind: "percent", percent: 0}}], prompts: [16], gens: [8],
            variants: [{label: "cpu", strategy: "cpu", handTuned: false}], repeats: 2, threads: 1, warmupTokens: 2, outDir, llamaBench: true
        });
        const run = report.runs[0]!;
        expect([run.status, run.error]).toEqual(["ok", null]);
        const stock = run.loads[0]!.llamaBench!;
        expect(stock.error).toBeNull();
        expect(fs.existsSync(stock.program)).toBe(true);
        expect(stock.cells.map((c) => `${c.kind}${c.tokens}`)).toEqual(["ttft16", "tpot8"]);
        const ratios = stockRatios(report);
        console.log(`vs stock llama.cpp (tiny model): ${ratios.map((c) => `${c.kind}${c.tokens} ${c.ratio.toFixed(2)}×`).join(", ")}`);
        expect(ratios.map((c) => `${c.kind}${c.tokens}`)).toEqual(["ttft16", "tpot8"]);
        for (const cell of ratios) {
            expect(cell.stockTokensPerSec).toBeGreaterThan(0);
            expect(cell.ratio).toBeCloseTo(cell.tokensPerSec / cell.stockTokensPerSec, 6);
            expect(cell.ratio).toBeGreaterThan(0);
        }
        expect(fs.readFileSync(path.join(outDir, "report.html"), "utf8")).toContain("vs stock llama.cpp");
        const csv = fs.readFileSync(path.join(outDir, "report.csv"), "utf8").trimEnd().split("\n");
        expect(csv[0]).toMatch(/,stock_tokens_per_sec,vs_stock$/);
        expect(csv.slice(1).every((line) => /,\d+(\.\d+)?,\d+\.\d+$/.test(line))).toBe(true);
    }, 600_000);
});
