#!/usr/bin/env node
// Runs stock llama-bench on the same cells as the `layers` / `fit` rows (and their hand-tuned twins) of a
// `tensorwise bench` report, with the exact flags recorded in report.json (load.reproduce.benchArgv), and writes
// llama-bench's JSON next to the report plus a comparison table (llama-bench t/s vs tensorwise t/s per cell).
// Usage: node bench/gpu/runLlamaBench.mjs <report.json> <path/to/llama-bench> [seconds left]
// Cells already measured (their JSON exists) are skipped, so a second call continues.
import {spawnSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const [reportPath, llamaBench, secondsArg] = process.argv.slice(2);
if (reportPath == null || llamaBench == null) {
    console.error("usage: runLlamaBench.mjs <report.json> <llama-bench> [seconds left]");
    process.exit(2);
}
const deadline = Date.now() + 1000 * Number(secondsArg ?? 3600);
const report = JSON.parse(fs.readFileSync(reportPath, "utf8"));
const outDir = path.join(path.dirname(reportPath), "llama-bench");
fs.mkdirSync(outDir, {recursive: true});
const wanted = new Set(["layers", "fit", "layers-tuned", "fit-tuned"]);
const rows = [];
let failures = 0;
for (const run of report.runs) {
    if (run.status !== "ok" || !wanted.has(run.variant.label)) continue;
    for (const load of run.loads) {
        const name = `${run.budget.replace("%", "pct")}-${run.variant.label}-ub${load.plan.batchSize}`;
        const file = path.join(outDir, `${name}.json`);
        if (!fs.existsSync(file)) {
            const seconds = Math.floor((deadline - Date.now()) / 1000);
            if (seconds < 20) { console.error(`[llama-bench] out of time before ${name}`); break; }
            console.error(`[llama-bench] ${name}: ${llamaBench} ${load.reproduce.benchArgv.join(" ")}`);
            const result = spawnSync(llamaBench, load.reproduce.benchArgv, {encoding: "utf8", timeout: seconds * 1000, maxBuffer: 64 << 20});
            fs.writeFileSync(path.join(outDir, `${name}.log`), `${result.stderr ?? ""}\nexit ${result.status} ${result.signal ?? ""}\n`);
            if (result.status !== 0) { failures++; console.error(`[llama-bench] ${name} failed (exit ${result.status} ${result.signal ?? ""})`); continue; }
            fs.writeFileSync(file, result.stdout);
        }
        let entries;
        try { entries = JSON.parse(fs.readFileSync(file, "utf8")); } catch { failures++; continue; }
        for (const e of entries) {
            const kind = e.n_prompt > 0 ? "ttft" : "tpot";
            const tokens = kind === "ttft" ? e.n_prompt : e.n_gen;
            const point = run.points.find((p) => p.kind === kind && p.tokens === tokens);
            const ours = point == null ? null : point.tokensPerSec;
            rows.push({budget: run.budget, variant: run.variant.label, ubatch: load.plan.batchSize, test: `${kind === "ttft" ? "pp" : "tg"}${tokens}`,
                llamaBenchTps: e.avg_ts, llamaBenchStdev: e.stddev_ts, tensorwiseTps: ours, ratio: ours == null ? null : ours / e.avg_ts});
        }
    }
}
fs.writeFileSync(path.join(outDir, "comparison.json"), JSON.stringify(rows, null, 2));
const csv = ["budget,variant,ubatch,test,llama_bench_tps,llama_bench_stdev,tensorwise_tps,ratio",
    ...rows.map((r) => [r.budget, r.variant, r.ubatch, r.test, r.llamaBenchTps, r.llamaBenchStdev, r.tensorwiseTps ?? "", r.ratio ?? ""].join(","))];
fs.writeFileSync(path.join(outDir, "comparison.csv"), csv.join("\n") + "\n");
console.error(`[llama-bench] ${rows.length} comparisons written to ${outDir}/comparison.csv; ${failures} failures`);
process.exit(failures > 0 ? 1 : 0);
