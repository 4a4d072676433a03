import {LlamaLogLevel} from "node-llama-cpp";
import type {EngineLlamaOptions} from "../native/getEngineLlama.js";

/** The line llama_context logs after reserving its graphs: "graph (pp bs=512, tg bs=1): nodes = 294 / 294, splits = 59 / 51, …". */
const RESERVE_LINE = /graph(?: \(pp bs=\d+, tg bs=\d+\))?: nodes = [0-9 /]+, splits = (\d+)(?: \/ (\d+))?/;

/** llama.cpp's own count of a context's graph splits: contiguous runs of nodes on one backend. */
export type GraphSplits = {readonly prompt: number; readonly decode: number};

/**
 * Reads llama.cpp's count of graph splits (ggml_backend_sched_get_n_splits, logged by llama_context's graph reserve for
 * a prompt micro-batch and for one token) of each context created while `run` runs: the no-alloc simulation's
 * included. Log lines reach JS through node-llama-cpp's queue after the call that logged them (see overrideLog.ts), in
 * order, so this waits for the one line of the one context `run` creates before the next run starts. Pass
 * {@link engineOptions} to the engine (node-llama-cpp keeps the first logger of a process).
 */
export class GraphSplitLog {
    private splits: GraphSplits[] = [];

    readonly engineOptions: Pick<EngineLlamaOptions, "logLevel" | "onLog"> = {
        logLevel: LlamaLogLevel.debug,
        onLog: (_level, message) => {
            const match = RESERVE_LINE.exec(message);
            if (match != null) this.splits.push({prompt: Number(match[1]), decode: Number(match[2] ?? match[1])});
        }
    };

    /** The splits of the one context `run` creates. */
    async of(run: () => Promise<unknown>, timeoutMs = 60_000): Promise<GraphSplits> {
        this.splits = [];
        await run();
        const deadline = performance.now() + timeoutMs;
        while (this.splits.length === 0) {
            if (performance.now() > deadline) throw new Error(`llama.cpp's graph reserve line did not arrive within ${timeoutMs} ms`);
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return this.splits.shift()!;
    }
}
