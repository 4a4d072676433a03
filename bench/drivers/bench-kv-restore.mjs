#!/usr/bin/env node
// Swap-vs-recompute benchmark for `tensorwise serve`'s conversation store (not part of `npm test`): for several prefix
// lengths, a conversation's KV cache is evicted from its sequence and restored both ways — swap (sequence state saved
// to a file, loaded back) and recompute (its tokens evaluated again) — through the server's own ConversationKvStore in
// benchmark mode (measureBoth). The cost model is calibrated once at start as the server does (calibrateKvCost), so its
// predictions for lengths beyond the calibration range are extrapolations. Prints predicted vs measured per trial and
// the median relative error |predicted − measured| ÷ measured of each predictor.
//
//   npm run build && node bench/drivers/bench-kv-restore.mjs [--model m.gguf] [--preset small] [--lengths 32,128,512,1024]
//       [--repeats 3] [--context 2048] [--threads 1] [--calibration-tokens 256] [--machine epyc2c]
//       [--out bench/results/<date>-kv-restore-<machine>]
//
// Without --model it writes a synthetic model (Q8_0, `small` preset by default) with the project's GGUF writer.
// Writes <out>/results.json (every trial and the calibration points) and <out>/README.md (the summary table).
import {existsSync, mkdirSync, rmSync, writeFileSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {parseScriptArgs} from "../../scripts/scriptArgs.mjs";
import {fileURLToPath} from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const {values} = parseScriptArgs(import.meta.url, {
    model: {type: "string"}, preset: {type: "string", default: "small"}, lengths: {type: "string", default: "32,128,512,1024"},
    repeats: {type: "string", default: "3"}, context: {type: "string", default: "2048"}, threads: {type: "string", default: "1"},
    "calibration-tokens": {type: "string", default: "256"}, machine: {type: "string", default: os.hostname()}, out: {type: "string"}
});
const lengths = values.lengths.split(",").map(Number);
const repeats = Number(values.repeats);
const contextSize = Number(values.context);
const threads = Number(values.threads);
const stamp = new Date().toISOString().slice(0, 10);
const outDir = path.resolve(values.out ?? path.join(root, "bench", "results", `${stamp}-kv-restore-${values.machine}`));
if (lengths.some((n) => !Number.isInteger(n) || n < 1 || n >= contextSize))
    throw new Error(`--lengths must be integers from 1 to ${contextSize - 1} (the context), comma-separated`);

const dist = (file) => path.join(root, "dist", "electron", file);
for (const file of ["engine/native/getEngineLlama.js", "engine/runtime/PlacedModel.js", "serve/kv/ConversationKvStore.js", "serve/kv/calibrateKvCost.js"])
    if (!existsSync(dist(file)))
        throw new Error(`dist/electron/${file} is missing: run \`npm run build\` first`);
const {getEngineLlama} = await import(dist("engine/native/getEngineLlama.js"));
const {PlacedModel} = await import(dist("engine/runtime/PlacedModel.js"));
const {ConversationKvStore} = await import(dist("serve/kv/ConversationKvStore.js"));
const {calibrateKvCost} = await import(dist("serve/kv/calibrateKvCost.js"));

let modelPath = values.model;
let madeModel = null;
if (modelPath == null) {
    const {makeSyntheticModel} = await import(dist("engine/writer/makeSyntheticModel.js"));
    modelPath = madeModel = path.join(os.tmpdir(), `tensorwise-bench-kv-${process.pid}.gguf`);
    await makeSyntheticModel(modelPath, {preset: values.preset, type: "q8_0", name: `bench-kv-${values.preset}`});
}

const engine = await getEngineLlama({gpu: "cpu", maxThreads: threads});
const placed = await PlacedModel.load(engine, {modelPath, contextSize, threads, sequences: 1});
const slot = {index: 0, sequence: placed.context.getSequence()};
const trials = [];
let calibration;
try {
    const calibrated = await calibrateKvCost(slot.sequence, {maxTokens: Number(values["calibration-tokens"])});
    calibration = calibrated;
    console.log(`cost model (${calibrated.model.source}): ${JSON.stringify(calibrated.model)}`);
    const store = await ConversationKvStore.create({costModel: calibrated.model, measureBoth: true});
    const words = "a conversation about rivers bridges lanterns and the winter market of an old town".split(" ");
    try {
        // lengths interleaved within each repeat, so drift on a shared machine hits every length alike
        for (let repeat = 0; repeat < repeats; repeat++) {
            for (const tokensWanted of lengths) {
                const key = `conversation-${tokensWanted}-${repeat}`;
                const text = Array.from({length: tokensWanted}, (_unused, i) => words[(i * 7 + repeat) % words.length]).join(" ");
                const tokens = placed.model.tokenize(text).slice(0, tokensWanted);
                await slot.sequence.clearHistory();
                await slot.sequence.evaluateWithoutGeneratingNewTokens(tokens);
                store.finished(slot, key);
                await store.prepare(slot, null); // another request takes the sequence: the conversation leaves it
                const {decision} = await store.prepare(slot, key); // it returns: restored both ways (benchmark mode)
                if (decision == null || slot.sequence.contextTokens.length !== tokens.length)
                    throw new Error(`conversation ${key} was not restored`);
                trials.push({repeat, ...decision});
                const {predicted, measured} = decision;
                console.log(`${String(decision.tokens).padStart(5)} tokens: swap predicted ${predicted.swapMs.toFixed(2)} / measured ` +
                    `${measured.swapMs.toFixed(2)} ms (out ${measured.swapOutMs.toFixed(2)}, in ${measured.swapInMs.toFixed(2)}), recompute predicted ` +
                    `${predicted.recomputeMs.toFixed(1)} / measured ${measured.recomputeMs.toFixed(1)} ms → ${predicted.path}`);
            }
        }
    } finally {
        await store.close();
    }
} finally {
    slot.sequence.dispose();
    await placed.dispose();
    await engine.llama.dispose();
    if (madeModel != null)
        rmSync(madeModel, {force: true});
}

const median = (list) => {
    const sorted = [...list].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const error = (predicted, measured) => Math.abs(predicted - measured) / measured;
const rows = lengths.map((length) => {
    const of = trials.filter((trial) => trial.conversation.startsWith(`conversation-${length}-`));
    return {
        tokens: of[0]?.tokens,
        stateBytes: of[0]?.measured.stateBytes,
        swapPredictedMs: median(of.map((t) => t.predicted.swapMs)),
        swapMeasuredMs: median(of.map((t) => t.measured.swapMs)),
        swapError: median(of.map((t) => error(t.predicted.swapMs, t.measured.swapMs))),
        recomputePredictedMs: median(of.map((t) => t.predicted.recomputeMs)),
        recomputeMeasuredMs: median(of.map((t) => t.measured.recomputeMs)),
        recomputeError: median(of.map((t) => error(t.predicted.recomputeMs, t.measured.recomputeMs))),
        chosen: of[0]?.predicted.path,
        measuredCheaper: median(of.map((t) => t.measured.swapMs)) <= median(of.map((t) => t.measured.recomputeMs)) ? "swap" : "recompute"
    };
});
const summary = {
    medianSwapError: median(trials.map((t) => error(t.predicted.swapMs, t.measured.swapMs))),
    medianSwapOutError: median(trials.map((t) => error(t.predicted.swapOutMs, t.measured.swapOutMs))),
    medianSwapInError: median(trials.map((t) => error(t.predicted.swapInMs, t.measured.swapInMs))),
    medianRecomputeError: median(trials.map((t) => error(t.predicted.recomputeMs, t.measured.recomputeMs))),
    decisionsRight: trials.filter((t) => t.predicted.path === (t.measured.swapMs <= t.measured.recomputeMs ? "swap" : "recompute")).length,
    decisions: trials.length
};
const pct = (x) => `${(x * 100).toFixed(1)}%`;
console.log(`median error: swap ${pct(summary.medianSwapError)} (out ${pct(summary.medianSwapOutError)}, in ${pct(summary.medianSwapInError)}), ` +
    `recompute ${pct(summary.medianRecomputeError)}; the cheaper path predicted in ${summary.decisionsRight}/${summary.decisions} trials`);

mkdirSync(outDir, {recursive: true});
const setup = {model: values.model ?? `synthetic ${values.preset} Q8_0`, contextSize, threads, repeats, lengths, machine: values.machine,
    cpus: os.cpus().length, loadAverage: os.loadavg(), date: new Date().toISOString()};
writeFileSync(path.join(outDir, "results.json"), JSON.stringify({setup, calibration, rows, summary, trials}, null, 2) + "\n");
const table = [
    "| prefix tokens | state | swap predicted | swap measured | error | recompute predicted | recompute measured | error | chosen | measured cheaper |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ...rows.map((r) => `| ${r.tokens} | ${(r.stateBytes / 1024).toFixed(0)} KiB | ${r.swapPredictedMs.toFixed(2)} ms | ${r.swapMeasuredMs.toFixed(2)} ms | ` +
        `${pct(r.swapError)} | ${r.recomputePredictedMs.toFixed(1)} ms | ${r.recomputeMeasuredMs.toFixed(1)} ms | ${pct(r.recomputeError)} | ${r.chosen} | ${r.measuredCheaper} |`)
].join("\n");
writeFileSync(path.join(outDir, "README.md"), `# KV restore: swap vs recompute (${setup.model}, ${values.machine})

\`node bench/drivers/bench-kv-restore.mjs ${process.argv.slice(2).join(" ")}\` on ${setup.date.slice(0, 10)}: context ${contextSize}, ${threads} thread(s),
${repeats} repeats per length (medians shown), cost model calibrated once at start at ${calibration.model.source.replace(/^measured at /, "")}.
Load average at the end: ${setup.loadAverage.map((x) => x.toFixed(1)).join(" / ")} on ${setup.cpus} CPUs (a shared machine).

${table}

Median relative error over all ${summary.decisions} trials: swap ${pct(summary.medianSwapError)} (save ${pct(summary.medianSwapOutError)},
load ${pct(summary.medianSwapInError)}), recompute ${pct(summary.medianRecomputeError)}; the measured cheaper path was the predicted one in
${summary.decisionsRight}/${summary.decisions} trials.
`);
console.log(`wrote ${path.relative(root, outDir)}/{results.json,README.md}`);
