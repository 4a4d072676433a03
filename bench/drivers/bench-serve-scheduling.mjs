#!/usr/bin/env node
// Scheduling benchmark for `tensorwise serve` (not part of `npm test`): replays one arrival trace (16 clients by
// default, a mix of short and long chat requests, seeded) against the server under each scheduling policy (fifo, fair)
// and reports, per policy: mean weighted turnaround (turnaround ÷ tokens, prompt + generated), p50/p95 TTFT and
// aggregate generated tokens/s. Policies alternate run by run (fifo, fair, fifo, fair…) so drift on a shared
// machine hits both alike.
//
// One ggml thread by default: ggml's CPU threads spin-wait, and on a machine shared with other work 2 threads on 2 cores
// ran a 4-client trial 30–70× slower than 1 (see README, "Serve scheduling").
//
//   npm run build && node bench/drivers/bench-serve-scheduling.mjs [--model m.gguf] [--parallel 2] [--clients 16] \
//       [--repeats 2] [--seed 1] [--threads 1] [--out bench/results/<date>-serve-scheduling-<machine>]
//
// Without --model it writes a synthetic `small` model (Q8_0) with the project's GGUF writer. Writes <out>/results.json
// (every request of every run) and <out>/README.md (the summary table).
import {spawn} from "node:child_process";
import {existsSync, mkdirSync, writeFileSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {parseScriptArgs} from "../../scripts/scriptArgs.mjs";
import {fileURLToPath} from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const {values} = parseScriptArgs(import.meta.url, {
    model: {type: "string"}, parallel: {type: "string", default: "2"}, clients: {type: "string", default: "16"},
    repeats: {type: "string", default: "2"}, seed: {type: "string", default: "1"}, threads: {type: "string", default: "1"},
    "mean-gap-ms": {type: "string", default: "150"}, out: {type: "string"}
});
const parallel = Number(values.parallel);
const clients = Number(values.clients);
const repeats = Number(values.repeats);
const meanGapMs = Number(values["mean-gap-ms"]);
const stamp = new Date().toISOString().slice(0, 10);
const outDir = path.resolve(values.out ?? path.join(root, "bench", "results", `${stamp}-serve-scheduling-${os.hostname()}`));
const POLICIES = ["fifo", "fair"];
/** Share of long requests in the trace, and the two request shapes (prompt words, generated tokens). */
const LONG_SHARE = 0.25;
const SHAPES = {short: {words: 12, maxTokens: 16}, long: {words: 120, maxTokens: 64}};

for (const file of ["dist/electron/cli/main.js", "dist/electron/engine/writer/makeSyntheticModel.js"])
    if (!existsSync(path.join(root, file)))
        throw new Error(`${file} is missing: run \`npm run build\` first`);

let modelPath = values.model;
if (modelPath == null) {
    const {makeSyntheticModel} = await import(path.join(root, "dist/electron/engine/writer/makeSyntheticModel.js"));
    modelPath = path.join(os.tmpdir(), `tensorwise-bench-serve-${process.pid}.gguf`);
    await makeSyntheticModel(modelPath, {preset: "small", type: "q8_0", name: "bench-serve"});
}

// --- the trace: seeded, the same for every policy ---------------------------------------------------------------
let state = Number(values.seed) >>> 0 || 1;
const random = () => ((state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32);
const WORDS = ["river", "stone", "light", "paper", "garden", "window", "signal", "orange", "winter", "engine", "forest", "silver"];
const trace = [];
let at = 0;
for (let client = 0; client < clients; client++) {
    const kind = random() < LONG_SHARE ? "long" : "short";
    const shape = SHAPES[kind];
    const text = Array.from({length: shape.words}, () => WORDS[Math.floor(random() * WORDS.length)]).join(" ");
    trace.push({client, kind, atMs: Math.round(at), maxTokens: shape.maxTokens, content: `Request ${client}: ${text}`});
    at += -Math.log(1 - random()) * meanGapMs;
}

function startServe(policy) {
    const child = spawn(process.execPath, [path.join(root, "bin/tensorwise.mjs"), "serve", modelPath, "--gpu", "cpu", "--port", "0",
        "--parallel", String(parallel), "--queue", "256", "--policy", policy, "--context", "2048", "--threads", values.threads],
    {stdio: ["ignore", "pipe", "pipe"]});
    let err = "";
    child.stderr.on("data", (chunk) => (err = (err + chunk.toString()).slice(-4000)));
    return new Promise((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk) => {
            out += chunk.toString();
            const url = /listening on (\S+)/.exec(out)?.[1];
            if (url != null)
                resolve({child, url});
        });
        child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
}

/** One streamed chat request; times from the client's side, plus the server's timings. */
async function request(url, entry, started) {
    const sent = performance.now();
    const response = await fetch(`${url}/chat/completions`, {
        method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({messages: [{role: "user", content: entry.content}], max_tokens: entry.maxTokens, temperature: 0, stream: true,
            stream_options: {include_usage: true}})
    });
    if (!response.ok)
        throw new Error(`request ${entry.client}: HTTP ${response.status} ${await response.text()}`);
    let firstToken = null;
    let usage = null;
    let timings = null;
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, {stream: true});
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
            const event = buffer.slice(0, end).replace(/^data: /, "");
            buffer = buffer.slice(end + 2);
            if (event === "[DONE]")
                continue;
            const data = JSON.parse(event);
            if (firstToken == null && (data.choices?.[0]?.delta?.content ?? "") !== "")
                firstToken = performance.now();
            usage = data.usage ?? usage;
            timings = data.timings ?? timings;
        }
    }
    const done = performance.now();
    const tokens = usage.prompt_tokens + usage.completion_tokens;
    return {
        client: entry.client, kind: entry.kind, sentMs: sent - started, ttftMs: (firstToken ?? done) - sent, turnaroundMs: done - sent,
        promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, weightedTurnaround: (done - sent) / tokens,
        server: timings
    };
}

