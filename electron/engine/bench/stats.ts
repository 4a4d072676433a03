/** Small statistics for benchmark samples. */

/** Median of a non-empty list (mean of the middle two for even lengths). Throws on an empty list. */
export function median(values: readonly number[]): number {
    if (values.length === 0) throw new Error("median of an empty list");
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median, min, max and spread ((max − min) / median, %) of timing samples. */
export function summariseSamples(samplesMs: readonly number[]): {medianMs: number; minMs: number; maxMs: number; spreadPct: number} {
    const medianMs = median(samplesMs);
    const minMs = Math.min(...samplesMs);
    const maxMs = Math.max(...samplesMs);
    return {medianMs, minMs, maxMs, spreadPct: medianMs > 0 ? (maxMs - minMs) / medianMs * 100 : 0};
}

/** |predicted − measured| / measured, in percent. */
export function absolutePercentError(predicted: number, measured: number): number {
    return Math.abs(predicted - measured) / measured * 100;
}
