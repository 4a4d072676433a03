#!/usr/bin/env node
// Benchmark (not a test): tensorwise vs stock llama-bench tokens/s on the same placement and flags, for prompt
// processing (pp, vs TTFT) and generation (tg, vs TPOT). Each repeat is one `tensorwise bench --llama-bench` run, which
// measures ours and then stock llama-bench on the same load, so the two sides alternate in time; the table shows the
// median ratio over the repeats (compare ratios, never single absolute figures, on a shared machine), and the
// best-of ratio: the fastest sample of ours over the fastest of llama-bench's across every repeat. On a shared VM noise
// only ever slows a run down, so the best samples are the two sides' least disturbed runs.
//
// Usage: node bench/drivers/bench-parity.mjs [--out bench/results/<date>-parity-<host>] [--repeats 5] [--samples 3]
//        [--only small,large] [--configs cpu-t1,cpu-t2,vulkan-mixed]
// --samples: timed samples per side and cell in one repeat (our bench --repeats, llama-bench -r).
// Needs a built checkout (npm ci; npx tsc -p tsconfig.json) and a C++ compiler (llama-bench is built once, cached).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {parseScriptArgs} from "../../scripts/scriptArgs.mjs";
import {median, MODELS, modelFile, root, tensorwise} from "./benchModels.mjs";

const {values} = parseScriptArgs(import.meta.url, {
    out: {type: "string"}, repeats: {type: "string", default: "5"}, only: {type: "string", default: "small,large"},
    configs: {type: "string", default: "cpu-t1,cpu-t2,vulkan-mixed"}, prompt: {type: "string", default: "64"}, gen: {type: "string", default: "32"},
    samples: {type: "string", default: "3"}
});
const date = new Date().toISOString().slice(0, 10);
const outDir = path.resolve(values.out ?? path.join(root, "bench", "results", `${date}-parity-${os.hostname().slice(0, 12)}`));
fs.mkdirSync(outDir, {recursive: true});

/** Placements: CPU only with 1 and 2 threads, and half the weights on the Vulkan device (Mesa llvmpipe). */
const CONFIGS = {
    "cpu-t1": {label: "CPU, 1 thread", args: ["--gpu", "cpu", "--strategies", "cpu", "--budgets", "50%", "--threads", "1"], env: {}},
    "cpu-t2": {label: "CPU, 2 threads", args: ["--gpu", "cpu", "--strategies", "cpu", "--budgets", "50%", "--threads", "2"], env: {}},
    "vulkan-mixed": {label: "Vulkan llvmpipe, layers at 50%", args: ["--gpu", "vulkan", "--strategies", "layers", "--budgets", "50%", "--threads", "1"],
        env: {GGML_VK_VISIBLE_DEVICES: "0"}}
};

const rows = [];
for (const modelName of values.only.split(",")) {
    const file = modelFile(modelName);
    const model = MODELS[modelName];
    const samples = Object.fromEntries(values.configs.split(",").map((c) => [c, {pp: [], tg: [], threads: null, errors: [],
        best: {ours: {pp: Infinity, tg: Infinity}, stock: {pp: Infinity, tg: Infinity}}}]));
    for (let repeat = 0; repeat < Number(values.repeats); repeat++) {
        for (const configName of values.configs.split(",")) {
            const config = CONFIGS[configName];
            if (config == null) throw new Error(`unknown config ${configName} (use ${Object.keys(CONFIGS).join(", ")})`);
            const runDir = path.join(outDir, `${modelName}-${configName}-r${repeat + 1}`);
            console.error(`[parity] ${model.label} · ${config.label} · repeat ${repeat + 1}/${values.repeats}`);
            const result = tensorwise(["bench", file, ...config.args, "--prompts", values.prompt, "--gens", values.gen, "--repeats", values.samples,
                "--warmup", "4", "--llama-bench", "--json", "--out", runDir], config.env);
            const entry = samples[configName];
            if (result.status !== 0) { entry.errors.push((result.stderr || result.stdout).trim().split("\n").at(-1)); continue; }
            const summary = JSON.parse(result.stdout);
            for (const cell of summary.vsStock) entry[cell.kind === "ttft" ? "pp" : "tg"].push(cell.ratio);
            const report = JSON.parse(fs.readFileSync(path.join(runDir, "report.json"), "utf8"));
            entry.threads = report.settings.threads;
            // fastest sample per side (ms: the whole prompt for pp, per token for tg)
            for (const run of report.runs) {
                for (const p of run.points) entry.best.ours[p.kind === "ttft" ? "pp" : "tg"] = Math.min(entry.best.ours[p.kind === "ttft" ? "pp" : "tg"], ...p.samplesMs);
                for (const load of run.loads) for (const c of load.llamaBench?.cells ?? [])
                    entry.best.stock[c.kind === "ttft" ? "pp" : "tg"] = Math.min(entry.best.stock[c.kind === "ttft" ? "pp" : "tg"], ...(c.samplesMs ?? []));
            }
        }
    }
    for (const [configName, s] of Object.entries(samples))
        rows.push({model: model.label, config: CONFIGS[configName].label, threads: s.threads, repeats: s.pp.length,
            pp: s.pp.length > 0 ? median(s.pp) : null, tg: s.tg.length > 0 ? median(s.tg) : null,
            ppRange: s.pp.length > 0 ? [Math.min(...s.pp), Math.max(...s.pp)] : null, tgRange: s.tg.length > 0 ? [Math.min(...s.tg), Math.max(...s.tg)] : null,
            bestPp: Number.isFinite(s.best.ours.pp) && Number.isFinite(s.best.stock.pp) ? s.best.stock.pp / s.best.ours.pp : null,
            bestTg: Number.isFinite(s.best.ours.tg) && Number.isFinite(s.best.stock.tg) ? s.best.stock.tg / s.best.ours.tg : null,
            errors: s.errors});
}

const fmt = (v, range) => v == null ? "–" : `${v.toFixed(2)}× (${range[0].toFixed(2)}–${range[1].toFixed(2)})`;
const best = (v) => v == null ? "–" : `${v.toFixed(2)}×`;
const table = ["| model | placement | threads | pp" + values.prompt + " ratio (min–max) | pp best-of | tg" + values.gen + " ratio (min–max) | tg best-of | repeats × samples |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.model} | ${r.config} | ${r.threads ?? "–"} | ${fmt(r.pp, r.ppRange)} | ${best(r.bestPp)} | ${fmt(r.tg, r.tgRange)} | ${best(r.bestTg)} | ` +
        `${r.repeats} × ${values.samples}${r.errors.length > 0 ? ` (${r.errors.length} failed: ${r.errors[0]})` : ""} |`)];
const load = os.loadavg().map((v) => v.toFixed(1)).join(" / ");
fs.writeFileSync(path.join(outDir, "parity.json"), JSON.stringify({date, host: os.hostname(), cpus: os.cpus().length, cpu: os.cpus()[0]?.model,
    loadAverageAtEnd: os.loadavg(), prompt: Number(values.prompt), gen: Number(values.gen), samples: Number(values.samples), rows}, null, 2));
fs.writeFileSync(path.join(outDir, "README.md"), `# tensorwise vs stock llama-bench, ${date}\n\n` +
    `Ratio = tensorwise tokens/s ÷ llama-bench tokens/s on the same load and flags, each side at its median sample (median over repeats); ` +
    `best-of = the fastest sample of each side over all repeats. ` +
    `Machine: ${os.cpus()[0]?.model ?? "?"} × ${os.cpus().length}; load average at the end ${load}.\n\n${table.join("\n")}\n`);
console.log(table.join("\n"));
console.log(`wrote ${outDir}`);
