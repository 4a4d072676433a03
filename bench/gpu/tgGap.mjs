#!/usr/bin/env node
// Why our decode ran at 0.59–0.71× of stock llama-bench's on the H200 (bench/results/2026-11-28-h200/README.md): the
// same loads, taking turns, in a process that has profiled nothing. For each load (-ngl 0 without and with op offload,
// -ngl 3) and thread count (all cores, one less): our TPOT of 32 greedy tokens after a 1-token prompt (the bench's TPOT
// path) and llama-bench's tg32 with the same flags, 3 repetitions each, rounds alternating. Then the same loads once
// more after this process ran a profile with the switch calibration (what `tensorwise bench` does before it measures).
// Usage: node bench/gpu/tgGap.mjs <model.gguf> <out dir> [seconds left] [gpu: cuda|vulkan|cpu]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {ensureLlamaBench, llamaBenchVariantOf} from "../../dist/electron/engine/bench/llamaBench/buildLlamaBench.js";
import {runLlamaBench} from "../../dist/electron/engine/bench/llamaBench/runLlamaBench.js";
import {inspectGguf} from "../../dist/electron/engine/gguf/inspectGguf.js";
import {loadedTensors} from "../../dist/electron/engine/gguf/loadedTensors.js";
import {validateGgufFile} from "../../dist/electron/engine/gguf/validateGguf.js";
import {getEngineLlama} from "../../dist/electron/engine/native/getEngineLlama.js";
import {switchProbe} from "../../dist/electron/engine/planner/switchProbe.js";
import {distinctOperators} from "../../dist/electron/engine/profiler/operatorShapes.js";
import {profileMachine} from "../../dist/electron/engine/profiler/profileMachine.js";
import {generateGreedy} from "../../dist/electron/engine/runtime/generateGreedy.js";
import {PlacedModel} from "../../dist/electron/engine/runtime/PlacedModel.js";

const [modelPath, outDir, secondsArg, gpuArg] = process.argv.slice(2);
if (modelPath == null || outDir == null) {
    console.error("usage: tgGap.mjs <model.gguf> <out dir> [seconds left] [gpu]");
    process.exit(2);
}
const deadline = Date.now() + 1000 * Number(secondsArg ?? 600);
const gpu = gpuArg ?? "cuda";
fs.mkdirSync(outDir, {recursive: true});
const cores = os.availableParallelism();
const engine = await getEngineLlama({gpu, maxThreads: cores});
const binary = ensureLlamaBench(llamaBenchVariantOf(gpu === "cpu" ? false : gpu), {onProgress: (m) => console.error(`[tg-gap] ${m}`)});
const loads = [
    {name: "-ngl 0 --no-op-offload", gpuLayers: 0, opOffload: false, argv: ["-ngl", "0", "-nopo", "1"]},
    {name: "-ngl 0", gpuLayers: 0, opOffload: true, argv: ["-ngl", "0"]},
    {name: "-ngl 3", gpuLayers: 3, opOffload: true, argv: ["-ngl", "3"]}
];
const rows = [];
const left = () => Math.floor((deadline - Date.now()) / 1000);

async function ours(load, threads) {
    const placed = await PlacedModel.load(engine, {modelPath, gpuLayers: load.gpuLayers, opOffload: load.opOffload, threads, contextSize: 512, batchSize: 512,
        useMmap: true, flashAttention: false});
    try {
        const prompt = placed.model.tokenize("hi", false).slice(0, 1);
        await generateGreedy(placed, prompt, {maxTokens: 8, stopAtEog: false});
        const samples = [];
        for (let i = 0; i < 3; i++) samples.push((await generateGreedy(placed, prompt, {maxTokens: 32, stopAtEog: false})).timing.tpotMs);
        return samples;
    } finally {
        await placed.dispose();
    }
}

async function stock(load, threads) {
    const argv = ["-m", modelPath, ...load.argv, "-t", String(threads), "-fa", "0", "-p", "0", "-n", "32", "-r", "3", "-o", "json"];
    const cells = await runLlamaBench(binary.program, argv, {timeoutMs: Math.max(10, left() - 5) * 1000});
    return cells.find((c) => c.kind === "tpot")?.samplesMs ?? [];
}

async function round(phase) {
    for (const threads of [cores, cores - 1]) {
        for (const load of loads) {
            if (left() < 30) { console.error(`[tg-gap] out of time before ${phase} ${load.name} -t ${threads}`); return; }
            const oursMs = await ours(load, threads);
            const stockMs = await stock(load, threads);
            const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? null;
            const row = {phase, load: load.name, threads, oursMs, stockMs, ratio: median(stockMs) == null ? null : median(stockMs) / median(oursMs)};
            rows.push(row);
            console.error(`[tg-gap] ${phase} ${load.name} -t ${threads}: ours ${oursMs.map((x) => x.toFixed(1)).join("/")} ms, llama-bench ${stockMs.map((x) => x.toFixed(1)).join("/")} ms`);
            fs.writeFileSync(path.join(outDir, "tg-gap.json"), JSON.stringify({model: modelPath, cores, rows}, null, 2));
        }
    }
}

try {
    await round("fresh process");
    if (left() > 90) {
        const model = inspectGguf(await validateGgufFile(modelPath));
        console.error("[tg-gap] profiling in this process (as tensorwise bench does), then again");
        await profileMachine(engine, distinctOperators(loadedTensors(model)), {threads: cores, timeLimitMs: 15_000, switchProbe});
        await round("after an in-process profile");
    }
} finally {
    await engine.llama.dispose();
}
const table = ["phase\tload\tthreads\tours ms (3)\tllama-bench ms\tours speed ÷ llama-bench's",
    ...rows.map((r) => [r.phase, r.load, r.threads, r.oursMs.map((x) => x.toFixed(1)).join("/"), r.stockMs.map((x) => x.toFixed(1)).join("/"),
        r.ratio?.toFixed(2) ?? ""].join("\t"))];
fs.writeFileSync(path.join(outDir, "tg-gap.tsv"), table.join("\n") + "\n");
console.error(table.join("\n"));
