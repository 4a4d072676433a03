/**
 * What it costs to bring a conversation's KV cache back into a sequence, two ways: swap (its state was saved when it
 * left the sequence and is loaded back) or recompute (its tokens are evaluated again, a prefill). The cheaper one
 * is chosen when the conversation leaves its sequence, as the memory-optimisation decider of "AdaptiveLLM: Efficient
 * LLM inference based on swapping and re-computation" does (its §3.4, Algorithm 1): the swap-out has to happen
 * then or never.
 */

/** One fitted line `ms = fixedMs + amount × msPer`. */
export type LinearCost = {
    /** Time paid once per operation (file create/open, graph setup of the first micro-batch). */
    readonly fixedMs: number;
    /** Time per byte (swap) or per token (recompute). */
    readonly msPer: number;
};

/** Measured on this machine, for this context (see calibrateKvCost.ts), or set by hand to force a decision. */
export type KvCostModel = {
    /** Bytes of a sequence state file holding `tokens` tokens: `headerBytes + tokens × bytesPerToken`. */
    readonly stateBytes: {readonly headerBytes: number; readonly bytesPerToken: number};
    /** Saving a sequence state (device → file): the "swap out". */
    readonly save: LinearCost;
    /** Loading it back (file → device): the "swap in". */
    readonly load: LinearCost;
    /** Evaluating `tokens` prompt tokens on an empty sequence of this context. */
    readonly prefill: LinearCost;
    /** Where the numbers came from ("measured …" or "given"), for the decision log. */
    readonly source: string;
};

export type KvRestorePath = "swap" | "recompute";

/** The prediction behind one decision, ms. */
export type KvRestorePrediction = {
    readonly tokens: number;
    readonly stateBytes: number;
    /** Swap out + swap in. source: AdaptiveLLM §3.3, eq. 2: SwapOut = KV ÷ DtoH bandwidth, SwapIn = KV ÷ HtoD bandwidth. */
    readonly swapOutMs: number;
    readonly swapInMs: number;
    readonly swapMs: number;
    /** A prefill of the conversation's tokens. source: AdaptiveLLM §3.2: recomputation costs one prefill of the request. */
    readonly recomputeMs: number;
    readonly path: KvRestorePath;
};

function lineMs(cost: LinearCost, amount: number): number {
    return cost.fixedMs + amount * cost.msPer;
}

/** Predicts both ways for a conversation of `tokens` tokens and picks the cheaper (swap on a tie: it is exact). */
export function predictKvRestore(model: KvCostModel, tokens: number): KvRestorePrediction {
    const stateBytes = Math.round(model.stateBytes.headerBytes + tokens * model.stateBytes.bytesPerToken);
    const swapOutMs = lineMs(model.save, stateBytes);
    const swapInMs = lineMs(model.load, stateBytes);
    const swapMs = swapOutMs + swapInMs;
    const recomputeMs = lineMs(model.prefill, tokens);
    return {tokens, stateBytes, swapOutMs, swapInMs, swapMs, recomputeMs, path: swapMs <= recomputeMs ? "swap" : "recompute"};
}

/**
 * A line through measured `(amount, cost)` points by least squares, kept physical: when the points show no growth
 * with the amount (noise on a busy machine), the cost is their mean, paid once; when the fixed part comes out
 * negative, the line goes through the origin instead (never a negative time for small amounts).
 */
export function fitLinearCost(points: readonly {amount: number; cost: number}[]): LinearCost {
    if (points.length === 0)
        throw new Error("fitLinearCost needs at least one measured point.");
    const n = points.length;
    const meanX = points.reduce((sum, p) => sum + p.amount, 0) / n;
    const meanY = points.reduce((sum, p) => sum + p.cost, 0) / n;
    const sxx = points.reduce((sum, p) => sum + (p.amount - meanX) ** 2, 0);
    const sxy = points.reduce((sum, p) => sum + (p.amount - meanX) * (p.cost - meanY), 0);
    const slope = sxx > 0 ? sxy / sxx : 0;
    if (slope <= 0)
        return {fixedMs: Math.max(0, meanY), msPer: 0};
    const intercept = meanY - slope * meanX;
    if (intercept >= 0)
        return {fixedMs: intercept, msPer: slope};
    // through the origin: cost = amount × Σxy / Σxx
    const sumXX = points.reduce((sum, p) => sum + p.amount * p.amount, 0);
    const sumXY = points.reduce((sum, p) => sum + p.amount * p.cost, 0);
    return {fixedMs: 0, msPer: sumXY / sumXX};
}
