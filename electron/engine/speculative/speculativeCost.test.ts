import {describe, expect, it} from "vitest";
import {planStrategy} from "../planner/planStrategy.js";
import type {StrategyInputs} from "../planner/strategies/StrategyResult.js";
import {fakeModel, fakeProfile} from "../planner/testing/fakeProfile.js";
import {handSettings} from "../planner/testing/handModel.js";
import {chooseSpeculative, MIN_GAIN_SHARE, type SpeculativeCandidate} from "./chooseSpeculative.js";
import {plainTpotMs, priceSpeculative, stepCostRatio, tokensPerStep, type PricedPlan} from "./speculativeCost.js";

const MiB = 1024 * 1024;

/** A plan of a 4-layer model half on a fast GPU: the CPU half's weights are read once per step, whatever its batch. */
async function planOnce(): Promise<PricedPlan> {
    const model = fakeModel(4);
    const inputs: StrategyInputs = {
        cost: {model, profile: fakeProfile(model), gpuDevice: "CUDA0"}, gpuBufferType: "CUDA0", budgetBytes: 20 * MiB,
        settings: handSettings({useMmap: false, batchSize: 512, contextSize: 4096, threads: 2}), workload: {promptTokens: 512, genTokens: 128}
    };
    const plan = await planStrategy("optimal", inputs);
    return {cost: inputs.cost, resolved: plan.resolved, settings: plan.settings};
}

/** Planned once: every test prices the same plan. */
let planned: Promise<PricedPlan> | undefined;
const pricedPlan = (): Promise<PricedPlan> => planned ??= planOnce();

const measured = (alpha: number, coverage = 1): SpeculativeCandidate["acceptance"] => ({alpha, coverage, source: "measured", drafted: 400});

describe("the tokens a speculative step yields (Leviathan et al., §3)", () => {
    it("is one with nothing accepted, k + 1 with everything, the geometric sum between, and clamps α", () => {
        expect(tokensPerStep(0, 4)).toBe(1);
        expect(tokensPerStep(1, 4)).toBe(5);
        expect(tokensPerStep(0.5, 3)).toBeCloseTo(1 + 0.5 + 0.25 + 0.125, 12);
        expect(tokensPerStep(0.5, 0)).toBe(1);
        expect(tokensPerStep(-3, 4)).toBe(1);
        expect(tokensPerStep(7, 2)).toBe(3);
    });
});

describe("a speculation's price on a plan", () => {
    it("a batch costs more than one token and less than that many tokens where weights sit on the CPU", async () => {
        const plan = await pricedPlan();
        expect(stepCostRatio(plan, 1)).toBe(1);
        const five = stepCostRatio(plan, 5);
        expect(five).toBeGreaterThan(1);
        expect(five).toBeLessThan(5);
        expect(stepCostRatio(plan, 9)).toBeGreaterThanOrEqual(five);
    });

    it("no draft at any step costs exactly a plain step; a draft at every step that is always right divides the verification", async () => {
        const plan = await pricedPlan();
        const plain = plainTpotMs(plan);
        const never = priceSpeculative(plan, {kind: "ngram", k: 4, alpha: 0.9, coverage: 0});
        expect(never.tpotMs).toBeCloseTo(plain, 9);
        const always = priceSpeculative(plan, {kind: "ngram", k: 4, alpha: 1, coverage: 1});
        expect(always.tpotMs).toBeCloseTo(always.verifyMs / 5, 9);
        expect(always.tpotMs).toBeLessThan(plain);
        // a draft never accepted costs a verification per token: slower than plain
        expect(priceSpeculative(plan, {kind: "ngram", k: 4, alpha: 0}).tpotMs).toBeGreaterThan(plain);
    });

    it("a draft model is charged its own k steps and its batch of k + 1", async () => {
        const plan = await pricedPlan();
        const withDraft = priceSpeculative(plan, {kind: "draft", k: 3, alpha: 0.5, draft: plan});
        expect(withDraft.draftMs).toBeCloseTo(3 * plainTpotMs(plan) + plainTpotMs(plan) * stepCostRatio(plan, 4), 9);
        expect(withDraft.tpotMs).toBeGreaterThan(priceSpeculative(plan, {kind: "ngram", k: 3, alpha: 0.5}).tpotMs);
    });
});

describe("the planner's choice of speculative decoding", () => {
    it("declines the model's own weights as its draft: each draft token costs a whole step of the model", async () => {
        const plan = await pricedPlan();
        // even at α = 0.9, a draft as large as the model pays its k steps for ≤ k + 1 tokens
        const own: SpeculativeCandidate = {kind: "draft", acceptance: measured(0.9), draft: {plan, load: {modelPath: "/same.gguf"}}};
        const decision = chooseSpeculative(plan, "auto", [own]);
        expect(decision.load).toBeNull();
        expect(decision.best!.tpotMs).toBeGreaterThan(decision.best!.plainTpotMs * (1 - MIN_GAIN_SHARE));
        expect(decision.sentence).toMatch(/^No speculative decoding: .*the draft model would be .*(slower|only)/);
        // asked for by name it runs anyway, and says it is not predicted to win
        const named = chooseSpeculative(plan, "draft", [own]);
        expect(named.load).toMatchObject({kind: "draft", draft: {modelPath: "/same.gguf"}});
        expect(named.sentence).toMatch(/predicted \d+% slower per token .*asked for by name, so it runs anyway/);
    });

    it("chooses n-gram lookup that is measured to be right, at the draft length it prices fastest, and says how much faster", async () => {
        const plan = await pricedPlan();
        const decision = chooseSpeculative(plan, "auto", [{kind: "ngram", acceptance: measured(0.8, 0.9)}], {ngramSizeN: 3});
        expect(decision.load).toMatchObject({kind: "ngram", ngramSizeN: 3});
        expect(decision.chosen!.tpotMs).toBeLessThan(decision.chosen!.plainTpotMs * (1 - MIN_GAIN_SHARE));
        for (const k of [1, 2, 3, 4, 6, 8])
            expect(priceSpeculative(plan, {kind: "ngram", k, alpha: 0.8, coverage: 0.9}).tpotMs).toBeGreaterThanOrEqual(decision.chosen!.tpotMs - 1e-9);
        expect(decision.sentence).toMatch(/measured on your replies \(400 draft tokens\) 0\.80 with a draft at 90% of the steps.*faster per token/);
        // a draft length asked for is the one priced
        expect(chooseSpeculative(plan, "auto", [{kind: "ngram", acceptance: measured(0.8, 0.9)}], {nMax: 2}).load).toMatchObject({nMax: 2});
    });

    it("off is off, and a kind the model cannot run is not available", async () => {
        const plan = await pricedPlan();
        expect(chooseSpeculative(plan, "off", [{kind: "ngram", acceptance: measured(1)}])).toMatchObject({load: null, sentence: "No speculative decoding (turned off)."});
        expect(chooseSpeculative(plan, "mtp", [{kind: "ngram", acceptance: measured(1)}])).toMatchObject({load: null, sentence: "No speculative decoding: mtp is not available for this model."});
    });
});
