#!/usr/bin/env node
// Benchmark (not a test): how far the cost model's TTFT and TPOT predictions are from what the runtime measures. One
// `tensorwise bench` over the strategies cpu, layers and optimal on the Vulkan device (every cell predicted by the
// planner, then loaded and timed), and the median |predicted − measured| / measured per strategy and over all cells.
//
// Usage: node bench/drivers/bench-predictions.mjs [--only small,large] [--repeats 3] [--threads N] [--budgets 50%]
//        [--gpu vulkan] [--prompts 64] [--gens 32] [--profile-seconds 600] [--out bench/results/<date>-predictions-<host>]
// The profile gets 600 s by default, not the app's 20 s: on llvmpipe a complete profile of the 100 MiB model takes
// about a minute, and one cut short extrapolates the GPU's prefill costs (TTFT 100–200% off instead of 1–2% there).
// Needs a built checkout (npm ci; npx tsc -p tsconfig.json). On Mesa's llvmpipe set nothing: GGML_VK_VISIBLE_DEVICES=0
// is set here. Absolute errors on a busy machine say little: read them beside the load average printed with them.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {parseScriptArgs} from "../../scripts/scriptArgs.mjs";
import {MODELS, modelFile, root, tensorwise} from "./benchModels.mjs";

const {values} = parseScriptArgs(import.meta.url, {
    out: {type: "string"}, only: {type: "string", default: "small,large"}, repeats: {type: "string", default: "3"},
    threads: {type: "string"}, budgets: {type: "string", default: "50%"}, gpu: {type: "string", default: "vulkan"},
    strategies: {type: "string", default: "cpu,layers,optimal"}, prompts: {type: "string", default: "64"}, gens: {type: "string", default: "32"},
    "profile-seconds": {type: "string", default: "600"}
});
const {predictionErrors} = await import(path.join(root, "dist", "electron", "engine", "bench", "report", "summariseReport.js"));
const date = new Date().toISOString().slice(0, 10);
const outDir = path.resolve(values.out ?? path.join(root, "bench", "results", `${date}-predictions-${os.hostname().slice(0, 12)}`));
fs.mkdirSync(outDir, {recursive: true});

const pct = (v) => v == null ? "–" : `${v.toFixed(1)}%`;
const lines = ["| model | strategy | TTFT median abs. error | TPOT median abs. error | cells |", "|---|---|---|---|---|"];
const results = [];
for (const name of values.only.split(",")) {
    const file = modelFile(name);
    const runDir = path.join(outDir, name);
    const loadBefore = os.loadavg()[0];
    console.error(`[predictions] ${MODELS[name].label}: bench ${values.strategies} on ${values.gpu}, ${values.repeats} repeats`);
    const args = ["bench", file, "--gpu", values.gpu, "--strategies", values.strategies, "--budgets", values.budgets,
        "--prompts", values.prompts, "--gens", values.gens, "--repeats", values.repeats, "--json", "--out", runDir,
        "--profile-seconds", values["profile-seconds"],
        ...(values.threads != null ? ["--threads", values.threads] : [])];
    const run = tensorwise(args, values.gpu === "vulkan" ? {GGML_VK_VISIBLE_DEVICES: "0"} : {});
    if (run.status !== 0) {
        console.error(`bench failed: ${(run.stderr || run.stdout).trim().split("\n").slice(-3).join("\n")}`);
        process.exitCode = 1;
        continue;
    }
    const report = JSON.parse(fs.readFileSync(path.join(runDir, "report.json"), "utf8"));
    // the same statistic over every cell at once: one variant label for all runs
    const pooled = predictionErrors({...report, runs: report.runs.map((r) => ({...r, variant: {...r.variant, label: "all"}}))})[0] ?? null;
    const perStrategy = predictionErrors(report);
    for (const e of [...perStrategy, ...(pooled != null ? [{...pooled, variant: "**all**"}] : [])])
        lines.push(`| ${MODELS[name].label} | ${e.variant} | ${pct(e.ttft)} | ${pct(e.tpot)} | ${e.points} |`);
    const failed = report.runs.filter((r) => r.status !== "ok").map((r) => `${r.budget} ${r.variant.label}: ${r.error}`);
    // each plan picks its own thread count unless --threads is given: list what the loads used
    const threads = [...new Set(report.runs.flatMap((r) => r.loads.map((l) => l.plan.threads)))].join("/");
    results.push({model: name, threads, loadAverage: [loadBefore, os.loadavg()[0]], perStrategy, pooled, failed});
    for (const f of failed) console.error(`failed run: ${f}`);
}
const load = os.loadavg().map((v) => v.toFixed(1)).join(" / ");
const text = `${lines.join("\n")}\n\nMachine: ${os.cpus()[0]?.model ?? "?"} × ${os.cpus().length}; load average at the end ${load}; ` +
    `threads used ${results.map((r) => `${r.model} ${r.threads}`).join(", ")}.\n`;
fs.writeFileSync(path.join(outDir, "predictions.json"), JSON.stringify({date, host: os.hostname(), args: values, results}, null, 2));
fs.writeFileSync(path.join(outDir, "README.md"), `# Predicted vs measured TTFT and TPOT, ${date}\n\n` +
    `Median of |predicted − measured| / measured over the cells of \`tensorwise bench\` (strategies ${values.strategies}, ` +
    `budget ${values.budgets}, prompts ${values.prompts}, gens ${values.gens}, ${values.repeats} repeats, ${values.gpu}).\n\n${text}`);
console.log(text);
console.log(`wrote ${outDir}`);
