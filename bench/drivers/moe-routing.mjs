#!/usr/bin/env node
// Measurement (not a test): how far the real routing of a synthetic MoE model is from the uniform routing the cost
// model assumes (electron/engine/planner/expectedDistinctExperts.ts: a micro-batch of b tokens touches on average
// N·(1 − (1 − k/N)^b) distinct experts). Builds native/tools/moeRouting.cpp against the app's CPU libraries (cached),
// which reads the router's choices ("ffn_moe_topk-<layer>") through llama.cpp's eval callback while it decodes an
// English prompt in micro-batches of each size, and writes the measured vs uniform distinct experts per micro-batch.
//
// Usage: node bench/drivers/moe-routing.mjs [--out bench/results/<date>-moe-routing-<host>] [--ubatches 8,32,128,512]
//        [--models mixtral-mini,qwen3moe-small] [--prompt-chars 4000]
// Needs a built checkout (npm ci) and g++.
import {spawnSync} from "node:child_process";
import {createHash} from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {parseScriptArgs} from "../../scripts/scriptArgs.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const {values} = parseScriptArgs(import.meta.url, {
    out: {type: "string"}, ubatches: {type: "string", default: "8,32,128,512"},
    models: {type: "string", default: "mixtral-mini,qwen3moe-small"}, "prompt-chars": {type: "string", default: "4000"}
});
const date = new Date().toISOString().slice(0, 10);
const outDir = path.resolve(values.out ?? path.join(root, "bench", "results", `${date}-moe-routing-${os.hostname().slice(0, 12)}`));

/** Synthetic MoE models written by the project's own GGUF writer (`tensorwise make-model`), random weights. */
const MODELS = {
    "mixtral-mini": {label: "mixtral-mini preset (llama arch, 8 experts, 2 used)", args: ["--preset", "mixtral-mini", "--seed", "5"]},
    "qwen3moe-small": {label: "qwen3moe, 4 layers, 128 experts, 8 used (Qwen3-30B-A3B's expert counts, small matrices)",
        args: ["--arch", "qwen3moe", "--layers", "4", "--embd", "256", "--heads", "4", "--kv-heads", "2", "--head-dim", "64",
            "--experts", "128", "--experts-used", "8", "--expert-ff", "64", "--vocab", "2000", "--seed", "5"]}
};

const libDir = path.join(root, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64");
const sourceDir = path.join(root, "build", "native", "llama.cpp");
const toolSource = path.join(root, "native", "tools", "moeRouting.cpp");

function buildTool() {
    const hash = createHash("sha256").update(fs.readFileSync(toolSource)).update(fs.readFileSync(path.join(libDir, "libllama.v0.5.0.so"))).digest("hex").slice(0, 12);
    const program = path.join(root, "build", "native", "moe-routing", hash, "moe-routing");
    if (fs.existsSync(program)) return program;
    fs.mkdirSync(path.dirname(program), {recursive: true});
    process.stderr.write("building native/tools/moeRouting.cpp …\n");
    const built = spawnSync("g++", ["-O2", "-std=c++17", `-I${sourceDir}/include`, `-I${sourceDir}/ggml/include`, toolSource,
        path.join(libDir, "libllama.v0.5.0.so"), path.join(libDir, "libggml.v0.5.0.so"), path.join(libDir, "libggml-base.so"),
        `-Wl,-rpath,${libDir}`, "-o", program], {encoding: "utf8"});
    if (built.status !== 0) throw new Error(`g++ failed:\n${built.stderr}`);
    return program;
}

const tensorwise = (args) => spawnSync(process.execPath, [path.join(root, "bin", "tensorwise.mjs"), ...args], {encoding: "utf8", maxBuffer: 64 << 20});
const uniform = (n, k, b) => k >= n ? n : n * (1 - Math.pow(1 - k / n, b));
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;

const program = buildTool();
fs.mkdirSync(outDir, {recursive: true});
// English prose that does not repeat itself (a repeated sentence would route its repeats alike): this repository's
// docs/app.md (English prose, formerly the README) without markup, its first --prompt-chars characters (≈ 0.6 tokens per character on these models)
const prose = fs.readFileSync(path.join(root, "docs", "app.md"), "utf8").replace(/[`|#*<>[\]()_-]+/g, " ").replace(/\s+/g, " ");
const promptFile = path.join(outDir, "prompt.txt");
fs.writeFileSync(promptFile, prose.slice(0, Number(values["prompt-chars"])));

const rows = [];
for (const name of values.models.split(",")) {
    const model = MODELS[name];
    if (model == null) throw new Error(`unknown model ${name} (use ${Object.keys(MODELS).join(", ")})`);
    const file = path.join(os.tmpdir(), `tensorwise-routing-${name}.gguf`);
    if (!fs.existsSync(file)) {
        const made = tensorwise(["make-model", file, ...model.args]);
        if (made.status !== 0) throw new Error(`make-model failed: ${made.stderr}`);
    }
    for (const ubatch of values.ubatches.split(",").map(Number)) {
        const run = spawnSync(program, [file, String(ubatch), promptFile, libDir, "1"], {encoding: "utf8", maxBuffer: 64 << 20});
        if (run.status !== 0) throw new Error(`moe-routing failed on ${name} at ubatch ${ubatch}: ${run.stderr}`);
        const lines = run.stdout.trim().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
        // full micro-batches only: the prompt's last one is shorter, and the last layer routes only the rows that need
        // logits (llama.cpp drops the others before it, inp_out_ids)
        const full = lines.filter((l) => l.tokens === ubatch);
        if (full.length === 0) continue;
        const {experts, used} = full[0];
        const measured = mean(full.map((l) => l.distinct));
        const expected = uniform(experts, used, ubatch);
        rows.push({model: name, experts, used, ubatch, samples: full.length, measuredDistinct: measured, uniformDistinct: expected,
            ratio: measured / expected, minDistinct: Math.min(...full.map((l) => l.distinct)), maxDistinct: Math.max(...full.map((l) => l.distinct))});
    }
}

const header = "| model | experts (used) | micro-batch | samples (layer × micro-batch) | measured distinct (min–max) | uniform N·(1−(1−k/N)^b) | measured ÷ uniform |";
const table = [header, "|---|---|---|---|---|---|---|", ...rows.map((r) =>
    `| ${r.model} | ${r.experts} (${r.used}) | ${r.ubatch} | ${r.samples} | ${r.measuredDistinct.toFixed(2)} (${r.minDistinct}–${r.maxDistinct}) | ${r.uniformDistinct.toFixed(2)} | ${r.ratio.toFixed(3)} |`)].join("\n");
fs.writeFileSync(path.join(outDir, "routing.json"), `${JSON.stringify({date, host: os.hostname(), models: Object.fromEntries(values.models.split(",").map((n) => [n, MODELS[n].label])), rows}, null, 2)}\n`);
fs.writeFileSync(path.join(outDir, "routing.md"), `${table}\n`);
fs.rmSync(promptFile);
console.log(table);
console.log(`\nwritten to ${outDir}`);
