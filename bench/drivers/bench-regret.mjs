#!/usr/bin/env node
// Benchmark (not a test): planner regret. For each model and cell (TTFT of each prompt length, TPOT over --gen tokens)
// it brute-forces the configurations a user could type into stock llama-bench — GPU hidden (-dev none), -ngl 0 … all,
// FFN → CPU (dense) or experts → CPU (MoE) with every layer offloaded, × -ub × --no-op-offload × -ctk/-ctv × -fa × -t
// × mmap (grid rules: electron/engine/bench/regret/regretGrid.ts) — keeps those within the GPU budget, finds the
// fastest, and measures tensorwise's own plan for the same budget and cell against it (`tensorwise plan --json`, every
// field mapped to llama-bench flags or refused: regret/planConfig.ts), both through llama-bench and through tensorwise's
// runtime (`tensorwise bench`), in the same run.
//
// Memory check: llama.cpp's own allocation log. One llama-bench probe per placement loads the model and creates a
// context for every setting combination without computing (-r 0 --no-warmup -v), at the context tensorwise plans for;
// a configuration is kept when its device buffers (weights + KV cache + compute) fit the budget (regret/probeMemory.ts).
// Time cap: a configuration is stopped once its warm-up or one timed repetition runs longer than --prune-factor × the
// best median so far in that cell (+ --warmup-slack-ms for the warm-up) and recorded as pruned (regret/pruneRule.ts).
// Confirmation: the --finalists fastest configurations, the plan via llama-bench and tensorwise's runtime then run in
// --rounds interleaved rounds (order rotated each round); the verdict uses the median of the round medians. A plan
// already over 2× the best in the brute force is a clear miss and runs (with the runtime) in the first round only.
//
// Usage: node bench/drivers/bench-regret.mjs [--models small,mixtral-mini] [--budget 50%] [--prompts 64,512,2048] [--gen 32]
//        [--gpu auto|vulkan|cuda|cpu] [--strategy optimal] [--scan-repeats 1] [--repeats 3] [--rounds 3] [--finalists 3]
//        [--prune-factor 2] [--warmup-slack-ms 2000] [--max-phase-seconds 600] [--deadline SECONDS]
//        [--placements hidden,layers,ffn-cpu,experts-cpu] [--ngl 1,2] [--ubatches 16,128,512,2048] [--nopo 0,1]
//        [--ctk f16,q8_0] [--ctv f16,q8_0] [--fa 0,1] [--nkvo 0] [--threads 1,2] [--mmap 0,1]
//        [--plan-args "…"] [--bench-args "…"] [--no-runtime] [--dry-run] [--quick] [--out DIR]
// --models: make-model presets (tiny, small, mixtral-mini, llama3.2-3b, llama3-8b, qwen3-30b-a3b; written once to the temp folder)
//   or .gguf paths. --budget: a share of the weights (50%) or MiB, as `tensorwise plan --budget`.
// --quick: a CI-sized smoke (model tiny, prompt 64, gen 8, -ub 16/512, f16 KV, -fa 0, no mmap, -ngl 0/all, all cores,
//   1 repeat, 1 round, 1 finalist); any option given explicitly wins over it.
// --scan-repeats: llama-bench -r in the brute force (it only ranks; the finalists are re-measured); --repeats: -r in the
//   confirmation rounds (and tensorwise bench --repeats).
// --deadline: stop in time (each remaining cell gets an equal share: 70% for its scan, the rest for its rounds); what
//   was not run is recorded as skipped, and the tables are still written.
// --dry-run: plans, grid sizes and memory probes only, no timing.
// With Mesa's llvmpipe, run with GGML_VK_VISIBLE_DEVICES=0 (ggml skips CPU-type Vulkan devices otherwise).
// Writes DIR/regret.json (everything, rewritten after each cell) and DIR/README.md (method + one table per model);
// prints the tables. Needs a built checkout (npm run build) and g++ (llama-bench is built once and cached).
import {spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {parseScriptArgs} from "../../scripts/scriptArgs.mjs";
import {root, tensorwise} from "./benchModels.mjs";

const dist = (file) => path.join(root, "dist", "electron", file);
if (!fs.existsSync(dist("engine/bench/regret/regretGrid.js"))) { console.error("dist/ is missing or old: run `npm run build` first"); process.exit(1); }
const grid = await import(dist("engine/bench/regret/regretGrid.js"));
const {ALL_GPU_LAYERS, cellLabel, configFlags, configKey, placementFlags} = await import(dist("engine/bench/regret/regretConfig.js"));
const {planToConfig, PlanDoesNotFit} = await import(dist("engine/bench/regret/planConfig.js"));
const {contextKeyOfConfig, probeContextFlags} = await import(dist("engine/bench/regret/probeMemory.js"));
const {runRegretConfig, probePlacement} = await import(dist("engine/bench/regret/runRegretBench.js"));
const {cellVerdict, rankByBruteForce, verdictTable} = await import(dist("engine/bench/regret/regretReport.js"));
const {ensureLlamaBench, llamaBenchVariantOf} = await import(dist("engine/bench/llamaBench/buildLlamaBench.js"));
const {budgetBytes} = await import(dist("engine/planner/budget.js"));
const {parseBudget} = await import(dist("cli/flags.js"));
const {benchContextSize} = await import(dist("engine/bench/runBench.js"));
const {offloadMinBatchFromEnv} = await import(dist("engine/planner/offloadMinBatchFromEnv.js"));

const str = {type: "string"};
const {values} = parseScriptArgs(import.meta.url, {
    models: str, budget: str, prompts: str, gen: str, gpu: str, strategy: str, "scan-repeats": str, repeats: str, rounds: str, finalists: str, deadline: str,
    "prune-factor": str, "warmup-slack-ms": str, "max-phase-seconds": str, placements: str, ngl: str, ubatches: str, nopo: str,
    ctk: str, ctv: str, fa: str, nkvo: str, threads: str, mmap: str, "plan-args": str, "bench-args": str, out: str,
    "no-runtime": {type: "boolean"}, "dry-run": {type: "boolean"}, quick: {type: "boolean"}
});
const quick = values.quick === true;
/** An option's value: given, else its --quick value under --quick, else the full grid's. */
const opt = (name, full, quickValue = full) => values[name] ?? (quick ? quickValue : full);
const list = (text, parse = (x) => x) => text === "" ? [] : text.split(",").map((x) => parse(x.trim()));
const int = (x) => { const n = Number(x); if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a count: ${x}`); return n; };
const bit = (x) => { if (x !== "0" && x !== "1") throw new Error(`expected 0 or 1, got ${x}`); return x === "1"; };
const fail = (message) => { console.error(`bench-regret: ${message}`); process.exit(1); };
const log = (message) => console.error(`[regret +${((performance.now() - t0) / 1000).toFixed(0)}s] ${message}`);
const t0 = performance.now();

// --- the machine ---------------------------------------------------------------------------------------------------
const gpuFlag = opt("gpu", "auto");
const devicesRun = tensorwise(["devices", "--gpu", gpuFlag, "--json"]);
if (devicesRun.status !== 0) fail(`tensorwise devices failed: ${devicesRun.stderr.trim()}`);
const devices = JSON.parse(devicesRun.stdout);
const gpuDevice = devices.devices.find((d) => d.type === "gpu") ?? null;
const cores = devices.cpu.cores;
const binary = ensureLlamaBench(llamaBenchVariantOf(devices.backend === "cpu" ? false : devices.backend), {onProgress: log});
log(`llama-bench ${binary.program} (llama.cpp ${binary.commit.slice(0, 12)}); ${cores} cores; GPU ${gpuDevice?.description ?? "none visible"}`);
if (gpuDevice == null) log("no GPU is visible: the grid is CPU-only (with llvmpipe set GGML_VK_VISIBLE_DEVICES=0)");

const prompts = list(opt("prompts", "64,512,2048", "64"), int);
const gen = int(opt("gen", "32", "8"));
const cells = [...prompts.map((tokens) => ({kind: "ttft", tokens})), {kind: "tpot", tokens: gen}];
const scanRepeats = int(opt("scan-repeats", "1"));
const repeats = int(opt("repeats", "3", "1"));
const deadlineAt = values.deadline == null ? Infinity : t0 + 1000 * Number(values.deadline);
const rounds = int(opt("rounds", "3", "1"));
const finalistCount = int(opt("finalists", "3", "1"));
const strategy = opt("strategy", "optimal");
const budgetText = opt("budget", "50%");
const budgetSpec = parseBudget(budgetText);
if (budgetSpec.kind === "auto") fail("--budget auto depends on the moment's free memory: give a share (50%) or MiB");
const prune = {factor: Number(opt("prune-factor", "2")), warmupSlackMs: Number(opt("warmup-slack-ms", "2000")),
    unboundedPhaseMs: 1000 * Number(opt("max-phase-seconds", "600"))};
const gridOptions = {
    placements: gpuDevice == null ? ["hidden"] : list(opt("placements", "hidden,layers,ffn-cpu,experts-cpu")),
    gpuLayerSplits: values.ngl != null ? list(values.ngl, int) : quick ? [] : undefined,
    ubatches: list(opt("ubatches", "16,128,512,2048", "16,512"), int),
    opOffload: list(opt("nopo", "0,1"), bit).map((nopo) => !nopo),
    typesK: list(opt("ctk", "f16,q8_0", "f16")), typesV: list(opt("ctv", "f16,q8_0", "f16")),
    flashAttention: list(opt("fa", "0,1", "0"), bit), kvOffload: list(opt("nkvo", "0"), bit).map((nkvo) => !nkvo),
    threads: values.threads != null ? list(values.threads, int) : quick ? [cores] : grid.defaultThreadCounts(cores),
    mmap: list(opt("mmap", "0,1", "0"), bit), offloadMinBatch: offloadMinBatchFromEnv()
};
const planArgs = list((values["plan-args"] ?? "").trim().replace(/\s+/g, ","));
const benchArgs = list((values["bench-args"] ?? "").trim().replace(/\s+/g, ","));
const date = new Date().toISOString().slice(0, 10);
const outDir = path.resolve(values.out ?? path.join(root, "bench", "results", `${date}-regret-${os.hostname().slice(0, 12)}`));
fs.mkdirSync(outDir, {recursive: true});

const controller = new AbortController();
process.on("SIGINT", () => { if (controller.signal.aborted) process.exit(130); log("SIGINT: stopping after this measurement (again to quit now)"); controller.abort(); });

const results = {
    version: 1, startedAt: new Date().toISOString(), finishedAt: null, interrupted: false,
    machine: {host: os.hostname(), cpu: devices.cpu.model, cores, gpu: gpuDevice?.description ?? null, backend: devices.backend,
        llamaBench: binary.program, llamaCppCommit: binary.commit, loadAverageAtStart: os.loadavg()},
    settings: {budget: budgetText, strategy, prompts, gen, scanRepeats, repeats, rounds, deadlineSeconds: values.deadline == null ? null : Number(values.deadline), finalists: finalistCount, prune, grid: gridOptions, planArgs, benchArgs, quick},
    method: {
        memory: "llama.cpp's own allocation log: per placement one llama-bench probe (-r 0 --no-warmup -v) loads the model and creates a context for each setting combination at the planned context size without computing; a configuration is kept when its device buffers (weights + KV cache + compute) are within the budget",
        prune: `a configuration is stopped once its warm-up or one timed repetition runs longer than ${prune.factor}× the cell's best median so far (warm-up + ${prune.warmupSlackMs} ms); it is then recorded as pruned`,
        verdict: `brute force at -r ${scanRepeats}; the ${finalistCount} fastest configurations, the plan via llama-bench and tensorwise's runtime re-measured in ${rounds} interleaved round(s) at -r ${repeats}; median of round medians`
    },
    models: []
};
const save = () => fs.writeFileSync(path.join(outDir, "regret.json"), JSON.stringify(results, null, 2));

