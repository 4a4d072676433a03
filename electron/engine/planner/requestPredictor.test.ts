import {handSettings} from "./testing/handModel.js";
import {describe, expect, it} from "vitest";
import {costContext, predict} from "./costModel.js";
import {planStrategy} from "./planStrategy.js";
import {requestPredictor} from "./requestPredictor.js";
import type {StrategyInputs} from "./strategies/StrategyResult.js";
import {fakeModel, fakeProfile} from "./testing/fakeProfile.js";

const MiB = 1024 * 1024;

describe("a reply's prediction from its own token counts", () => {
    const model = fakeModel(4);
    const inputs: StrategyInputs = {
        cost: {model, profile: fakeProfile(model), gpuDevice: "CUDA0"}, gpuBufferType: "CUDA0", budgetBytes: 40 * MiB,
        settings: handSettings({useMmap: false, batchSize: 512, contextSize: 4096, threads: 2}), workload: {promptTokens: 512, genTokens: 128}
    };

    it("at the planning workload it is the plan's own prediction", async () => {
        const plan = await planStrategy("optimal", inputs);
        const predicted = requestPredictor(inputs.cost, plan)(512, 128);
        expect(predicted.ttftMs).toBeCloseTo(plan.prediction.ttftMs, 9);
        expect(predicted.tpotMs).toBeCloseTo(plan.prediction.tpotMs, 9);
    });

    it("prices the prompt actually evaluated: a short prompt is predicted a shorter TTFT than the 512-token default", async () => {
        const plan = await planStrategy("optimal", inputs);
        const predict = requestPredictor(inputs.cost, plan);
        const short = predict(18, 40);
        const long = predict(1800, 40);
        expect(short.ttftMs).toBeLessThan(plan.prediction.ttftMs);
        expect(long.ttftMs).toBeGreaterThan(plan.prediction.ttftMs);
        // a reply of no evaluated prompt (all of it reused from the KV cache) is priced as one token, not as nothing
        expect(predict(0, 0).ttftMs).toBeCloseTo(predict(1, 1).ttftMs, 9);
    });

    it("uses the plan's own settings (micro-batch, mmap), not the planning inputs'", async () => {
        const plan = await planStrategy("layers", inputs);
        expect(plan.settings.useMmap).toBe(true);
        const expected = predict(costContext(inputs.cost, plan.settings, {promptTokens: 100, genTokens: 10}), plan.resolved);
        expect(requestPredictor(inputs.cost, plan)(100, 10)).toEqual({ttftMs: expected.ttftMs, tpotMs: expected.tpotMs});
    });
});
