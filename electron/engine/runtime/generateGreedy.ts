import type {Token} from "node-llama-cpp";
import type {PlacedModel} from "./PlacedModel.js";
import {TokenClock} from "./generationTiming.js";
import type {GenerationTiming} from "../../contract/timing.js";

export type GreedyOptions = {
    /** Defaults to 32. */
    maxTokens?: number;
    /** Stop at an end-of-generation token. Defaults to `true`; benchmarks set `false` to get exactly `maxTokens`. */
    stopAtEog?: boolean;
    signal?: AbortSignal;
    /** Called per generated token with ms since the request started. */
    onToken?: (token: Token, elapsedMs: number) => void;
};

export type GreedyResult = {
    tokens: Token[];
    text: string;
    timing: GenerationTiming;
    aborted: boolean;
};

/**
 * Greedy (temperature 0) generation from a raw prompt on a fresh sequence: deterministic, so outputs of different
 * placements can be compared, and timed per token from the engine side (the native loop's own timestamps).
 */
export async function generateGreedy(placed: PlacedModel, prompt: string | readonly Token[], options: GreedyOptions = {}): Promise<GreedyResult> {
    const {maxTokens = 32, stopAtEog = true, signal, onToken} = options;
    const clock = new TokenClock();
    const promptTokens = typeof prompt === "string"
        ? placed.model.tokenize(prompt, false)
        : [...prompt];
    if (promptTokens.length === 0)
        throw new Error("the prompt is empty");

    const tokens: Token[] = [];
    let aborted = false;
    if (maxTokens > 0) {
        // the whole prompt decoded every time, as llama-bench's pp does (no prefix reuse)
        const result = await placed.generate(promptTokens, {
            maxTokens, stopAtEog, temperature: 0, reusePrefix: false, signal,
            onTokens(batch, times) {
                // tokens arrive in batches: nothing sampled after a stop is delivered or kept
                for (const [i, token] of batch.entries()) {
                    if (tokens.length >= maxTokens || signal?.aborted === true)
                        return false;
                    tokens.push(token);
                    const elapsed = clock.tick(1, times[i]);
                    onToken?.(token, elapsed);
                }
                return signal?.aborted !== true;
            }
        });
        aborted = result.end.reason === "abort";
    }
    return {tokens, text: placed.model.detokenize(tokens), timing: clock.timing(promptTokens.length), aborted};
}