/** A make-model preset written once to the temp folder, or a path. */
function modelFile(name) {
    if (name.endsWith(".gguf")) return path.resolve(name);
    const file = path.join(os.tmpdir(), `tensorwise-regret-${name}.gguf`);
    if (!fs.existsSync(file)) {
        log(`writing the ${name} model to ${file}`);
        const made = tensorwise(["make-model", file, "--preset", name]);
        if (made.status !== 0) fail(`make-model --preset ${name} failed: ${made.stderr.trim().split("\n").at(-1)}`);
    }
    return file;
}

/** The tensorwise CLI, stopped (SIGTERM: `tensorwise bench` keeps what it finished) at `untilMs` on the script's clock. */
function tensorwiseWithin(untilMs, args) {
    const ms = Math.max(1000, Math.min(untilMs, deadlineAt) - performance.now());
    return spawnSync(process.execPath, [path.join(root, "bin", "tensorwise.mjs"), ...args],
        {encoding: "utf8", maxBuffer: 64 << 20, timeout: Number.isFinite(ms) ? Math.round(ms) : undefined, killSignal: "SIGTERM"});
}

const planWorkload = (cell) => cell.kind === "ttft" ? {prompt: cell.tokens, gen: 2} : {prompt: 1, gen: cell.tokens};

