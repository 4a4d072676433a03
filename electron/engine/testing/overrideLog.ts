import {LlamaLogLevel} from "node-llama-cpp";
import type {EngineLlamaOptions} from "../native/getEngineLlama.js";

/** llama.cpp's line for each tensor an override moves (llama_model_loader, at debug level). */
const OVERRIDE_LINE = "buffer type overridden";
/** The first line llama_context::~llama_context logs when a context is freed (debug, or warn on a size mismatch). */
const CONTEXT_FREED_LINE = "~llama_context:";

/** One tensor llama.cpp reported moving, and the buffer type it went to. */
export type ConfirmedOverride = {tensor: string; bufferType: string};

/**
 * Reads llama.cpp's own "buffer type overridden" lines for one load. Those lines reach JS through node-llama-cpp's
 * thread-safe log queue (addonLlamaCppLogCallback in its addon), drained on the event loop in batches that can arrive
 * after the load that logged them has resolved: a busy CI runner once saw all 12 lines of a load arrive too late to be
 * read. The queue keeps order, so once the line the freed context logs has arrived, every line the load logged before it
 * has too. Pass {@link engineOptions} to the engine (one logger per process: node-llama-cpp keeps the first).
 */
export class OverrideLog {
    private lines: string[] = [];
    private contextFreed = false;

    readonly engineOptions: Pick<EngineLlamaOptions, "logLevel" | "onLog"> = {
        logLevel: LlamaLogLevel.debug,
        onLog: (_level, message) => {
            if (message.includes(OVERRIDE_LINE)) this.lines.push(message);
            else if (message.includes(CONTEXT_FREED_LINE)) this.contextFreed = true;
        }
    };

    /**
     * The overrides llama.cpp confirmed while `run` ran. `run` must load a model with a context and free both before it
     * resolves; this then waits (up to `timeoutMs`) for the freed context's line, so no line of the load is missed.
     */
    async confirmedBy(run: () => Promise<void>, timeoutMs = 60_000): Promise<ConfirmedOverride[]> {
        this.lines = [];
        this.contextFreed = false;
        await run();
        const deadline = performance.now() + timeoutMs;
        while (!this.contextFreed) {
            if (performance.now() > deadline)
                throw new Error(`llama.cpp's "${CONTEXT_FREED_LINE}" line did not arrive within ${timeoutMs} ms of the load's end: ` +
                    "the load did not free its context, or its log lines are lost");
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return this.lines.map((line) => ({
            tensor: /tensor (\S+) /.exec(line)?.[1] ?? `? (${line})`,
            bufferType: /overridden to (\S+)/.exec(line)?.[1] ?? `? (${line})`
        }));
    }
}

/** The tensor names of `confirmed`, sorted. */
export function confirmedTensors(confirmed: readonly ConfirmedOverride[]): string[] {
    return confirmed.map((entry) => entry.tensor).sort();
}
