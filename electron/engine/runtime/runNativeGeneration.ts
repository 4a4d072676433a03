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

/** A running native generation. */
export type NativeGenerationRun = {
    /**
     * The generation as its caller sees it. Resolves at the native end, or at once when `signal` aborts: then with
     * the tokens delivered until the abort, `end.reason` "abort", and `end.decodedTokens` counted from what the
     * callbacks reported (the micro-batch or token in flight may still land in the KV cache: see `finished`).
     */
    result: Promise<NativeGenerationResult>;
    /** Resolves when the native call has returned and the context is free again, with what the native loop did. */
    finished: Promise<NativeGenerationResult>;
};

/**
 * Runs `tensorwiseGenerate` on an addon context. An abort (signal or `onTokens` returning `false`) is checked by the
 * native loop before every decode (and inside a CPU graph), so the native call ends within one micro-batch or token.
 * A user's stop (the signal) does not wait for that: GPU backends cannot stop a graph midway (llama.cpp checks its
 * abort callback on the CPU backend only), and on a slow device one prompt micro-batch can take a few hundred ms, so
 * `result` settles at once and the caller serialises the next call on `finished`. Tokens the loop delivers after
 * the abort reach `finished` only.
 */
export function runNativeGeneration(bindings: TensorwiseBindings, addonContext: object, options: NativeGenerationOptions): NativeGenerationRun {
    const {signal, onTokens, onPromptProgress, prompt, ...request} = options;
    const tokens: Token[] = [];
    const times: number[] = [];
    let settleEarly: ((result: NativeGenerationResult) => void) | null = null;
    const early = new Promise<NativeGenerationResult>((resolve) => settleEarly = resolve);
    const finished = new Promise<NativeGenerationResult>((resolve, reject) => {
        let handle: {abort(): void} | null = null;
        let stopped = false;
        let lastPromptDecoded = 0;
        const stop = () => {
            stopped = true;
            handle?.abort();
        };
        const abortedByUser = () => {
            stop();
            // what the caller has seen: the prompt tokens reported decoded, then every delivered token but the last
            // (a sampled token is decoded only when the next one is generated)
            const decodedTokens = request.startPosition + lastPromptDecoded + Math.max(0, tokens.length - 1);
            settleEarly?.({tokens: [...tokens], times: [...times], end: {reason: "abort", decodedTokens, error: null}});
        };
        try {
            handle = bindings.tensorwiseGenerate(addonContext, {...request, prompt: Uint32Array.from(prompt)}, (batch, batchTimes, end, promptDecoded) => {
                // each delivery carries the prompt tokens decoded so far (the last micro-batch's with the first token)
                if (promptDecoded !== lastPromptDecoded) {
                    lastPromptDecoded = promptDecoded;
                    if (!stopped) onPromptProgress?.(promptDecoded);
                }
                if (batch.length > 0) {
                    const newTokens = Array.from(batch) as Token[];
                    const newTimes = Array.from(batchTimes);
                    tokens.push(...newTokens);
                    times.push(...newTimes);
                    if (!stopped && onTokens?.(newTokens, newTimes) === false) stop();
                }
                if (end != null) {
                    signal?.removeEventListener("abort", abortedByUser);
                    if (end.reason === "error") reject(new Error(end.error ?? "native generation failed"));
                    else resolve({tokens, times, end});
                }
            });
        } catch (error) {
            reject(error);
            return;
        }
        if (signal?.aborted) abortedByUser();
        else signal?.addEventListener("abort", abortedByUser, {once: true});
    });
    return {result: Promise.race([early, finished]), finished};
}