/** tensorwise's plan for one cell, as a configuration; a field it cannot map ends the benchmark (never dropped). */
function planFor(modelPath, facts, cell, contextSize) {
    const {prompt, gen: genTokens} = planWorkload(cell);
    const run = tensorwise(["plan", modelPath, "--budget", budgetText, "--strategy", strategy, "--gpu", gpuFlag, "--prompt-tokens", String(prompt),
        "--gen-tokens", String(genTokens), "--context", String(contextSize), "--json", ...planArgs]);
    if (run.status !== 0) return {config: null, problem: `tensorwise plan failed: ${(run.stderr || run.stdout).trim().split("\n").at(-1)}`, json: null};
    const json = JSON.parse(run.stdout);
    try {
        const {config} = planToConfig(json, facts);
        return {config, problem: null, json};
    } catch (error) {
        if (error instanceof PlanDoesNotFit) return {config: null, problem: error.message, json};
        fail(`${error.message}\n(the plan: ${JSON.stringify({gpuLayers: json.gpuLayers, settings: json.settings, argv: json.llamaCppFlags?.argv})})`);
    }
}

/**
 * tensorwise's runtime on the cell: `tensorwise bench` re-plans (cached profile) with the plan's micro-batch (the bench
 * fixes one) and chooses threads itself, as `plan` did: fixing `--threads` too was seen to change the plan (GPU use,
 * mmap) on mixtral-mini. The loaded plan is compared with the plan's and a difference is reported.
 */
