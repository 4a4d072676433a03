#!/usr/bin/env node
// The architecture corpus (not part of `npm test`; its CI subset is electron/engine/testing/archCorpus/
// archCorpus.vulkan.test.ts): llama.cpp's own tests/test-llama-archs.cpp writes a small random-weight model of every
// architecture the bundled llama.cpp supports, llama-quantize makes Q8_0, Q4_K_M (where a weight row is a multiple of
// 256) and MXFP4 (gpt-oss) variants, and each model goes through what a user runs, as the built CLI: `inspect`,
// `plan` (optimal, 50% budget), `chat` greedy on the CPU build, and `chat` on a forced mixed placement over the GPU
// build's device (first half of the layers: FFN on the device, the rest on the CPU; second half the other way round).
// Each chat's token ids are compared with stock llama.cpp's greedy tokens for the same prompt on the flags tensorwise
// prints as its llama.cpp equivalent (native/tools/greedyTokens.cpp, built against the same prebuilt libraries), and
// so are the bytes of weights and KV cache llama.cpp put in each buffer type. One line per model, then a totals line;
// results.json and summary.txt in --out (the models stay in --models).
//
// The generator is test-llama-archs against the app's prebuilt (patched) libllama with the unpatched
// src/llama-model-loader.cpp linked in (seconds; see buildCorpusTools.ts). --check-generator also builds the fully
// stock generator (libllama CPU-only from the unpatched source: about 8 minutes on 2 cores the first time, cached) and
// compares every file byte for byte; --stock-generator generates with that one.
//
// Usage: node scripts/check/arch-corpus.mjs [--out bench/results/<date>-arch-corpus-<host>] [--models DIR]
//        [--only REGEX] [--quant q8_0,q4_k,mxfp4|none] [--tokens 8] [--seed 42] [--gpu vulkan|cuda|none]
//        [--profile-seconds 1] [--threads 1] [--check-generator] [--stock-generator]
//        node scripts/check/arch-corpus.mjs --summarize <results.json>   (rewrites summary.txt beside it, runs nothing)
// --only is llama.cpp's -a (an exact architecture name, or a regex searched in the names).
// Needs a built checkout (npm ci), g++, and for the GPU step the Vulkan build with a device (GGML_VK_VISIBLE_DEVICES=0
// for Mesa's llvmpipe; set here when unset). Run it nice'd on a shared machine.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {pathToFileURL} from "node:url";
import {parseScriptArgs} from "../scriptArgs.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const {values} = parseScriptArgs(import.meta.url, {
    out: {type: "string"}, models: {type: "string"}, only: {type: "string"}, quant: {type: "string", default: "q8_0,q4_k,mxfp4"},
    tokens: {type: "string", default: "8"}, seed: {type: "string", default: "42"}, gpu: {type: "string", default: "vulkan"},
    "profile-seconds": {type: "string", default: "1"}, threads: {type: "string", default: "1"},
    "check-generator": {type: "boolean", default: false}, "stock-generator": {type: "boolean", default: false},
    summarize: {type: "string"}
});
process.env.GGML_VK_VISIBLE_DEVICES ??= "0";

function integer(name, min = 1) {
    const value = Number(values[name]);
    if (!Number.isSafeInteger(value) || value < min) {
        console.error(`--${name} must be an integer ≥ ${min}, got ${values[name]}`);
        process.exit(2);
    }
    return value;
}
const tokens = integer("tokens"), seed = integer("seed", 0), profileSeconds = integer("profile-seconds"), threads = integer("threads");
const quants = values.quant === "none" ? [] : values.quant.split(",").map((q) => q.trim()).filter((q) => q !== "");
for (const quant of quants) {
    if (!["q8_0", "q4_k", "mxfp4"].includes(quant)) {
        console.error(`--quant takes q8_0, q4_k, mxfp4 or none, got ${quant}`);
        process.exit(2);
    }
}
if (!["vulkan", "cuda", "none"].includes(values.gpu)) {
    console.error(`--gpu takes vulkan, cuda or none, got ${values.gpu}`);
    process.exit(2);
}

