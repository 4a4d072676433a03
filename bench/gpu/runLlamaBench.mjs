#!/usr/bin/env node
// Runs stock llama-bench on the `layers` / `fit` rows (and their hand-tuned twins) of a finished `tensorwise bench`
// report, with the exact flags recorded in report.json (load.reproduce.benchArgv), and writes llama-bench's cells next
// to the report plus a comparison table (tensorwise t/s ÷ llama-bench t/s per cell).
// The binary comes from the same builder as `tensorwise bench --llama-bench` (dist/electron/engine/bench/llamaBench/):
// compiled once from the llama.cpp source against the libraries of node-llama-cpp's local build that the app loaded.
// Usage: node bench/gpu/runLlamaBench.mjs <report.json> [seconds left]
// Cells already measured (their JSON exists) are skipped, so a second call continues.
import fs from "node:fs";
import path from "node:path";
import {ensureLlamaBench, llamaBenchVariantOf} from "../../dist/electron/engine/bench/llamaBench/buildLlamaBench.js";
import {runLlamaBench} from "../../dist/electron/engine/bench/llamaBench/runLlamaBench.js";

const [reportPath, secondsArg] = process.argv.slice(2);
if (reportPath == null) {
    console.error("usage: runLlamaBench.mjs <report.json> [seconds left]");
    process.exit(2);
}
const deadline = Date.now() + 1000 * Number(secondsArg ?? 3600);
const report = JSON.parse(fs.readFileSync(reportPath, "utf8"));
const backend = report.environment.backend;
const binary = ensureLlamaBench(llamaBenchVariantOf(backend === "cpu" ? false : backend), {onProgress: (m) => console.error(`[llama-bench] ${m}`)});
const outDir = path.join(path.dirname(reportPath), "llama-bench");
fs.mkdirSync(outDir, {recursive: true});
const wanted = new Set(["layers", "fit", "layers-tuned", "fit-tuned"]);
const rows = [];
let failures = 0;
outer: for (const run of report.runs) {
    if (run.status !== "ok" || !wanted.has(run.variant.label)) continue;
    for (const load of run.loads) {
        const name = `${run.budget.replace("%", "pct")}-${run.variant.label}-ub${load.plan.batchSize}`;
        const file = path.join(outDir, `${name}.json`);
        if (!fs.existsSync(file)) {
            const seconds = Math.floor((deadline - Date.now()) / 1000);
            if (seconds < 20) { console.error(`[llama-bench] out of time before ${name}`); break outer; }
            console.error(`[llama-bench] ${name}: ${binary.program} ${load.reproduce.benchArgv.join(" ")}`);
            try {
                fs.writeFileSync(file, JSON.stringify(await runLlamaBench(binary.program, load.reproduce.benchArgv, {timeoutMs: seconds * 1000}), null, 2));
            } catch (error) {
                failures++;
                fs.writeFileSync(path.join(outDir, `${name}.log`), `${error instanceof Error ? error.message : String(error)}\n`);
                console.error(`[llama-bench] ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
                continue;
            }
        }
        for (const cell of JSON.parse(fs.readFileSync(file, "utf8"))) {
            const ours = run.points.find((p) => p.kind === cell.kind && p.tokens === cell.tokens)?.tokensPerSec ?? null;
            rows.push({budget: run.budget, variant: run.variant.label, ubatch: load.plan.batchSize, test: `${cell.kind === "ttft" ? "pp" : "tg"}${cell.tokens}`,
                llamaBenchTps: cell.tokensPerSec, llamaBenchStdev: cell.stdevTokensPerSec, tensorwiseTps: ours, ratio: ours == null ? null : ours / cell.tokensPerSec});
        }
    }
}
fs.writeFileSync(path.join(outDir, "comparison.json"), JSON.stringify({llamaCppCommit: binary.commit, rows}, null, 2));
const csv = ["budget,variant,ubatch,test,llama_bench_tps,llama_bench_stdev,tensorwise_tps,ratio",
    ...rows.map((r) => [r.budget, r.variant, r.ubatch, r.test, r.llamaBenchTps, r.llamaBenchStdev, r.tensorwiseTps ?? "", r.ratio ?? ""].join(","))];
fs.writeFileSync(path.join(outDir, "comparison.csv"), csv.join("\n") + "\n");
console.error(`[llama-bench] ${rows.length} comparisons written to ${outDir}/comparison.csv; ${failures} failures`);
process.exit(failures > 0 ? 1 : 0);
