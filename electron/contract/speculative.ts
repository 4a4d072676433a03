/**
 * Speculative decoding: a cheap predictor proposes the next tokens and the model checks them in one batch, so a step
 * that reads the CPU-side weights once may yield several tokens. The kinds a user chooses, llama.cpp's names for the
 * speculators behind them (common_speculative_type in llama.cpp's common/common.h), and what a reply reports.
 */

import {LIMITS} from "./limits.js";

/** What the user chooses: the planner's choice, none, or one kind (`--spec` on the command line). */
export const SPECULATIVE_CHOICES = ["auto", "off", "ngram", "draft", "mtp"] as const;
export type SpeculativeChoice = (typeof SPECULATIVE_CHOICES)[number];

export function isSpeculativeChoice(value: unknown): value is SpeculativeChoice {
    return (SPECULATIVE_CHOICES as readonly unknown[]).includes(value);
}

/** A kind of speculation that runs. */
export type SpeculativeKind = Exclude<SpeculativeChoice, "auto" | "off">;
export const SPECULATIVE_KINDS = ["ngram", "draft", "mtp"] as const satisfies readonly SpeculativeKind[];

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
export const DRAFT_MAX_LIMIT = LIMITS.draftMax.max;

/** What speculation did in one reply. */
export type SpeculativeStats = {
    readonly kind: SpeculativeKind;
    /** Steps of the model that checked a draft. */
    readonly steps: number;
    /** Of those, the steps that kept the whole draft. */
    readonly fullyAccepted: number;
    /** Tokens proposed. */
    readonly drafted: number;
    /** Tokens of the drafts the model agreed with (each one a token without a step of its own). */
    readonly accepted: number;
    /** Why it did not run (from the start, or from some point on), when it did not. */
    readonly note: string | null;
};

/**
 * What a load asks for (`--spec`, `--model-draft`, `--spec-draft-n-max`, the Offload screen's Speculative choice): the
 * choice, a draft model's file (kind `draft`), the draft length (omitted: the planner's), n-gram lookup's sizes
 * (omitted: llama.cpp's).
 */
export type SpeculativeRequest = {
    readonly choice: SpeculativeChoice;
    readonly draftPath?: string;
    readonly nMax?: number;
    readonly ngramSizeN?: number;
    readonly ngramSizeM?: number;
};

/** What a loaded model speculates with, and why (the plan's sentence). */
export type SpeculativeState = {
    /** `null`: no speculation. */
    readonly kind: SpeculativeKind | null;
    readonly nMax: number | null;
    /** The draft model's file name (kind `draft`). */
    readonly draftFile: string | null;
    readonly sentence: string;
    /** The planner's prediction, where it priced one: α (and whether it was measured), ms per token with and without. */
    readonly predicted: {readonly alpha: number; readonly alphaMeasured: boolean; readonly tpotMs: number; readonly plainTpotMs: number} | null;
};

/**
 * α, the chance a draft token is accepted given the ones before it were, from counts: a step that kept fewer tokens
 * than it drafted ended at a rejection, one that kept its whole draft did not reach one, so α̂ = accepted / (accepted
 * + rejections) (the maximum-likelihood estimate of a geometric run's success probability with censored runs).
 * `null` before any draft token was judged.
 */
export function acceptanceRate(counts: {readonly accepted: number; readonly rejections: number}): number | null {
    const judged = counts.accepted + counts.rejections;
    return judged > 0 ? counts.accepted / judged : null;
}

/** The rejections in a reply's counts: the steps that did not keep their whole draft. */
export function rejectionsOf(stats: Pick<SpeculativeStats, "steps" | "fullyAccepted">): number {
    return Math.max(0, stats.steps - stats.fullyAccepted);
}
