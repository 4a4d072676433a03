/** Why a plan is what it is, in sentences a user reads where the plan is shown (the app's Offload screen, the CLI's `plan`). */

/** One sentence per planner decision. */
export type PlanExplanation = {
    /** Where the weights went and why, e.g. why everything stays on the CPU. */
    placement: string;
    /** The budget in MiB and where it came from (what "Auto" resolved to). */
    budget: string;
    /** What llama.cpp's `-ngl N` of this plan counts (the output layer counts as one). */
    gpuLayers: string;
    /**
     * The llama.cpp settings the plan chose (GPU use, op and KV offload, flash attention, KV cache type, micro-batch,
     * pinned or mapped host memory, threads) and, for each that decided, how much slower the best plan without it was.
     */
    settings: string;
    /** Where the timings came from: this machine's profile, measured now or reused from the cache. */
    profile: string;
    /** `true` when the machine profile was read from the cache instead of measured for this plan. */
    profileReused: boolean;
    /** Speculative decoding: what was chosen (or declined) and why, where the plan was asked to consider it. */
    speculative?: string;
    /** How sure the predictions are: their ranges, from what, and a correction by this model's own measured replies. */
    ranges?: string;
};
