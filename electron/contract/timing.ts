/** Speed of one generation, from engine-side timestamps (never from UI updates). */
export type GenerationTiming = {
    promptTokens: number;
    generatedTokens: number;
    /** Time to first token: from the request to the first generated token (prompt processing + one decode step). */
    ttftMs: number;
    /** Time per output token after the first (mean decode step), or `null` when fewer than two tokens came. */
    tpotMs: number | null;
    totalMs: number;
    /**
     * The planner's prediction for this reply's own prompt and generated token counts, from the cost model of the plan
     * the model was loaded with; absent when the model was loaded without a plan (a plain layer split).
     */
    predicted?: {ttftMs: number; tpotMs: number};
};
