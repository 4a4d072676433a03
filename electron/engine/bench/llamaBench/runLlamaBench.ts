/** Runs stock `llama-bench` on one load's cells and reads its JSON output. */
import {spawn} from "node:child_process";
import type {PointKind} from "../../../contract/bench.js";

/** One cell as llama-bench measured it. */
export type LlamaBenchCell = {
    readonly kind: PointKind;
    /** Prompt tokens (pp, compared with TTFT) or generated tokens (tg, compared with TPOT). */
    readonly tokens: number;
    /** llama-bench's mean tokens/s over its repetitions (`avg_ts`). */
    readonly tokensPerSec: number;
    readonly stdevTokensPerSec: number;
};

/**
 * Parses `llama-bench -o json` output: one entry per test, `n_prompt` > 0 for pp, `n_gen` > 0 for tg.
 * source: tools/llama-bench/llama-bench.cpp json_printer / test::get_fields.
 */
export function parseLlamaBenchJson(text: string): LlamaBenchCell[] {
    const start = text.indexOf("[");
    if (start < 0) throw new Error("llama-bench printed no JSON results");
    const entries = JSON.parse(text.slice(start)) as unknown;
    if (!Array.isArray(entries)) throw new Error("llama-bench's JSON output is not a list of tests");
    return entries.map((entry: Record<string, unknown>) => {
        const prompt = Number(entry.n_prompt ?? 0);
        const gen = Number(entry.n_gen ?? 0);
        const tokensPerSec = Number(entry.avg_ts);
        if (!Number.isFinite(tokensPerSec)) throw new Error("a llama-bench test has no avg_ts");
        return {kind: prompt > 0 ? "ttft" : "tpot", tokens: prompt > 0 ? prompt : gen, tokensPerSec,
            stdevTokensPerSec: Number(entry.stddev_ts ?? 0)} satisfies LlamaBenchCell;
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
