/**
 * Speculative decoding: a cheap predictor proposes the next tokens and the model checks them in one batch, so a step
 * that reads the CPU-side weights once may yield several tokens. The kinds a user chooses, llama.cpp's names for the
 * speculators behind them (common_speculative_type in llama.cpp's common/common.h), and what a reply reports.
 */

/** What the user chooses: the planner's choice, none, or one kind (`--spec` on the command line). */
export const SPECULATIVE_CHOICES = ["auto", "off", "ngram", "draft", "mtp"] as const;
export type SpeculativeChoice = (typeof SPECULATIVE_CHOICES)[number];

/** A kind of speculation that runs. */
export type SpeculativeKind = Exclude<SpeculativeChoice, "auto" | "off">;

/**
 * llama.cpp's speculator for each kind (common_speculative_type_from_name): n-gram lookup over the sequence's own
 * tokens (`ngram-map-k`: drafts from earlier continuations of the last n-gram, keys only), a separate draft model
 * (`draft-simple`), the model's own multi-token-prediction head (`draft-mtp`).
 */
export const LLAMA_SPECULATIVE_TYPE: Readonly<Record<SpeculativeKind, string>> = {
    ngram: "ngram-map-k",
    draft: "draft-simple",
    mtp: "draft-mtp"
};

/** Most tokens drafted per step (llama.cpp's `--spec-draft-n-max`); its default, 3, and the bounds accepted. */
export const DEFAULT_DRAFT_MAX = 3;
export const DRAFT_MAX_LIMIT = 64;

/** What speculation did in one reply. */
export type SpeculativeStats = {
    readonly kind: SpeculativeKind;
    /** Steps of the model that checked a draft. */
    readonly steps: number;
    /** Tokens proposed. */
    readonly drafted: number;
    /** Tokens of the drafts the model agreed with (each one a token without a step of its own). */
    readonly accepted: number;
    /** Why it did not run (from the start, or from some point on), when it did not. */
    readonly note: string | null;
};
