/** Runs stock `llama-bench` on one load's cells and reads its JSON output. */
import {spawn} from "node:child_process";
import type {LlamaBenchCell} from "../../../contract/bench.js";
import {median} from "../stats.js";

/**
 * Parses `llama-bench -o json` output: one entry per test, `n_prompt` > 0 for pp, `n_gen` > 0 for tg, with each
 * repetition's time in `samples_ns`. source: tools/llama-bench/llama-bench.cpp json_printer / test::get_fields.
 */
export function parseLlamaBenchJson(text: string): LlamaBenchCell[] {
    const start = text.indexOf("[");
    if (start < 0) throw new Error("llama-bench printed no JSON results");
    const entries = JSON.parse(text.slice(start)) as unknown;
    if (!Array.isArray(entries)) throw new Error("llama-bench's JSON output is not a list of tests");
    return entries.map((entry: Record<string, unknown>) => {
        const prompt = Number(entry.n_prompt ?? 0);
        const gen = Number(entry.n_gen ?? 0);
        const meanTokensPerSec = Number(entry.avg_ts);
        if (!Number.isFinite(meanTokensPerSec)) throw new Error("a llama-bench test has no avg_ts");
        const kind = prompt > 0 ? "ttft" : "tpot";
        const tokens = prompt > 0 ? prompt : gen;
        const samplesNs = Array.isArray(entry.samples_ns) ? entry.samples_ns.map(Number).filter((ns) => Number.isFinite(ns) && ns > 0) : [];
        // pp: the whole prompt's time, as TTFT; tg: per generated token, as TPOT
        const samplesMs = samplesNs.map((ns) => kind === "ttft" ? ns / 1e6 : ns / 1e6 / tokens);
        const tokensPerSec = samplesMs.length === 0 ? meanTokensPerSec
            : kind === "ttft" ? tokens / (median(samplesMs) / 1000) : 1000 / median(samplesMs);
        return {kind, tokens, tokensPerSec, meanTokensPerSec, stdevTokensPerSec: Number(entry.stddev_ts ?? 0), samplesMs} satisfies LlamaBenchCell;
    });
}

/** Runs `program argv…` (argv must include `-o json`) and returns its cells; rejects with llama-bench's last error lines. */
export function runLlamaBench(program: string, argv: readonly string[], options: {timeoutMs?: number; signal?: AbortSignal} = {}): Promise<LlamaBenchCell[]> {
    return new Promise((resolve, reject) => {
        const child = spawn(program, argv, {stdio: ["ignore", "pipe", "pipe"], signal: options.signal, timeout: options.timeoutMs});
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => { stdout += chunk; });
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => { stderr = (stderr + chunk).slice(-8192); });
        child.on("error", reject);
        child.on("close", (code, signal) => {
            if (code !== 0) {
                const tail = stderr.trim().split("\n").slice(-3).join(" ");
                reject(new Error(`llama-bench exited with ${signal ?? `code ${code}`}${tail === "" ? "" : `: ${tail}`}`));
                return;
            }
            try {
                resolve(parseLlamaBenchJson(stdout));
            } catch (error) {
                reject(error);
            }
        });
    });
}
