import type {Token} from "node-llama-cpp";
import type {NativeGenerateEnd, NativeGenerateRequest, TensorwiseBindings} from "../native/tensorwiseBindings.js";

/** What a native generation returns: every generated token with its ms since the call (native clock). */
export type NativeGenerationResult = {
    tokens: Token[];
    /** ms from the call to each token, measured on the generating thread. */
    times: number[];
    end: NativeGenerateEnd;
};

/** Options of {@link runNativeGeneration}. */
export type NativeGenerationOptions = Omit<NativeGenerateRequest, "prompt"> & {
    prompt: readonly Token[];
    signal?: AbortSignal;
    /** Tokens as they arrive (in batches), with their times; return `false` to stop after this batch. */
    onTokens?: (tokens: readonly Token[], times: readonly number[]) => boolean | void;
    /** Prompt tokens of this call decoded so far, after every micro-batch of the prompt. */
    onPromptProgress?: (decoded: number) => void;
};

/**
 * Runs `tensorwiseGenerate` on an addon context and resolves when it ends. An abort (signal or `onTokens` returning
 * `false`) is checked by the native loop before every decode, so it lands within one token's time.
 */
export function runNativeGeneration(bindings: TensorwiseBindings, addonContext: object, options: NativeGenerationOptions): Promise<NativeGenerationResult> {
    const {signal, onTokens, onPromptProgress, prompt, ...request} = options;
    return new Promise((resolve, reject) => {
        const tokens: Token[] = [];
        const times: number[] = [];
        let handle: {abort(): void} | null = null;
        let stopped = false;
        let lastPromptDecoded = 0;
        const stop = () => {
            stopped = true;
            handle?.abort();
        };
        try {
            handle = bindings.tensorwiseGenerate(addonContext, {...request, prompt: Uint32Array.from(prompt)}, (batch, batchTimes, end, promptDecoded) => {
                // each delivery carries the prompt tokens decoded so far (the last micro-batch's with the first token)
                if (promptDecoded !== lastPromptDecoded) {
                    lastPromptDecoded = promptDecoded;
                    onPromptProgress?.(promptDecoded);
                }
                if (batch.length > 0) {
                    const newTokens = Array.from(batch) as Token[];
                    const newTimes = Array.from(batchTimes);
                    tokens.push(...newTokens);
                    times.push(...newTimes);
                    if (!stopped && onTokens?.(newTokens, newTimes) === false) stop();
                }
                if (end != null) {
                    signal?.removeEventListener("abort", stop);
                    if (end.reason === "error") reject(new Error(end.error ?? "native generation failed"));
                    else resolve({tokens, times, end});
                }
            });
        } catch (error) {
            reject(error);
            return;
        }
        if (signal?.aborted) stop();
        else signal?.addEventListener("abort", stop, {once: true});
    });
}
