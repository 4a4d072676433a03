/**
 * The two llama-bench processes of the planner-regret benchmark: a timed run of one configuration on one cell, stopped
 * by the time cap of pruneRule.ts, and a memory probe of one placement (probeMemory.ts).
 */
import {spawn} from "node:child_process";
import type {LlamaBenchCell} from "../../../contract/bench.js";
import {parseLlamaBenchJson} from "../llamaBench/runLlamaBench.js";
import {median} from "../stats.js";
import {configArgv, type RegretCell, type RegretConfig} from "./regretConfig.js";
import {contextKeyOfEntry, parseProbeLog, type ProbedMemory} from "./probeMemory.js";
import {PruneMonitor, type PruneOptions, type PruneVerdict} from "./pruneRule.js";

/** A timed configuration: measured, stopped by the cap, or failed (llama.cpp refused it, crashed, …). */
export type RegretRun =
    | {readonly status: "ok"; readonly medianMs: number; readonly samplesMs: readonly number[]; readonly wallMs: number}
    | {readonly status: "pruned"; readonly verdict: PruneVerdict; readonly lowerBoundMs: number | null; readonly wallMs: number}
    | {readonly status: "failed"; readonly error: string; readonly wallMs: number};

/** How often the cap is checked while a process runs. */
const CHECK_INTERVAL_MS = 50;

/** The cell's time from llama-bench's test (ms for the whole prompt, ms per generated token), each repetition and median. */
export function cellTime(cells: readonly LlamaBenchCell[], cell: RegretCell): {medianMs: number; samplesMs: readonly number[]} {
    const found = cells.find((c) => c.kind === cell.kind && c.tokens === cell.tokens);
    if (found == null || found.samplesMs.length === 0) throw new Error(`llama-bench reported no ${cell.kind} test of ${cell.tokens} tokens`);
    return {medianMs: median(found.samplesMs), samplesMs: found.samplesMs};
}

/**
 * Runs `program` on one configuration and cell with `repeats` repetitions, stopping it (SIGKILL) when a phase overruns
 * the cap for `bestMs` (null: no best yet). Never throws for llama-bench's own failures.
 */
export function runRegretConfig(program: string, config: RegretConfig, options: {
    modelPath: string; cell: RegretCell; repeats: number; bestMs: number | null; prune?: PruneOptions; env?: NodeJS.ProcessEnv; signal?: AbortSignal;
}): Promise<RegretRun> {
    const started = performance.now();
    const argv = configArgv(config, {modelPath: options.modelPath, cell: options.cell, repeats: options.repeats});
    return new Promise((resolve) => {
        const child = spawn(program, argv, {stdio: ["ignore", "pipe", "pipe"], env: options.env});
        const monitor = new PruneMonitor(options.cell, options.bestMs, started, options.prune);
        let stdout = "";
        let stderrTail = "";
        let partial = "";
        let verdict: PruneVerdict | null = null;
        let lowerBoundMs: number | null = null;
        const stop = (): void => { child.kill("SIGKILL"); };
        const timer = setInterval(() => {
            const now = performance.now();
            const over = monitor.check(now);
            if (over != null && verdict == null) {
                verdict = over;
                lowerBoundMs = monitor.lowerBoundMs(now);
                stop();
            }
        }, CHECK_INTERVAL_MS);
        options.signal?.addEventListener("abort", stop, {once: true});
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
            stdout += chunk;
            // the test's JSON object: every repetition is done (llama-bench prints it before freeing the context)
            if (stdout.includes("\"samples_ns\"")) monitor.done(performance.now());
        });
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
            const now = performance.now();
            stderrTail = (stderrTail + chunk).slice(-4096);
            const lines = (partial + chunk).split("\n");
            partial = lines.pop() ?? "";
            for (const line of lines) monitor.line(line, now);
        });
        const finish = (run: RegretRun): void => {
            clearInterval(timer);
            options.signal?.removeEventListener("abort", stop);
            resolve(run);
        };
        child.on("error", (error) => finish({status: "failed", error: error.message, wallMs: performance.now() - started}));
        child.on("close", (code, signal) => {
            const wallMs = performance.now() - started;
            if (verdict != null) return finish({status: "pruned", verdict, lowerBoundMs, wallMs});
            if (code !== 0) {
                const tail = stderrTail.trim().split("\n").filter((l) => !/^(load_backend|ggml_vulkan|llama-bench: benchmark)/.test(l)).slice(-2).join(" ");
                return finish({status: "failed", error: `llama-bench exited with ${signal ?? `code ${code}`}${tail === "" ? "" : `: ${tail}`}`, wallMs});
            }
            try {
                const {medianMs, samplesMs} = cellTime(parseLlamaBenchJson(stdout), options.cell);
                finish({status: "ok", medianMs, samplesMs, wallMs});
            } catch (error) {
                finish({status: "failed", error: error instanceof Error ? error.message : String(error), wallMs});
            }
        });
    });
}

/**
 * Probes one placement (the model flags of `placementArgv`: `-dev`/`-ngl`/`-ot`/`-ncmoe`) at `contextSize` tokens for
 * every combination of `contextArgv`'s comma lists: a map from {@link contextKeyOfEntry} to what llama.cpp allocated.
 * Rejects when llama-bench fails (the model does not load, a context cannot be created).
 */
export function probePlacement(program: string, options: {
    modelPath: string; placementArgv: readonly string[]; contextArgv: readonly string[]; contextSize: number; env?: NodeJS.ProcessEnv; timeoutMs?: number;
}): Promise<Map<string, ProbedMemory>> {
    const argv = ["-m", options.modelPath, ...options.placementArgv, ...options.contextArgv, "-lm", "none", "-t", "1",
        "-p", String(options.contextSize), "-n", "0", "-r", "0", "--no-warmup", "-v", "--progress", "-o", "jsonl"];
    return new Promise((resolve, reject) => {
        const child = spawn(program, argv, {stdio: ["ignore", "pipe", "pipe"], env: options.env, timeout: options.timeoutMs ?? 600_000});
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => { stdout += chunk; });
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => { stderr += chunk; });
        child.on("error", reject);
        child.on("close", (code, signal) => {
            if (code !== 0) {
                const tail = stderr.trim().split("\n").filter((l) => /error|fail|out of memory/i.test(l)).slice(-2).join(" ");
                reject(new Error(`llama-bench ${argv.slice(2).join(" ")} exited with ${signal ?? `code ${code}`}${tail === "" ? "" : `: ${tail}`}`));
                return;
            }
            const entries = stdout.split("\n").filter((l) => l.trim().startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
            const memory = parseProbeLog(stderr);
            if (memory.length !== entries.length) {
                reject(new Error(`the probe logged ${memory.length} instances but reported ${entries.length}`));
                return;
            }
            resolve(new Map(entries.map((entry, i) => [contextKeyOfEntry(entry), memory[i]!])));
        });
    });
}
