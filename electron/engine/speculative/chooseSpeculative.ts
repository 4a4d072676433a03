/**
 * The planner's choice of speculative decoding for a plan: each kind the model can run (n-gram lookup always; a draft
 * model when one is given; the model's MTP head when it has one) at each draft length, priced by speculativeCost.ts
 * with the α measured on this pair (acceptance.ts) or assumed, against no speculation. Speculation is chosen only
 * where it is predicted faster by more than the cost model's resolution, and the decision says why in one sentence.
 */
import type {SpeculativeChoice, SpeculativeKind} from "../../contract/speculative.js";
import type {SpeculativeLoad} from "../runtime/PlacedModel.js";
import type {Acceptance} from "./acceptance.js";
import {priceSpeculative, type PricedPlan, type SpeculativePrice} from "./speculativeCost.js";

/** Draft lengths the choice tries (llama.cpp's `--spec-draft-n-max`). */
export const DRAFT_LENGTHS = [1, 2, 3, 4, 6, 8] as const;

/**
 * A speculation must be predicted faster than none by this share to be chosen: the cost model's predictions of
 * nearby plans differ by a few percent on a quiet machine (optimalStrategy.ts NEAR_TIE_SHARE is 2%), and a
 * speculation that does not win costs a draft's memory for nothing.
 */
export const MIN_GAIN_SHARE = 0.03;

/** A kind the model can run, with its α and (for a draft model) its priced plan and load. */
export type SpeculativeCandidate = {
    readonly kind: SpeculativeKind;
    readonly acceptance: Acceptance;
    readonly draft?: {readonly plan: PricedPlan; readonly load: NonNullable<SpeculativeLoad["draft"]>};
    /** An MTP head: one draft step, ms, and the overrides that keep its block where it was priced. */
    readonly mtp?: {readonly stepMs: number; readonly overrides: NonNullable<SpeculativeLoad["overrides"]>};
};

/** The choice: what to load (`null`: no speculation), its price, the best one declined, and why. */
export type SpeculativeDecision = {
    readonly load: SpeculativeLoad | null;
    readonly chosen: SpeculativePrice | null;
    /** The fastest speculation priced, chosen or not. */
    readonly best: SpeculativePrice | null;
    /** The α `best` was priced with, and where it came from. */
    readonly acceptance: Acceptance | null;
    readonly sentence: string;
};

const percent = (share: number): string => `${Math.round(Math.abs(share) * 100)}%`;

/** Why: the verification's cost against one token's, α and its source, and the difference it makes. */
function describe(price: SpeculativePrice, acceptance: Acceptance, chosen: boolean): string {
    const name = {ngram: "n-gram lookup", draft: "the draft model", mtp: "the model's MTP head"}[price.kind];
    const gain = 1 - price.tpotMs / price.plainTpotMs;
    const alpha = `${acceptance.source === "measured" ? `the α measured on your replies (${acceptance.drafted} draft tokens)` : "an assumed α"} ${price.alpha.toFixed(2)}` +
        (price.coverage < 1 ? ` with a draft at ${percent(price.coverage)} of the steps` : "");
    const verify = `verifying ${price.k + 1} tokens costs ${(price.verifyMs / price.plainTpotMs).toFixed(1)}× one token` +
        (price.draftMs > 0 ? ` and drafting ${price.k} costs ${(price.draftMs / price.plainTpotMs).toFixed(1)}×` : "");
    return chosen
        ? `Speculative decoding with ${name}, ${price.k} tokens a step: on this machine ${verify}; at ${alpha} a step yields ` +
          `${price.tokensPerStep.toFixed(2)} tokens, so it is predicted ${percent(gain)} ${gain >= 0 ? "faster" : "slower"} per token ` +
          `(${price.tpotMs.toFixed(1)} against ${price.plainTpotMs.toFixed(1)} ms).`
        : `No speculative decoding: on this machine ${verify}; at ${alpha} ${name} would be ${gain > 0 ? `only ${percent(gain)} faster` : `${percent(gain)} slower`} ` +
          `per token (${price.tpotMs.toFixed(1)} against ${price.plainTpotMs.toFixed(1)} ms).`;
}

/**
 * Chooses for `choice`: `"off"` none; `"auto"` the fastest candidate and length if it wins by {@link MIN_GAIN_SHARE};
 * a kind, that kind (at `nMax`, else its fastest length) even where it is predicted slower, as asked, said so.
 */
export function chooseSpeculative(target: PricedPlan, choice: SpeculativeChoice, candidates: readonly SpeculativeCandidate[],
    options: {nMax?: number; ngramSizeN?: number; ngramSizeM?: number} = {}): SpeculativeDecision {
    if (choice === "off") return {load: null, chosen: null, best: null, acceptance: null, sentence: "No speculative decoding (turned off)."};
    const usable = choice === "auto" ? candidates : candidates.filter((c) => c.kind === choice);
    if (usable.length === 0)
        return {load: null, chosen: null, best: null, acceptance: null, sentence: `No speculative decoding: ${choice === "auto" ? "nothing to speculate with" : `${choice} is not available for this model`}.`};
    const lengths = options.nMax != null ? [options.nMax] : DRAFT_LENGTHS;
    let best: {candidate: SpeculativeCandidate; price: SpeculativePrice} | null = null;
    for (const candidate of usable)
        for (const k of lengths) {
            const price = priceSpeculative(target, {kind: candidate.kind, k, alpha: candidate.acceptance.alpha, coverage: candidate.acceptance.coverage,
                ...(candidate.draft != null ? {draft: candidate.draft.plan} : {}), ...(candidate.mtp != null ? {mtpStepMs: candidate.mtp.stepMs} : {})});
            if (best == null || price.tpotMs < best.price.tpotMs) best = {candidate, price};
        }
    const {candidate, price} = best!;
    const wins = price.tpotMs < price.plainTpotMs * (1 - MIN_GAIN_SHARE);
    if (choice === "auto" && !wins) return {load: null, chosen: null, best: price, acceptance: candidate.acceptance, sentence: describe(price, candidate.acceptance, false)};
    const load: SpeculativeLoad = {
        kind: candidate.kind, nMax: price.k,
        ...(candidate.draft != null ? {draft: candidate.draft.load} : {}),
        ...(candidate.mtp != null ? {overrides: candidate.mtp.overrides} : {}),
        ...(candidate.kind === "ngram" && options.ngramSizeN != null ? {ngramSizeN: options.ngramSizeN} : {}),
        ...(candidate.kind === "ngram" && options.ngramSizeM != null ? {ngramSizeM: options.ngramSizeM} : {})
    };
    const sentence = describe(price, candidate.acceptance, true) + (wins ? "" : " It was asked for by name, so it runs anyway.");
    return {load, chosen: price, best: price, acceptance: candidate.acceptance, sentence};
}

