import type {LlamaContextSequence, Token} from "node-llama-cpp";
import type {PromptProgress} from "../../contract/chat.js";

/** Smallest chunk (tokens): small enough that a slow machine (tens of ms per prompt token) still stops quickly. */
export const MIN_PROMPT_CHUNK_TOKENS = 8;
/** First chunk (tokens), before the speed of this machine and placement is known. */
export const FIRST_PROMPT_CHUNK_TOKENS = 16;
/** Target time of one chunk: an abort waits for at most the chunk in flight, so this bounds Stop's latency. */
export const PROMPT_CHUNK_TARGET_MS = 120;

export type {PromptProgress};

/**
 * Evaluates `tokens` into `sequence` (all but the last, which the generation decodes itself), reusing the prefix the
 * sequence already holds, in chunks checked against `signal` between them. One llama_decode of a long prompt cannot
 * be interrupted; chunks can. Chunks start at {@link FIRST_PROMPT_CHUNK_TOKENS} and grow towards the context's batch
 * size while one stays under {@link PROMPT_CHUNK_TARGET_MS}, so a fast machine reaches full micro-batches at once and
 * a slow one still stops within about one target. Returns how many tokens were reused, or `null` when the prompt does
 * not fit the context (node-llama-cpp's chat then shifts the context itself).
 */
export async function evaluatePromptInChunks(sequence: LlamaContextSequence, tokens: readonly Token[], options: {
    signal?: AbortSignal;
    onProgress?: (progress: PromptProgress) => void;
    started?: number;
}): Promise<{reused: number} | null> {
    const {signal, onProgress, started = performance.now()} = options;
    const target = tokens.length - 1;
    if (target <= 0 || tokens.length >= sequence.context.contextSize)
        return null;
    const {firstDifferentIndex} = sequence.compareContextTokens(tokens as Token[]);
    const reused = Math.min(firstDifferentIndex, target);
    if (sequence.nextTokenIndex > reused)
        await sequence.eraseContextTokenRanges([{start: reused, end: sequence.nextTokenIndex}]);
    const batchSize = sequence.context.batchSize;
    let chunk = Math.min(FIRST_PROMPT_CHUNK_TOKENS, batchSize);
    let at = reused;
    onProgress?.({evaluated: at, total: tokens.length, reused, elapsedMs: performance.now() - started});
    while (at < target) {
        signal?.throwIfAborted();
        const piece = tokens.slice(at, Math.min(target, at + chunk)) as Token[];
        const before = performance.now();
        await sequence.evaluateWithoutGeneratingNewTokens(piece);
        const msPerToken = (performance.now() - before) / piece.length;
        at += piece.length;
        onProgress?.({evaluated: at, total: tokens.length, reused, elapsedMs: performance.now() - started});
        chunk = Math.max(MIN_PROMPT_CHUNK_TOKENS, Math.min(batchSize, Math.floor(PROMPT_CHUNK_TARGET_MS / Math.max(msPerToken, 1e-3))));
    }
    signal?.throwIfAborted();
    return {reused};
}