function runtimeFor(modelName, modelPath, facts, cell, planConfig, contextSize, round, deadlineMs) {
    const {prompt, gen: genTokens} = planWorkload(cell);
    const dir = path.join(outDir, "runtime", `${modelName}-${cellLabel(cell).replace("@", "")}-r${round}`);
    const run = tensorwiseWithin(deadlineMs, ["bench", modelPath, "--gpu", gpuFlag, "--budgets", budgetText, "--strategies", strategy, "--prompts", String(prompt),
        "--gens", String(genTokens), "--repeats", String(repeats), "--context", String(contextSize), "--batch", String(planConfig.ubatch),
        "--tpot-prompt", "1", "--out", dir, "--json", ...benchArgs]);
    const reportFile = path.join(dir, "report.json");
    if (!fs.existsSync(reportFile)) return {ms: null, problem: `tensorwise bench failed: ${(run.stderr || run.stdout).trim().split("\n").at(-1)}`};
    const benchRun = JSON.parse(fs.readFileSync(reportFile, "utf8")).runs[0];
    if (benchRun?.status !== "ok") return {ms: null, problem: `tensorwise bench: ${benchRun?.error ?? "no run"}`};
    const point = benchRun.points.find((p) => p.kind === cell.kind && p.tokens === cell.tokens);
    // the loaded plan's settings are every field of the bench's plan record but placement and commentary, so a knob it
    // gains is compared too (or reported as unmapped) rather than ignored
    // (the bench nests the configuration knobs in `knobs`; the plan's JSON has them in `settings`)
    const {gpuLayers, overrides, hostWeightBytes, gpuWeightBytes, predictedVramBytes, notes, knobs, ...rest} = benchRun.loads[0].plan;
    void hostWeightBytes; void gpuWeightBytes; void predictedVramBytes; void notes;
    const loadedSettings = {...rest, ...knobs};
    let problem = null;
    try {
        const {config} = planToConfig({gpuLayers, overrides, settings: loadedSettings}, facts);
        if (configKey(config) !== configKey(planConfig)) problem = `tensorwise bench loaded \`${configFlags(config).join(" ")}\`, not the plan`;
    } catch (error) { problem = `tensorwise bench's plan: ${error.message}`; }
    return {ms: point?.medianMs ?? null, problem};
}