const dist = (file) => path.join(root, "dist", "electron", "engine", "testing", "archCorpus", file);
for (const file of [path.join(root, "dist", "electron", "cli", "main.js"), dist("checkCorpusModel.js")]) {
    if (!fs.existsSync(file)) {
        console.error(`${path.relative(root, file)} is missing: run \`npm run build\` first`);
        process.exit(1);
    }
}
const load = async (file) => import(pathToFileURL(dist(file)).href);
const {ensureCorpusTool, ensureStockArchGenerator} = await load("buildCorpusTools.js");
const {generateArchModels, quantizeModel, fileSha256} = await load("generateArchModels.js");
const {checkCorpusModel} = await load("checkCorpusModel.js");
const {corpusTotals, formatModelLine, formatTotalsLine, quantsFor} = await load("corpusReport.js");

/** summary.txt from a results.json: a header, one line per model, the chats cut short, the totals line (printed too). */
function writeSummary(summary, dir) {
    const totals = corpusTotals(summary.results);
    const check = summary.generatorCheck;
    const header = [
        `arch-corpus ${summary.date} on ${summary.host}: llama.cpp ${summary.llamaCppCommit.slice(0, 12)}, ${summary.generator}, seed ${summary.seed}, ` +
            `${summary.files} generated files (${(summary.corpusBytes / 1048576).toFixed(0)} MiB), quantized: ${summary.quants.join(", ") || "none"}, ` +
            `${summary.tokens} greedy tokens, GPU build: ${summary.gpu}`,
        `not generated (test-llama-archs marks them unsupported): ${summary.unsupported.join(", ") || "none"}`,
        ...(summary.generatorError != null ? [`generator error: ${summary.generatorError}`] : []),
        ...(check != null ? [`generator check: ${check.identical} of ${Math.max(check.files, check.stockFiles)} files byte-identical to test-llama-archs built on stock libllama` +
            (check.differing.length > 0 ? ` (differing: ${check.differing.join(", ")})` : "")] : []),
        ""
    ];
    // with the generator's "test" vocabulary a chat template's stop text detokenizes to a few hex digits that replies hit
    const shortened = summary.results.filter((result) => ["cpu", "gpu"].some((name) => result.steps[name].status === "ok" && result.steps[name].reason != null));
    const footer = shortened.length > 0 ? [`${shortened.length} models' chats ended at their template's stop text before ${summary.tokens} tokens ` +
        `(compared with stock up to there): ${shortened.map((result) => result.file).join(", ")}`] : [];
    const totalsLine = formatTotalsLine(totals);
    console.log(totalsLine);
    fs.writeFileSync(path.join(dir, "summary.txt"), `${[...header, ...summary.results.map(formatModelLine), "", ...footer, totalsLine].join("\n")}\n`);
    return totals;
}

if (values.summarize != null) {
    const file = path.resolve(values.summarize);
    writeSummary(JSON.parse(fs.readFileSync(file, "utf8")), path.dirname(file));
    process.exit(0);
}

const date = new Date().toISOString().slice(0, 10);
const outDir = path.resolve(values.out ?? path.join(root, "bench", "results", `${date}-arch-corpus-${os.hostname().slice(0, 12)}`));
const modelsDir = path.resolve(values.models ?? path.join(os.tmpdir(), `tensorwise-arch-corpus-s${seed}`));
fs.mkdirSync(outDir, {recursive: true});
const progress = (message) => console.error(`[arch-corpus] ${message}`);

// the programs, cached under build/native/arch-corpus
const generator = values["stock-generator"] ? ensureStockArchGenerator({onProgress: progress}) : ensureCorpusTool("test-llama-archs", "cpu", {onProgress: progress});
const quantize = quants.length > 0 ? ensureCorpusTool("llama-quantize", "cpu", {onProgress: progress}) : null;
const stockCpu = ensureCorpusTool("greedy-tokens", "cpu", {onProgress: progress});
const stockGpu = values.gpu === "none" ? null : ensureCorpusTool("greedy-tokens", values.gpu, {onProgress: progress});
const gpuDevice = values.gpu === "vulkan" ? "Vulkan0" : "CUDA0";

