/**
 * Which waiting request gets the next free sequence. Pluggable: the scheduler asks a policy for one index at a time.
 */

/** What a policy may look at for one waiting request. */
export type WaitingRequest = {
    /** When the request arrived (ms, the scheduler's clock). */
    readonly arrivalMs: number;
    /** Its prompt length in tokens, chat template included. */
    readonly promptTokens: number;
    /** Tokens already generated for it (0 until it ran; kept when it is resumed). */
    readonly generatedTokens: number;
};

export type SchedulingPolicy = {
    readonly name: SchedulingPolicyName;
    /** The index in `waiting` (never empty) of the request to admit now. */
    pick(waiting: readonly WaitingRequest[], nowMs: number): number;
};

export const SCHEDULING_POLICY_NAMES = ["fair", "fifo"] as const;
export type SchedulingPolicyName = typeof SCHEDULING_POLICY_NAMES[number];

/** First come, first served: the earliest arrival. */
export const fifoPolicy: SchedulingPolicy = {
    name: "fifo",
    pick: (waiting) => indexOfBest(waiting, () => 0)
};

/**
 * The fairness priority of "AdaptiveLLM: Efficient LLM inference based on swapping and re-computation" (§3.5):
 * priority = time since arrival ÷ sequence length (prompt + generated tokens), highest first. A short request's
 * priority grows fast, so it is served soon; a long one's keeps growing while it waits, so it never starves.
 * Ties (equal priority, e.g. two requests arriving in the same millisecond) go to the earlier arrival.
 */
export const fairPolicy: SchedulingPolicy = {
    name: "fair",
    pick: (waiting, nowMs) => indexOfBest(waiting, (request) => fairnessPriority(request, nowMs))
};

/** `(now − arrival) ÷ (prompt + generated tokens)`: ms waited per token of sequence. */
export function fairnessPriority(request: WaitingRequest, nowMs: number): number {
    return Math.max(0, nowMs - request.arrivalMs) / Math.max(1, request.promptTokens + request.generatedTokens);
}

export function schedulingPolicy(name: SchedulingPolicyName): SchedulingPolicy {
    return name === "fifo" ? fifoPolicy : fairPolicy;
}

/** The index of the highest `score`; equal scores go to the earlier arrival, then the earlier position. */
function indexOfBest(waiting: readonly WaitingRequest[], score: (request: WaitingRequest) => number): number {
    let best = 0;
    let bestScore = score(waiting[0]!);
    for (let index = 1; index < waiting.length; index++) {
        const request = waiting[index]!;
        const value = score(request);
        if (value > bestScore || (value === bestScore && request.arrivalMs < waiting[best]!.arrivalMs)) {
            best = index;
            bestScore = value;
        }
    }
    return best;
}
