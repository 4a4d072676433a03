import type {Prediction, PromptProgress} from "../../../electron/contract/ipc";
import type {LiveStream} from "../stores/chatStore";

/** A time left shorter than this is not shown: it would be over before it was read. */
export const TIME_LEFT_SHOWN_FROM_MS = 1000;

/**
 * The plan's predicted prompt speed, tokens per second: its typical prompt over its predicted time to the first token
 * (which also holds one decode step, small beside a prompt worth waiting for). `null` without a usable prediction.
 */
export function predictedPromptTokensPerSecond(prediction: Pick<Prediction, "ttftMs" | "promptTokens"> | null | undefined): number | null {
    const ttftMs = prediction?.ttftMs;
    if (prediction == null || ttftMs == null || !Number.isFinite(ttftMs) || ttftMs <= 0 || !Number.isFinite(prediction.promptTokens) ||
        prediction.promptTokens <= 0)
        return null;
    return prediction.promptTokens / (ttftMs / 1000);
}

export type PromptTimeLeftOptions = {
    /** How long ago `progress` arrived, ms (the estimate keeps moving between the engine's progress events). Defaults to 0. */
    sinceProgressMs?: number;
    /** Used until a token of this prompt has been measured (see {@link predictedPromptTokensPerSecond}). */
    predictedTokensPerSecond?: number | null;
};

/**
 * Time left to process the prompt, ms: the tokens left at the rate measured on this prompt so far (tokens decoded, not
 * counting those reused from the KV cache, over the engine's time since the prompt started), or, before any was
 * measured, at the plan's predicted rate less the time already spent. Never negative; `null` when unknown (no tokens
 * measured and no prediction, or values that are not numbers).
 */
export function promptTimeLeftMs(progress: PromptProgress, options: PromptTimeLeftOptions = {}): number | null {
    const {evaluated, total, reused, elapsedMs} = progress;
    const since = options.sinceProgressMs ?? 0;
    if (![evaluated, total, reused, elapsedMs, since].every(Number.isFinite) || elapsedMs < 0)
        return null;
    const left = Math.max(0, total - evaluated);
    const decoded = evaluated - reused;
    const sinceProgress = Math.max(0, since);
    if (decoded > 0 && elapsedMs > 0)
        return Math.max(0, left * elapsedMs / decoded - sinceProgress);
    const predicted = options.predictedTokensPerSecond;
    if (predicted == null || !Number.isFinite(predicted) || predicted <= 0)
        return null;
    return Math.max(0, left / predicted * 1000 - elapsedMs - sinceProgress);
}

/** "about 12 s left", "about 2 min 5 s left", "about 1 h 3 min left"; `null` (show nothing) when unknown or under {@link TIME_LEFT_SHOWN_FROM_MS}. */
export function formatTimeLeft(ms: number | null): string | null {
    if (ms == null || !Number.isFinite(ms) || ms < TIME_LEFT_SHOWN_FROM_MS)
        return null;
    const seconds = Math.round(ms / 1000);
    if (seconds < 60)
        return `about ${seconds} s left`;
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60)
        return `about ${minutes} min${seconds % 60 > 0 ? ` ${seconds % 60} s` : ""} left`;
    return `about ${Math.floor(minutes / 60)} h${minutes % 60 > 0 ? ` ${minutes % 60} min` : ""} left`;
}

/** {@link promptTimeLeftMs} of a streaming reply at `now` (`performance.now()`); `null` when it is not reading its prompt. */
export function streamPromptTimeLeftMs(stream: Pick<LiveStream, "prompt" | "promptAt" | "tokens" | "text">, now: number,
    predictedTokensPerSecond: number | null): number | null {
    if (stream.prompt == null || stream.tokens > 0 || stream.text !== "")
        return null;
    return promptTimeLeftMs(stream.prompt, {sinceProgressMs: stream.promptAt == null ? 0 : now - stream.promptAt, predictedTokensPerSecond});
}

/**
 * How long the user has waited for a reply at `now` (`performance.now()`), ms: since its request was sent
 * (`LiveStream.sentAt`), so the figure counts up from the Send on, between the engine's events too. The engine's own
 * prompt clock (`PromptProgress.elapsedMs`) is 0 in its first event, sent before the first chunk of the prompt is
 * read, and stays there until the next one: shown as is, a long prompt read "0.0 ms" for seconds. The reply and the
 * sidebar both show this one figure. (A wait on the window's clock, not a speed: no rate is derived from it.)
 */
export function streamWaitedMs(stream: Pick<LiveStream, "sentAt">, now: number): number {
    return Math.max(0, now - stream.sentAt);
}