/** Memory of every configuration, by one probe per placement (and flash-attention value). */
async function probeAll(modelPath, configs, contextSize) {
    const byPlacement = new Map();
    for (const c of configs) {
        const key = placementFlags(c).join(" ");
        byPlacement.set(key, [...(byPlacement.get(key) ?? []), c]);
    }
    const memory = new Map();
    const problems = new Map();
    for (const [key, group] of byPlacement) {
        const found = new Map();
        for (const contextArgv of probeContextFlags(group)) {
            try {
                for (const [k, v] of await probePlacement(binary.program, {modelPath, placementArgv: placementFlags(group[0]), contextArgv, contextSize}))
                    found.set(k, v);
            } catch (error) { problems.set(key, error.message); }
        }
        memory.set(key, found);
        log(`memory probe ${key}: ${found.size} context settings${problems.has(key) ? ` (failed: ${problems.get(key)})` : ""}`);
    }
    return (config) => {
        const key = placementFlags(config).join(" ");
        return {memory: memory.get(key)?.get(contextKeyOfConfig(config)) ?? null, problem: problems.get(key) ?? null};
    };
}

const MiB = 1024 * 1024;
const modelNames = list(opt("models", "small,mixtral-mini", "tiny"));
let cellsLeft = modelNames.length * cells.length;
setTimeout(() => { if (!controller.signal.aborted) { log("deadline reached: stopping"); controller.abort(); } }, Number.isFinite(deadlineAt) ? deadlineAt - performance.now() : 2 ** 31 - 1).unref();
for (const modelName of modelNames) {
    if (controller.signal.aborted) break;
    const modelPath = modelFile(modelName);
    const inspected = tensorwise(["inspect", modelPath, "--json"]);
    if (inspected.status !== 0) fail(`inspect ${modelPath}: ${inspected.stderr.trim()}`);
    const info = JSON.parse(inspected.stdout);
    const facts = {layerCount: info.layerCount, moe: info.tensors.some((t) => t.role.endsWith("_exps"))};
    const budget = budgetBytes(budgetSpec, {gpuFreeBytes: gpuDevice?.freeBytes ?? 0, weightBytes: info.tensorBytes});
    const contextSize = benchContextSize(prompts, [gen], 1, 8);
    const entry = {name: modelName, path: modelPath, layerCount: facts.layerCount, moe: facts.moe, weightBytes: info.tensorBytes, budgetBytes: budget, contextSize, cells: []};
    results.models.push(entry);
    log(`${modelName}: ${facts.layerCount} layers${facts.moe ? ", MoE" : ""}, ${(info.tensorBytes / MiB).toFixed(1)} MiB of weights, budget ${budgetText} = ${(budget / MiB).toFixed(1)} MiB, context ${contextSize}`);

    const perCell = cells.map((cell) => {
        const plan = planFor(modelPath, facts, cell, contextSize);
        const configs = grid.enumerateRegretGrid(facts, cell, gridOptions);
        log(`${cellLabel(cell)}: plan ${plan.config == null ? `none (${plan.problem})` : configFlags(plan.config).join(" ")}; grid ${configs.length} configurations`);
        return {cell, plan, configs};
    });
    const memoryOf = await probeAll(modelPath, perCell.flatMap((c) => [...c.configs, ...(c.plan.config == null ? [] : [c.plan.config])]), contextSize);

    for (const {cell, plan, configs} of perCell) {
        if (controller.signal.aborted) break;
        const cellStart = performance.now();
        cellsLeft--;
        // with a deadline, this cell's equal share of what is left: 70% to scan, the rest for the rounds
        const share = (deadlineAt - cellStart) / (cellsLeft + 1);
        const scanUntil = cellStart + 0.7 * share;
        const roundsUntil = cellStart + share;
        const cellPrune = {...prune, unboundedPhaseMs: Math.min(prune.unboundedPhaseMs, Math.max(1000, scanUntil - cellStart)),
            loadLimitMs: Math.min(300_000, Math.max(1000, scanUntil - cellStart))};
        const planKey = plan.config == null ? null : configKey(plan.config);
        // the plan first (a best to prune against early), the GPU hidden next, then the GPU-heavy placements first
        const weight = (c) => c.hideGpu ? 0 : c.overrides.length > 0 || c.cpuMoeLayers > 0 ? 2 : c.gpuLayers === ALL_GPU_LAYERS ? 1 : 3 + (ALL_GPU_LAYERS - c.gpuLayers);
        const ordered = [...(plan.config == null ? [] : [plan.config]), ...[...configs].sort((a, b) => weight(a) - weight(b))]
            .filter((c, i, all) => all.findIndex((d) => configKey(d) === configKey(c)) === i);
        const measured = [];
        let bestMs = null;
        const counts = {ok: 0, pruned: 0, failed: 0, overBudget: 0, noMemory: 0, skipped: 0};
        for (const [i, config] of ordered.entries()) {
            if (controller.signal.aborted) break;
            if (performance.now() > scanUntil) {
                counts.skipped = ordered.length - i;
                log(`${modelName} ${cellLabel(cell)}: deadline share spent, ${counts.skipped} configurations not run`);
                break;
            }
            const isPlan = configKey(config) === planKey;
            const {memory, problem} = memoryOf(config);
            const record = {key: configKey(config), config, isPlan, inGrid: configs.some((c) => configKey(c) === configKey(config)),
                gpuBytes: memory?.gpuBytes ?? null, buffers: memory?.buffers ?? null, eligible: memory != null && memory.gpuBytes <= budget, roundsMs: []};
            measured.push(record);
            if (memory == null) { counts.noMemory++; record.status = "no-memory-check"; record.reason = problem ?? "the probe did not report this setting"; if (!isPlan) continue; }
            else if (!record.eligible) { counts.overBudget++; record.status = "over-budget"; if (!isPlan) continue; }
            if (values["dry-run"] === true) continue;
            const run = await runRegretConfig(binary.program, config, {modelPath, cell, repeats: scanRepeats, bestMs, prune: cellPrune, env: process.env, signal: controller.signal});
            Object.assign(record, {status: record.status ?? run.status, run, bruteForceMs: run.status === "ok" ? run.medianMs : null});
            if (run.status === "ok") { counts.ok++; if (record.eligible && (bestMs == null || run.medianMs < bestMs)) bestMs = run.medianMs; }
            else if (run.status === "pruned") counts.pruned++;
            else counts.failed++;
            const what = run.status === "ok" ? `${run.medianMs.toFixed(2)} ms` : run.status === "pruned" ? `pruned: ${run.verdict.reason}` : `failed: ${run.error}`;
            log(`${modelName} ${cellLabel(cell)} [${i + 1}/${ordered.length}]${isPlan ? " (plan)" : ""} ${configFlags(config).join(" ")}: ${what}`);
        }

        // confirmation: the finalists, the plan and the runtime, interleaved
        const finalists = rankByBruteForce(measured, finalistCount);
        const planRecord = measured.find((m) => m.isPlan);
        if (planRecord?.bruteForceMs != null && !finalists.includes(planRecord)) finalists.push(planRecord);
        const runtimeRoundsMs = [];
        let runtimeProblem = null;
        const scanBest = rankByBruteForce(measured, 1)[0]?.bruteForceMs ?? null;
        const clearMiss = planRecord?.bruteForceMs != null && scanBest != null && planRecord.bruteForceMs > 2 * scanBest;
        const slots = [...finalists, ...(plan.config != null && values["no-runtime"] !== true ? ["runtime"] : [])];
        for (let round = 0; round < rounds && values["dry-run"] !== true && slots.length > 0; round++) {
            for (let s = 0; s < slots.length; s++) {
                if (controller.signal.aborted || performance.now() > roundsUntil) break;
                const slot = slots[(s + round) % slots.length];
                // a plan already over 2× the best in the scan is a clear miss: one round of it (and of the runtime) is
                // enough, and on a slow GPU each of its runs can take minutes
                if (round > 0 && clearMiss && (slot === "runtime" || slot === planRecord)) continue;
                if (slot === "runtime") {
                    const r = runtimeFor(modelName, modelPath, facts, cell, plan.config, contextSize, round + 1, roundsUntil);
                    if (r.ms != null) runtimeRoundsMs.push(r.ms);
                    runtimeProblem = r.problem ?? runtimeProblem;
                    log(`${modelName} ${cellLabel(cell)} round ${round + 1}: tensorwise runtime ${r.ms?.toFixed(2) ?? "–"} ms${r.problem == null ? "" : ` (${r.problem})`}`);
                    continue;
                }
                const roundPrune = {...prune, unboundedPhaseMs: Math.max(1000, Math.min(prune.unboundedPhaseMs, roundsUntil - performance.now()))};
                const run = await runRegretConfig(binary.program, slot.config, {modelPath, cell, repeats, bestMs: null, prune: roundPrune, env: process.env, signal: controller.signal});
                if (run.status === "ok") slot.roundsMs.push(run.medianMs);
                log(`${modelName} ${cellLabel(cell)} round ${round + 1}: ${slot.isPlan ? "(plan) " : ""}${configFlags(slot.config).join(" ")}: ${run.status === "ok" ? `${run.medianMs.toFixed(2)} ms` : run.status}`);
            }
        }
        const planProblem = values["dry-run"] === true ? "dry run: nothing was timed" : plan.problem ?? (planRecord != null && planRecord.eligible === false && planRecord.gpuBytes != null
            ? `the plan is over the budget by llama.cpp's allocation: ${(planRecord.gpuBytes / MiB).toFixed(2)} MiB > ${(budget / MiB).toFixed(2)} MiB` : null);
        const verdict = cellVerdict(cell, {measured: measured.map((m) => ({config: m.config, bruteForceMs: m.bruteForceMs ?? null, roundsMs: m.roundsMs, eligible: m.eligible})),
            planConfig: plan.config, planProblem, runtimeRoundsMs, runtimeProblem, offloadMinBatch: gridOptions.offloadMinBatch});
        entry.cells.push({cell, plan: {json: plan.json, config: plan.config, problem: plan.problem}, counts, wallSeconds: (performance.now() - cellStart) / 1000,
            configs: measured.map(({config, ...rest}) => ({flags: configFlags(config).join(" "), ...rest})), runtimeRoundsMs, verdict});
        log(`${modelName} ${cellLabel(cell)}: ${counts.ok} measured, ${counts.pruned} pruned, ${counts.overBudget} over budget, ${counts.failed} failed, ` +
            `${counts.noMemory} without a memory check, ${counts.skipped} skipped (deadline), in ${((performance.now() - cellStart) / 1000).toFixed(0)} s; regret ${verdict.regret?.toFixed(2) ?? "–"}×`);
        save();
    }
}