const baseDir = path.join(modelsDir, "models");
fs.rmSync(baseDir, {recursive: true, force: true});
progress(`generating with ${generator.name} (seed ${seed}${values.only != null ? `, -a ${values.only}` : ""}) into ${baseDir}`);
const corpus = generateArchModels(generator.program, baseDir, {seed, archRegex: values.only});
if (corpus.error != null) progress(corpus.error);
const corpusBytes = corpus.models.reduce((sum, model) => sum + fs.statSync(model.path).size, 0);
progress(`${corpus.models.length} files, ${(corpusBytes / 1048576).toFixed(0)} MiB; unsupported by the generator: ${corpus.unsupported.join(", ") || "none"}`);

let generatorCheck = null;
if (values["check-generator"] && !values["stock-generator"]) {
    const stockGenerator = ensureStockArchGenerator({onProgress: progress});
    const stockDir = path.join(modelsDir, "stock");
    fs.rmSync(stockDir, {recursive: true, force: true});
    const stock = generateArchModels(stockGenerator.program, stockDir, {seed, archRegex: values.only});
    const ours = new Map(corpus.models.map((model) => [path.basename(model.path), model.path]));
    const theirs = new Map(stock.models.map((model) => [path.basename(model.path), model.path]));
    const names = [...new Set([...ours.keys(), ...theirs.keys()])].sort();
    const differing = names.filter((name) => !ours.has(name) || !theirs.has(name) || fileSha256(ours.get(name)) !== fileSha256(theirs.get(name)));
    generatorCheck = {stockFiles: stock.models.length, files: corpus.models.length, identical: names.length - differing.length, differing, stockError: stock.error};
    progress(`generator check: ${generatorCheck.identical} of ${names.length} files byte-identical to the stock build's${differing.length > 0 ? `; differing: ${differing.join(", ")}` : ""}`);
}

const options = {
    cli: path.join(root, "bin", "tensorwise.mjs"), stock: {cpu: stockCpu.program, gpu: stockGpu?.program ?? null},
    gpu: values.gpu === "none" ? {skip: "--gpu none"} : {kind: values.gpu, device: gpuDevice},
    workDir: path.join(modelsDir, "placements"), maxTokens: tokens, threads, profileSeconds
};
const results = [];
const started = Date.now();
const writeResults = (finished) => {
    const summary = {
        date, host: os.hostname(), finished, llamaCppCommit: stockCpu.commit, generator: generator.name, seed, tokens, quants,
        gpu: values.gpu, files: corpus.models.length, corpusBytes, unsupported: corpus.unsupported, generatorError: corpus.error,
        generatorCheck, wallSeconds: Math.round((Date.now() - started) / 1000), totals: corpusTotals(results), results
    };
    fs.writeFileSync(path.join(outDir, "results.json"), `${JSON.stringify(summary, null, 2)}\n`);
};
const record = (result) => {
    results.push(result);
    console.log(formatModelLine(result));
    writeResults(false);
};

for (const model of corpus.models) {
    const {result, tensors} = await checkCorpusModel(model.path, {arch: model.arch, variant: "as written"}, options);
    record(result);
    for (const quant of quants.filter((q) => quantsFor(model.arch, tensors ?? []).includes(q))) {
        const quantized = quantizeModel(quantize.program, model.path, quant, path.join(modelsDir, "quantized"));
        if (!quantized.ok) {
            const fail = {status: "fail", reason: quantized.error, ms: 0};
            record({arch: model.arch, file: `${path.basename(model.path, ".gguf")}-${quant}.gguf`, variant: quant, bytes: 0,
                steps: {inspect: fail, plan: fail, cpu: fail, gpu: fail}, notes: ["llama-quantize failed, nothing ran"]});
            continue;
        }
        record((await checkCorpusModel(quantized.path, {arch: model.arch, variant: quant}, options)).result);
    }
}

writeResults(true);
const totals = writeSummary(JSON.parse(fs.readFileSync(path.join(outDir, "results.json"), "utf8")), outDir);
progress(`wrote ${path.relative(root, outDir)}/summary.txt and results.json`);
process.exitCode = totals.failing.length > 0 || corpus.error != null ? 1 : 0;
