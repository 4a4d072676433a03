/**
 * Stock llama.cpp's greedy tokens on the placement tensorwise says is equivalent: the `llama-cli …` line a loaded
 * placement prints (`placement.llamaCppFlags`), split as a POSIX shell would, run by `greedy-tokens`
 * (native/tools/greedyTokens.cpp) with the prompt tensorwise evaluated, as token ids.
 */
import {describeEnd, runProgram} from "./runProgram.js";

/** Splits a command line written by `shellQuote` (llamaCppFlags.ts): plain words, `'…'` and `'\''`, and `"…"`. */
export function splitShellWords(line: string): string[] {
    const words: string[] = [];
    let word = "";
    let inWord = false;
    for (let i = 0; i < line.length; i++) {
        const c = line[i]!;
        if (c === "'") {
            const end = line.indexOf("'", i + 1);
            if (end < 0) throw new Error(`unterminated ' in ${JSON.stringify(line)}`);
            word += line.slice(i + 1, end);
            i = end;
            inWord = true;
        } else if (c === "\"") {
            let j = i + 1;
            for (; j < line.length && line[j] !== "\""; j++) {
                if (line[j] === "\\" && j + 1 < line.length && "\"\\$`".includes(line[j + 1]!)) j++;
                word += line[j];
            }
            if (j >= line.length) throw new Error(`unterminated " in ${JSON.stringify(line)}`);
            i = j;
            inWord = true;
        } else if (c === "\\" && i + 1 < line.length) {
            word += line[++i];
            inWord = true;
        } else if (/\s/.test(c)) {
            if (inWord) words.push(word);
            word = "";
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (inWord) words.push(word);
    return words;
}

/** The run tensorwise made, as the stock program gets it. */
export type StockGreedyRequest = {
    /** `placement.llamaCppFlags` of the load (program name first, then llama.cpp's flags with `-m`). */
    readonly llamaCppFlags: string;
    readonly promptIds: readonly number[];
    readonly maxTokens: number;
    /** The context tensorwise created (`--context`). */
    readonly contextSize: number;
};

/**
 * greedy-tokens' arguments: the settings tensorwise loads with that its llama.cpp line leaves to llama.cpp's defaults
 * (context size; flash attention off, as PlacedModel creates contexts; logical batch = micro-batch, as node-llama-cpp
 * sets n_batch = n_ubatch), then the line's own flags, which win where they repeat one.
 */
export function stockGreedyArgs(request: StockGreedyRequest): string[] {
    const flags = splitShellWords(request.llamaCppFlags).slice(1);
    const args = ["--prompt-ids", request.promptIds.join(","), "-n", String(request.maxTokens),
        "-c", String(request.contextSize), "-fa", "off"];
    const ubatch = flags.indexOf("-ub");
    if (ubatch >= 0 && !flags.includes("-b") && flags[ubatch + 1] != null) args.push("-b", flags[ubatch + 1]!);
    return [...args, ...flags];
}

/** One buffer type as llama.cpp accounts it (llama_get_memory_breakdown). */
export type StockMemory = {bufferType: string; model: number; context: number; compute: number};

/** What greedy-tokens printed. */
export type StockGreedyResult =
    | {ok: true; tokens: number[]; stop: "eog" | "max-tokens"; memory: StockMemory[]; args: string[]}
    | {ok: false; error: string; args: string[]};

/** Runs greedy-tokens (`program`) for `request`; never rejects for a failed run, it says why in `error`. */
export async function runStockGreedy(program: string, request: StockGreedyRequest,
    options: {timeoutMs?: number; env?: NodeJS.ProcessEnv} = {}): Promise<StockGreedyResult> {
    const args = stockGreedyArgs(request);
    const run = await runProgram(program, args, {timeoutMs: options.timeoutMs ?? 300_000, env: options.env});
    const line = run.stdout.trim().split("\n").filter((text) => text.startsWith("{")).pop();
    if (line != null) {
        const parsed = JSON.parse(line) as {error?: string; tokens?: number[]; stop?: "eog" | "max-tokens"; memory?: StockMemory[]};
        if (parsed.error != null) return {ok: false, error: `${parsed.error}${lastLine(run.stderr)}`, args};
        if (parsed.tokens != null && parsed.stop != null && parsed.memory != null)
            return {ok: true, tokens: parsed.tokens, stop: parsed.stop, memory: parsed.memory, args};
    }
    return {ok: false, error: `greedy-tokens ended (${describeEnd(run)}) without a result${lastLine(run.stderr)}`, args};
}

function lastLine(text: string): string {
    const lines = text.trim().split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("DEPRECATED"));
    return lines.length > 0 ? `: ${lines[lines.length - 1]!.slice(0, 300)}` : "";
}