async function replay(policy) {
    const server = await startServe(policy);
    try {
        await request(server.url, {client: -1, kind: "warmup", maxTokens: 4, content: "warm up"}, performance.now());
        const started = performance.now();
        const results = await Promise.all(trace.map((entry) => new Promise((resolve) => setTimeout(resolve, entry.atMs))
            .then(() => request(server.url, entry, started))));
        const ended = Math.max(...results.map((result) => result.sentMs + result.turnaroundMs));
        return {policy, wallMs: ended, results};
    } finally {
        const exited = new Promise((resolve) => server.child.once("exit", resolve));
        server.child.kill("SIGINT");
        await exited;
    }
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
const mean = (list) => list.reduce((sum, value) => sum + value, 0) / list.length;
function summarize(runs) {
    const all = runs.flatMap((run) => run.results);
    const ttft = all.map((result) => result.ttftMs).sort((a, b) => a - b);
    const byKind = (kind) => all.filter((result) => result.kind === kind);
    return {
        runs: runs.length,
        meanWeightedTurnaroundMsPerToken: mean(all.map((result) => result.weightedTurnaround)),
        meanWeightedTurnaroundShort: mean(byKind("short").map((result) => result.weightedTurnaround)),
        meanWeightedTurnaroundLong: mean(byKind("long").map((result) => result.weightedTurnaround)),
        ttftP50Ms: quantile(ttft, 0.5), ttftP95Ms: quantile(ttft, 0.95),
        ttftP50ShortMs: quantile(byKind("short").map((result) => result.ttftMs).sort((a, b) => a - b), 0.5),
        maxTurnaroundLongMs: Math.max(...byKind("long").map((result) => result.turnaroundMs)),
        tokensPerSecond: mean(runs.map((run) => run.results.reduce((sum, result) => sum + result.completionTokens, 0) / (run.wallMs / 1000)))
    };
}

const runs = [];
for (let repeat = 0; repeat < repeats; repeat++)
    for (const policy of repeat % 2 === 0 ? POLICIES : [...POLICIES].reverse()) {
        process.stderr.write(`run ${repeat + 1}/${repeats}: ${policy}\n`);
        runs.push(await replay(policy));
    }
const summary = Object.fromEntries(POLICIES.map((policy) => [policy, summarize(runs.filter((run) => run.policy === policy))]));

mkdirSync(outDir, {recursive: true});
const setup = {
    date: new Date().toISOString(), host: os.hostname(), cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, load: os.loadavg(),
    model: path.basename(modelPath), parallel, clients, repeats, seed: Number(values.seed), meanGapMs, threads: Number(values.threads),
    longShare: LONG_SHARE, shapes: SHAPES, trace: trace.map((entry) => ({client: entry.client, kind: entry.kind, atMs: entry.atMs, maxTokens: entry.maxTokens}))
};
writeFileSync(path.join(outDir, "results.json"), JSON.stringify({setup, summary, runs}, null, 2));
const f = (value, digits = 1) => value.toFixed(digits);
const table = [
    "| policy | mean weighted turnaround (ms/token) | short / long | p50 TTFT (ms) | p95 TTFT (ms) | p50 TTFT short (ms) | slowest long (ms) | tokens/s |",
    "|---|---|---|---|---|---|---|---|",
    ...POLICIES.map((policy) => {
        const s = summary[policy];
        return `| ${policy} | ${f(s.meanWeightedTurnaroundMsPerToken, 2)} | ${f(s.meanWeightedTurnaroundShort, 2)} / ${f(s.meanWeightedTurnaroundLong, 2)} | ` +
            `${f(s.ttftP50Ms, 0)} | ${f(s.ttftP95Ms, 0)} | ${f(s.ttftP50ShortMs, 0)} | ${f(s.maxTurnaroundLongMs, 0)} | ${f(s.tokensPerSecond, 1)} |`;
    })
].join("\n");
writeFileSync(path.join(outDir, "README.md"), [
    `# Serve scheduling: fair vs FIFO (${stamp})`, "",
    `\`node bench/drivers/bench-serve-scheduling.mjs --parallel ${parallel} --clients ${clients} --repeats ${repeats} --seed ${values.seed} --threads ${values.threads}\``, "",
    `Model ${setup.model}, ${parallel} parallel sequences, ${clients} clients (${trace.filter((entry) => entry.kind === "long").length} long: ` +
    `${SHAPES.long.words} words → ${SHAPES.long.maxTokens} tokens; the rest short: ${SHAPES.short.words} words → ${SHAPES.short.maxTokens} tokens), ` +
    `exponential arrivals with a ${meanGapMs} ms mean gap, greedy. ${setup.cpus} CPUs (${setup.cpuModel}), load average at the end ${setup.load.map((value) => value.toFixed(1)).join(" / ")}.`, "",
    table, "",
    "TTFT and turnaround are measured by the client, from sending the request (queueing included). Weighted turnaround = turnaround ÷ (prompt + generated tokens).", ""
].join("\n"));
process.stdout.write(`${table}\n\nwritten to ${outDir}\n`);