results.finishedAt = new Date().toISOString();
results.interrupted = controller.signal.aborted;
results.machine.loadAverageAtEnd = os.loadavg();
save();
const tables = results.models.map((m) => `### ${m.name} (${(m.weightBytes / MiB).toFixed(1)} MiB, ${m.layerCount} layers${m.moe ? ", MoE" : ""}), budget ${budgetText} = ${(m.budgetBytes / MiB).toFixed(1)} MiB, context ${m.contextSize}\n\n` +
    `${verdictTable(m.cells.map((c) => c.verdict))}\n\nconfigurations per cell (measured / pruned / over budget / failed): ` +
    m.cells.map((c) => `${cellLabel(c.cell)} ${c.counts.ok}/${c.counts.pruned}/${c.counts.overBudget}/${c.counts.failed}` +
        `${c.counts.skipped > 0 ? ` (+${c.counts.skipped} not run: deadline)` : ""} in ${c.wallSeconds.toFixed(0)} s`).join(", ")).join("\n\n");
fs.writeFileSync(path.join(outDir, "README.md"), `# Planner regret, ${date}\n\n` +
    `Machine: ${results.machine.cpu} × ${cores}, GPU ${results.machine.gpu ?? "none"}; llama.cpp ${binary.commit.slice(0, 12)}; load average ` +
    `${results.machine.loadAverageAtStart.map((v) => v.toFixed(1)).join("/")} at the start, ${os.loadavg().map((v) => v.toFixed(1)).join("/")} at the end` +
    `${results.interrupted ? " (interrupted)" : ""}.\n\nMemory check: ${results.method.memory}.\n\nTime cap: ${results.method.prune}.\n\nVerdict: ${results.method.verdict}. ` +
    `Regret = the plan through llama-bench ÷ the fastest configuration within the budget; runtime ÷ best = tensorwise's own runtime on the plan ÷ the same.\n\n${tables}\n`);
console.log(tables);
console.log(`wrote ${outDir}`);
process.exit(results.interrupted ? 130 : 0);
