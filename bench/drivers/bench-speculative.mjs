#!/usr/bin/env node
// Benchmark (not a test): speculative decoding on and off, measured against the plan's prediction from the α measured
// on the same replies. Two cases bracket what random-weight models can show (issue #39, item 4):
//  - n-gram lookup on a looping greedy reply (a random-weight model falls into loops): a real speed-up to predict;
//  - the model's own weights as its draft (α = 1, but each draft token costs a step of the model): the planner must
//    predict the slowdown and decline it under --spec auto.
// Each repeat runs the plain reply and the speculative one back to back (the sides alternate in time); the table shows
// medians over the repeats and the ratio of medians (compare ratios on a shared machine, never single figures). The
// prediction is `tensorwise plan --json`'s speculative decision after the replies measured α (it reads the same
// acceptance store the chats write).
//
// Usage: node bench/drivers/bench-speculative.mjs [--out bench/results/<date>-speculative-<host>] [--repeats 5]
//        [--model small|large] [--tokens 200] [--threads 2] [--n-max 4]
// Needs a built checkout (npm ci; npx tsc -p tsconfig.json).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {parseScriptArgs} from "../../scripts/scriptArgs.mjs";
import {median, MODELS, modelFile, root, tensorwise} from "./benchModels.mjs";

const {values} = parseScriptArgs(import.meta.url, {
    out: {type: "string"}, repeats: {type: "string", default: "5"}, model: {type: "string", default: "large"}, "draft-model": {type: "string", default: "tiefree"},
    tokens: {type: "string", default: "200"}, cases: {type: "string", default: "ngram,own"}, threads: {type: "string", default: "2"}, "n-max": {type: "string", default: "4"}
});
const date = new Date().toISOString().slice(0, 10);
const outDir = path.resolve(values.out ?? path.join(root, "bench", "results", `${date}-speculative-${os.hostname().slice(0, 12)}`));
fs.mkdirSync(outDir, {recursive: true});
/** A fresh cache folder: the α this run measures, and its machine profile, are its own. */
const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-spec-bench-"));
const env = {XDG_CACHE_HOME: cacheDir};
const PROMPT = "the the the the the the";
/** Short n-grams: a random-weight reply's loops are short (llama.cpp's default key is 12 tokens). */
const NGRAM = ["--spec-ngram-map-k-size-n", "3", "--spec-ngram-map-k-size-m", "8"];
const common = ["--gpu", "cpu", "--threads", values.threads, "--temperature", "0", "--max-tokens", values.tokens, "--json"];

const CASES = {
    ngram: {model: values.model, label: `n-gram lookup (k = ${values["n-max"]}, n = 3, m = 8)`, chat: ["--spec", "ngram", "--spec-draft-n-max", values["n-max"], ...NGRAM],
        plan: ["--spec", "ngram", "--spec-draft-n-max", values["n-max"], ...NGRAM]},
    // priced by name: the decision's price is the draft's own, and the planner's choice under auto is whether it wins
    own: {model: values["draft-model"], label: `the model's own weights as its draft (k = ${values["n-max"]})`,
        chat: ["--spec", "draft", "--model-draft", modelFile(values["draft-model"]), "--spec-draft-n-max", values["n-max"]],
        plan: ["--spec", "draft", "--model-draft", modelFile(values["draft-model"]), "--spec-draft-n-max", values["n-max"]]}
};
/** The planner's rule for `--spec auto` (electron/engine/speculative/chooseSpeculative.ts MIN_GAIN_SHARE). */
const MIN_GAIN_SHARE = 0.03;

function chat(file, args) {
    const run = tensorwise(["chat", file, "--prompt", PROMPT, ...common, ...args], env);
    if (run.status !== 0) throw new Error(`chat ${args.join(" ")}: ${(run.stderr || run.stdout).trim().split("\n").at(-1)}`);
    const reply = JSON.parse(run.stdout);
    return {tpotMs: reply.timing.tpotMs, generated: reply.timing.generatedTokens, speculative: reply.speculative?.reply ?? null, tokens: reply.tokens.reply};
}

