// The MoE baselines (llama.cpp's --cpu-moe and --n-cpu-moe, tuned as a user would) against optimal, on the shapes of
// Qwen3-30B-A3B and the small Mixtral-style preset, priced on a fake H100-like profile.
import {handSettings} from "./testing/handModel.js";
import {describe, expect, it} from "vitest";
import {planStrategy} from "./planStrategy.js";
import {expertTensorNames} from "./strategies/cpuMoeStrategy.js";
import type {StrategyInputs} from "./strategies/StrategyResult.js";
import {fakeModel, fakeModelOfShape, fakeProfile} from "./testing/fakeProfile.js";
import type {PlannerModel} from "./types.js";
import {resolveSyntheticShape} from "../writer/makeSyntheticModel.js";

function inputsFor(model: PlannerModel, budgetShare: number): StrategyInputs {
    return {
        cost: {model, profile: fakeProfile(model), gpuDevice: "CUDA0"},
        gpuBufferType: "CUDA0",
        budgetBytes: Math.round(model.weightBytes * budgetShare),
        settings: handSettings({useMmap: false, batchSize: 512, contextSize: 4096, threads: 16}),
        workload: {promptTokens: 512, genTokens: 128}
    };
}

describe("cpu-moe and n-cpu-moe on Qwen3-30B-A3B's shape (48 layers, 128 experts, 8 used; q8_0)", () => {
    const model = fakeModelOfShape(resolveSyntheticShape({preset: "qwen3-30b-a3b"}), "q8_0");

    it("cpu-moe keeps all 144 expert weights in host memory and everything else on the GPU", async () => {
        const plan = await planStrategy("cpu-moe", inputsFor(model, 0.25));
        const host = model.tensors.filter((t) => !plan.resolved.onGpu.has(t.name) && t.role !== "token_embd").map((t) => t.name);
        expect(host.sort()).toEqual([...expertTensorNames(model)].sort());
        expect(host).toHaveLength(144);
        expect(plan.settings.useMmap).toBe(false);
        // attention and routers (~1.5 GiB) + KV fit in a quarter of 30 GiB
        expect(plan.fits).toBe(true);
    });

    it("n-cpu-moe picks fewer host layers as the budget grows, each the best N that fits", async () => {
        const ns: number[] = [];
        for (const share of [0.25, 0.5, 0.75]) {
            const plan = await planStrategy("n-cpu-moe", inputsFor(model, share));
            expect(plan.fits).toBe(true);
            const n = Number(/--n-cpu-moe (\d+)/.exec(plan.notes[0] ?? "")?.[1]);
            // exactly the experts of layers 0 … N−1 are on the host
            const host = [...expertTensorNames(model)].filter((name) => !plan.resolved.onGpu.has(name));
            expect(new Set(host)).toEqual(expertTensorNames(model, n));
            ns.push(n);
        }
        expect(ns[0]).toBeGreaterThan(ns[1]!);
        expect(ns[1]).toBeGreaterThan(ns[2]!);
        // with 25% of the weights on the GPU, about three quarters of the 48 layers keep their experts on the host
        expect(ns[0]).toBeGreaterThanOrEqual(36);
    });

    it("fall back to CPU-only without a GPU", async () => {
        const inputs = inputsFor(model, 0.5);
        const plan = await planStrategy("n-cpu-moe", {...inputs, gpuBufferType: null, cost: {...inputs.cost, gpuDevice: null}});
        expect([plan.fits, plan.gpuLayers, plan.resolved.onGpu.size]).toEqual([true, 0, 0]);
        expect(Number.isFinite(plan.prediction.tpotMs)).toBe(true);
    });

    it("are refused for a dense model, with the reason", async () => {
        const plan = await planStrategy("cpu-moe", inputsFor(fakeModel(), 0.5));
        expect(plan.fits).toBe(false);
        expect(plan.reason).toMatch(/not a mixture-of-experts model/);
    });
});

describe("optimal places expert weights per tensor, never predicted worse than the MoE baselines", () => {
    // 4 of Qwen3-30B-A3B's 48 layers keep the MILP small enough for a unit test
    const model = fakeModelOfShape(resolveSyntheticShape({preset: "qwen3-30b-a3b", layers: 4}), "q8_0");

    for (const share of [0.25, 0.5, 0.75]) {
        it(`at ${share * 100}% of the weights`, async () => {
            const inputs = inputsFor(model, share);
            const [cpuMoe, nCpuMoe, optimal] = await Promise.all((["cpu-moe", "n-cpu-moe", "optimal"] as const).map((s) => planStrategy(s, inputs)));
            expect(optimal!.fits).toBe(true);
            for (const baseline of [cpuMoe!, nCpuMoe!].filter((plan) => plan.fits))
                expect(optimal!.prediction.requestMs).toBeLessThanOrEqual(baseline.prediction.requestMs * (1 + 1e-9));
            expect(optimal!.prediction.vram.total).toBeLessThanOrEqual(inputs.budgetBytes);
            const hostExperts = [...expertTensorNames(model)].filter((name) => !optimal!.resolved.onGpu.has(name));
            console.log(`optimal at ${share * 100}%: ${optimal!.prediction.requestMs.toFixed(1)} ms vs cpu-moe ${cpuMoe!.prediction.requestMs.toFixed(1)}, ` +
                `${nCpuMoe!.notes[0]} ${nCpuMoe!.prediction.requestMs.toFixed(1)}; ${hostExperts.length} of 12 expert weights on the host (${optimal!.notes[0]})`);
            // the weights exceed the budget, so some experts stay on the host, but never all of them at half the weights
            expect(hostExperts.length).toBeGreaterThan(0);
            if (share >= 0.5) expect(hostExperts.length).toBeLessThan(12);
        }, 60_000);
    }
});
