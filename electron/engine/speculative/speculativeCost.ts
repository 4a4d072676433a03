/**
 * What speculative decoding does to the time per token, from the cost model's prices: each step the model verifies
 * the last token and a draft of k tokens in one batch (ops where their weights live: a batch under 32 tokens is not
 * offloaded), keeping every draft token up to the first it disagrees with, and the draft costs what its speculator
 * costs (n-gram lookup: nothing to speak of; a draft model: k steps of its own, and one batch of k + 1 to follow the
 * model's tokens). With each draft token accepted with probability α given the ones before it, a step yields
 * (1 − α^(k+1)) / (1 − α) tokens on average (Leviathan et al., "Fast Inference from Transformers via Speculative
 * Decoding", §3). A speculator that drafts at only a share c of the steps (n-gram lookup finds nothing to continue
 * elsewhere) runs the rest as plain steps: per token, (c·(verify + draft) + (1 − c)·plain) / (c·yield + 1 − c).
 */
import type {ResolvedSettings} from "../../contract/settings.js";
import type {SpeculativeKind} from "../../contract/speculative.js";
import {costContext, mm, predict, type CostInputs} from "../planner/costModel.js";
import type {ResolvedPlacement} from "../planner/types.js";

/** Expected tokens a step yields with a draft of `k` tokens each accepted with probability `alpha` after the ones before it. */
export function tokensPerStep(alpha: number, k: number): number {
    const a = Math.min(1, Math.max(0, alpha));
    if (k <= 0) return 1;
    return a >= 1 ? k + 1 : (1 - a ** (k + 1)) / (1 - a);
}

/** A loaded plan as the cost model prices it: its inputs, placement and settings. */
export type PricedPlan = {readonly cost: CostInputs; readonly resolved: ResolvedPlacement; readonly settings: ResolvedSettings};

/**
 * One step of `tokens` tokens against one of a single token, in the cost model's terms: the prompt path prices a batch
 * of several tokens (each op at that batch where its weight lives, attention over them, every switch copying their
 * activations), and the ratio of its batch to its single token scales the decode step's own price. A verification
 * also needs the logits of every token it checks, where a prompt needs only the last one's (costModel.ts prefillOpUs
 * prices `output` at batch 1): the output matmul at `tokens` rows is added.
 */
export function stepCostRatio(plan: PricedPlan, tokens: number): number {
    if (tokens <= 1) return 1;
    const output = plan.cost.model.tensors.find((t) => t.role === "output" && t.op != null);
    const logitsMs = (b: number): number => {
        if (output == null) return 0;
        const cx = costContext(plan.cost, plan.settings, {promptTokens: b, genTokens: 1});
        return mm(cx, output, plan.resolved.onGpu.has(output.name), b) / 1000;
    };
    const step = (b: number) => predict(costContext(plan.cost, plan.settings, {promptTokens: b, genTokens: 1}), plan.resolved).ttftMs +
        logitsMs(b) - logitsMs(1);
    // a batch never costs less than one of its tokens: a profile's microsecond-sized points can say otherwise (noise
    // between batch 1 and 8 of a 40 MiB model's matmuls priced 5 tokens at 0.8× one)
    return Math.max(1, step(tokens) / Math.max(step(1), 1e-9));
}

/** The cost model's time per token of a plan without speculation, ms. */
export function plainTpotMs(plan: PricedPlan): number {
    return predict(costContext(plan.cost, plan.settings, {promptTokens: 1, genTokens: 2}), plan.resolved).tpotMs;
}

/** What one speculation is predicted to do on a plan. */
export type SpeculativePrice = {
    readonly kind: SpeculativeKind;
    /** Tokens drafted per step. */
    readonly k: number;
    readonly alpha: number;
    /** Share of the steps with a draft. */
    readonly coverage: number;
    readonly tokensPerStep: number;
    /** A verification of k + 1 tokens, ms. */
    readonly verifyMs: number;
    /** Drafting k tokens (and the draft following the model's step), ms. */
    readonly draftMs: number;
    /** Per token with speculation, and without it, ms. */
    readonly tpotMs: number;
    readonly plainTpotMs: number;
};

/**
 * Prices one speculation on `target`: n-gram lookup (its draft costs nothing the cost model could see), a draft
 * model placed as `draft` says (its k single steps and its batch of k + 1), or an MTP head's steps (`mtpStepMs`).
 */
export function priceSpeculative(target: PricedPlan, options: {
    kind: SpeculativeKind; k: number; alpha: number; coverage?: number; draft?: PricedPlan; mtpStepMs?: number;
}): SpeculativePrice {
    const plain = plainTpotMs(target);
    const verifyMs = plain * stepCostRatio(target, options.k + 1);
    let draftMs = 0;
    if (options.draft != null) {
        const draftPlain = plainTpotMs(options.draft);
        draftMs = options.k * draftPlain + draftPlain * stepCostRatio(options.draft, options.k + 1);
    }
    // an MTP head drafts k tokens one step at a time and follows the model's verified batch once
    if (options.mtpStepMs != null) draftMs = (options.k + 1) * options.mtpStepMs;
    const perStep = tokensPerStep(options.alpha, options.k);
    const c = Math.min(1, Math.max(0, options.coverage ?? 1));
    return {kind: options.kind, k: options.k, alpha: options.alpha, coverage: c, tokensPerStep: perStep, verifyMs, draftMs,
        tpotMs: (c * (verifyMs + draftMs) + (1 - c) * plain) / (c * perStep + 1 - c), plainTpotMs: plain};
}