const results = {};
for (const [name, spec] of Object.entries(CASES).filter(([name]) => values.cases.split(",").includes(name))) {
    const file = modelFile(spec.model);
    const samples = {plain: [], spec: [], stats: [], identical: true};
    // the first speculative reply measures α before any timing counts (and warms the file cache)
    chat(file, spec.chat);
    for (let repeat = 0; repeat < Number(values.repeats); repeat++) {
        console.error(`[speculative] ${spec.label} · repeat ${repeat + 1}/${values.repeats}`);
        const plain = chat(file, ["--spec", "off"]);
        const withSpec = chat(file, spec.chat);
        samples.plain.push(plain.tpotMs);
        samples.spec.push(withSpec.tpotMs);
        samples.stats.push(withSpec.speculative);
        samples.identical &&= JSON.stringify(plain.tokens) === JSON.stringify(withSpec.tokens);
    }
    const planned = tensorwise(["plan", file, "--gpu", "cpu", "--threads", values.threads, ...spec.plan, "--json"], env);
    if (planned.status !== 0) throw new Error(`plan: ${(planned.stderr || planned.stdout).trim().split("\n").at(-1)}`);
    const decision = JSON.parse(planned.stdout).speculative;
    const priced = decision.chosen ?? decision.best;
    const drafted = samples.stats.reduce((s, x) => s + (x?.drafted ?? 0), 0), accepted = samples.stats.reduce((s, x) => s + (x?.accepted ?? 0), 0);
    results[name] = {
        label: spec.label, plainTpotMs: median(samples.plain), specTpotMs: median(samples.spec),
        measuredRatio: median(samples.spec) / median(samples.plain),
        predictedRatio: priced == null ? null : priced.tpotMs / priced.plainTpotMs,
        model: MODELS[spec.model].label,
        autoTakesIt: priced != null && priced.tpotMs < priced.plainTpotMs * (1 - MIN_GAIN_SHARE), sentence: decision.sentence, alpha: decision.acceptance,
        drafted, accepted, greedyIdentical: samples.identical, samples
    };
}

const r = (x) => x == null ? "—" : x.toFixed(2);
const lines = [
    `# Speculative decoding, measured against predicted (${date}, ${os.cpus()[0]?.model ?? "?"} × ${os.cpus().length}, ${values.threads} threads)`, "",
    `Greedy, ${values.tokens} tokens from "${PROMPT}"; ${values.repeats} repeats, medians.`, "",
    "| case | model | plain TPOT ms | with it ms | measured × | predicted × | --spec auto | drafts accepted | greedy tokens equal |",
    "|---|---|---|---|---|---|---|---|---|",
    ...Object.values(results).map((x) => `| ${x.label} | ${x.model} | ${r(x.plainTpotMs)} | ${r(x.specTpotMs)} | ${r(x.measuredRatio)} | ${r(x.predictedRatio)} | ` +
        `${x.autoTakesIt ? "chooses it" : "declines it"} | ${x.accepted} / ${x.drafted} | ${x.greedyIdentical ? "yes" : "NO"} |`),
    "", "× is time per token with speculation over without (below 1: faster).", "",
    ...Object.values(results).map((x) => `- ${x.label}: ${x.sentence}`), "",
    `Command: node bench/drivers/bench-speculative.mjs --cases ${values.cases} --model ${values.model} --draft-model ${values["draft-model"]} --repeats ${values.repeats} --tokens ${values.tokens} --threads ${values.threads} --n-max ${values["n-max"]}`
];
fs.writeFileSync(path.join(outDir, "results.json"), JSON.stringify({settings: values, results}, null, 2) + "\n");
fs.writeFileSync(path.join(outDir, "README.md"), lines.join("\n") + "\n");
console.log(lines.join("\n"));
fs.rmSync(cacheDir, {recursive: true, force: true});
