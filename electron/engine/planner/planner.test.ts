import {describe, expect, it} from "vitest";
import {weightBudget} from "./budget.js";
import {costContext, predict, scratchKey, vramNeed} from "./costModel.js";
import {planStrategy} from "./planStrategy.js";
import {layerSplit, withOverrides} from "./resolvePlacement.js";
import {fillInOrder, oato, rankByAffinity} from "./strategies/oatoStrategy.js";
import {candidateSettings, NEAR_TIE_SHARE, preferLighter} from "./strategies/optimalStrategy.js";
import type {FitFunction, StrategyInputs} from "./strategies/StrategyResult.js";
import {fakeModel, fakeProfile} from "./testing/fakeProfile.js";
import {handSettings} from "./testing/handModel.js";
import type {PlannerModel} from "./types.js";

const MiB = 1024 * 1024;

function inputsFor(model: PlannerModel, budgetBytes: number, workload = {promptTokens: 512, genTokens: 128}): StrategyInputs {
    const cost = {model, profile: fakeProfile(model), gpuDevice: "CUDA0"};
    const settings = handSettings({useMmap: true, batchSize: 512, contextSize: 2048, threads: 16});
    // a stand-in for common_fit_params: whole layers from the end, then the next layer's FFN overflows to the CPU
    const fit: FitFunction = async ({budgetBytes: budget, settings: s}) => {
        const cx = costContext(cost, s, workload);
        let n = 0;
        for (let k = model.layerCount + 1; k >= 1; k--) if (vramNeed(cx, layerSplit(model, k)).total <= budget) { n = k; break; }
        const il = model.layerCount - n - 1;
        if (il >= 0) {
            const overrides: [string, string][] = [[`blk\\.${il}\\.ffn_(gate|up|gate_up|down).*`, "CPU"]];
            if (vramNeed(cx, withOverrides(model, n + 1, overrides, (b) => b === "CPU")).total <= budget) return {gpuLayers: n + 1, overrides, status: "success"};
        }
        return {gpuLayers: n, overrides: [], status: "success"};
    };
    return {cost, gpuBufferType: "CUDA0", budgetBytes, settings, workload, fit};
}

describe("OATO (Algorithm 1, §3.3 of \"OATO: operator-aware tensor offloading\")", () => {
    const ops = [
        {name: "A", tc: 100, tg: 10, m: 10}, // B = 9
        {name: "B", tc: 50, tg: 5, m: 5},    // B = 9
        {name: "C", tc: 30, tg: 10, m: 2},   // B = 10
        {name: "D", tc: 20, tg: 19, m: 1}    // B = 1
    ];

    it("ranks by min-max normalised B = (Tc − Tg)/M, ties in input order", () => {
        const {order, affinity} = rankByAffinity(ops, () => 0);
        expect(order).toEqual(["C", "A", "B", "D"]);
        expect(affinity.get("A")).toBeCloseTo(8 / 9);
        expect(affinity.get("C")).toBe(1);
        expect(affinity.get("D")).toBe(0);
    });

    it("re-ranks with the transfer delay T′ until the order is stable", () => {
        // T′(A) = 50 µs: B_A = (100 − 10 − 50)/10 = 4 < B_B = 9, so B overtakes A
        const result = oato(ops, 20, (name) => (name === "A" ? 50 : 0));
        expect(result.order).toEqual(["C", "B", "A", "D"]);
        expect(result.iterations).toBe(2);
    });

    it("fills to 90% of available memory and stops at the first operator that overflows", () => {
        const bytes = new Map(ops.map((op) => [op.name, op.m]));
        expect([...fillInOrder(["C", "B", "A", "D"], bytes, 20)]).toEqual(["C", "B", "A", "D"]); // 18 ≤ 18
        expect([...fillInOrder(["C", "B", "A", "D"], bytes, 15)]).toEqual(["C", "B"]); // A overflows 13.5; D is not tried
    });
});

describe("planner on fake profiles", () => {
    const model = fakeModel();
    const weights = model.weightBytes;

    // the budget: this share of the weights plus exactly the KV cache and the scratch at the smallest micro-batch any
    // strategy may choose (128), so the weights' room binds whatever the micro-batch
    const budgetFor = (share: number): number => {
        const probe = inputsFor(model, 0);
        const reserve = weightBudget(probe.cost, {...probe.settings, batchSize: 128}, 0);
        return Math.floor(weights * share) + reserve.kvBytes + reserve.scratchBytes;
    };
    const gpuWeightBytes = (r: {resolved: {onGpu: ReadonlySet<string>}}): number =>
        model.tensors.filter((t) => r.resolved.onGpu.has(t.name)).reduce((sum, t) => sum + t.bytes, 0);

    it("the budgets bind: more budget, more weights on the GPU, and never all of them below 75%", async () => {
        const shares = [0.3, 0.5, 0.75];
        // with the KV cache offloaded and flash attention off (chosen); weights, the KV cache of the GPU layers (a layer
        // left a CPU layer frees its KV cache for weights) and the compute buffer share the budget
        const fixedKnobs = {kvOffload: true, flashAttention: false};
        const plans = await Promise.all(shares.map((share) => planStrategy("optimal", {...inputsFor(model, budgetFor(share)), chosen: fixedKnobs})));
        const optimal = plans.map(gpuWeightBytes);
        const layers = await Promise.all(shares.map(async (share) => (await planStrategy("layers", inputsFor(model, budgetFor(share)))).gpuLayers));
        expect(optimal[0]!).toBeLessThan(optimal[1]!);
        expect(optimal[1]!).toBeLessThan(optimal[2]!);
        for (const [i, share] of shares.entries()) {
            expect(plans[i]!.prediction.vram.total, `${share}`).toBeLessThanOrEqual(budgetFor(share));
            expect(optimal[i]!, `${share}`).toBeLessThan(weights);
        }
        expect(layers[0]).not.toBe("max");
        expect(layers[1]).not.toBe("max");
        expect(Number(layers[0])).toBeLessThan(Number(layers[2]));
    });

    for (const share of [0.3, 0.5, 0.75]) {
        it(`respects a ${share * 100}% budget to the byte and optimal is never predicted worse`, async () => {
            const inputs = inputsFor(model, budgetFor(share));
            const results = Object.fromEntries(await Promise.all(
                (["cpu", "layers", "fit", "oato", "optimal"] as const).map(async (s) => [s, await planStrategy(s, inputs)] as const)));
            for (const r of Object.values(results)) {
                // a plan that fits holds all it puts on the GPU within the budget, a CPU-only one's compute buffer too
                if (r.fits) expect(r.prediction.vram.total).toBeLessThanOrEqual(inputs.budgetBytes);
            }
            const optimal = results.optimal!;
            expect(optimal.fits).toBe(true);
            for (const s of ["layers", "fit", "oato"] as const) {
                const other = results[s]!;
                if (other.fits)
                    expect(optimal.prediction.requestMs).toBeLessThanOrEqual(other.prediction.requestMs + 1e-9);
            }
            console.log(`budget ${share * 100}%: ` + Object.values(results).map((r) =>
                `${r.strategy} ttft ${r.prediction.ttftMs.toFixed(2)} ms tpot ${r.prediction.tpotMs.toFixed(3)} ms vram ${(r.prediction.vram.total / MiB).toFixed(1)} MiB${r.fits ? "" : " (does not fit)"}`).join("; ") +
                ` | optimal: ${optimal.notes.join("; ")}`);
        });
    }

    it("says why a budget too small for the KV cache and scratch cannot fit", async () => {
        const result = await planStrategy("layers", inputsFor(model, 1 * MiB));
        expect(result.gpuLayers).toBe(0);
        const inputs = inputsFor(model, 1 * MiB);
        expect(weightBudget(inputs.cost, inputs.settings, inputs.budgetBytes).reason).toMatch(/cannot hold the KV cache/);
        // nothing on the GPU is the only plan that fits: optimal and oato degrade to CPU-only (-ngl 0), as llama.cpp would
        for (const strategy of ["optimal", "oato"] as const) {
            const plan = await planStrategy(strategy, inputs);
            expect(plan.fits).toBe(true);
            expect(plan.gpuLayers).toBe(0);
            expect(plan.resolved.onGpu.size).toBe(0);
            expect(plan.prediction.vram.weights + plan.prediction.vram.kv).toBe(0);
        }
        expect((await planStrategy("oato", inputs)).notes.join(" ")).toMatch(/falling back to CPU-only/);
        // -ngl 0 with op offload still reserves a GPU compute buffer for the prompt ops it offloads: over 1 MiB, so the
        // cpu strategy turns op offload off, and where the client insists on it the plan says it does not fit
        const cpu = await planStrategy("cpu", inputs);
        expect([cpu.fits, cpu.settings.opOffload, cpu.prediction.vram.total]).toEqual([true, false, 0]);
        const insisted = await planStrategy("cpu", {...inputs, chosen: {opOffload: true}});
        expect(insisted.prediction.vram.scratch).toBeGreaterThan(inputs.budgetBytes);
        expect(insisted.fits).toBe(false);
    });

    it("fit: llama.cpp's -ngl -1 (its default, left when the whole model fits) is every layer, not none", async () => {
        const inputs = {...inputsFor(model, weights * 4), fit: (async () => ({gpuLayers: -1, overrides: [], status: "success"})) as FitFunction};
        const plan = await planStrategy("fit", inputs);
        expect(plan.gpuLayers).toBe("max");
        expect(plan.fits).toBe(true);
        expect(gpuWeightBytes(plan)).toBe(model.tensors.filter((t) => t.role !== "token_embd").reduce((sum, t) => sum + t.bytes, 0));
        expect(plan.notes.join(" ")).toMatch(/-ngl -1 \(every layer\)/);
    });

    it("uses measured scratch per configuration instead of the formula", async () => {
        const inputs = inputsFor(model, Math.floor(weights * 0.5));
        const byBatch = new Map([[16, 1 * MiB], [128, 3 * MiB], [512, 11 * MiB], [2048, 40 * MiB]]);
        // flash attention's compute buffer is a third of the plain one's (as llama.cpp's simulation measures on llvmpipe)
        const scratchByKey = new Map(candidateSettings(inputs.settings).map((s) => [scratchKey(s), byBatch.get(s.batchSize)! / (s.flashAttention ? 3 : 1)]));
        const measured = {...inputs, cost: {...inputs.cost, scratchByKey, scratchContextSize: 2048}};
        const plan = await planStrategy("layers", measured);
        expect(plan.prediction.vram.scratch).toBe(11 * MiB);
        expect(weightBudget(measured.cost, measured.settings, measured.budgetBytes).scratchBytes).toBe(11 * MiB);
        const optimal = await planStrategy("optimal", measured);
        expect(optimal.prediction.vram.total).toBeLessThanOrEqual(measured.budgetBytes);
        expect(optimal.settings.useGpu).toBe(true);
        expect(optimal.prediction.vram.scratch).toBe(scratchByKey.get(scratchKey(optimal.settings)));
    });

    it("a lead within the cost model's resolution does not decide: the plan takes the lighter configuration", () => {
        const at = (useGpu: boolean, batchSize: number, ms: number) => ({c: {settings: {useGpu, batchSize}, name: `${useGpu ? "gpu" : "none"}-${batchSize}`}, ms});
        // a 0.2% lead for the 2048-token micro-batch: the 512-token one (a quarter of the compute buffers) is chosen
        expect(preferLighter([at(true, 2048, 410.7), at(true, 512, 411.6)], 410.7).name).toBe("gpu-512");
        // leaving the GPU out wins a tie before the micro-batch does
        expect(preferLighter([at(true, 128, 100), at(false, 512, 101), at(true, 16, 100.5)], 100).name).toBe("none-512");
        // a lead beyond the tie share decides
        const beyond = 100 * (1 + NEAR_TIE_SHARE) + 0.1;
        expect(preferLighter([at(true, 2048, 100), at(false, 128, beyond)], 100).name).toBe("gpu-2048");
        // on a full tie the first found stays
        expect(preferLighter([at(true, 512, 100), {...at(true, 512, 100), c: {settings: {useGpu: true, batchSize: 512}, name: "second"}}], 100).name).toBe("gpu-512");
    });

    it("adds the per-decode overhead once per token and once per prompt micro-batch", async () => {
        const inputs = inputsFor(model, Math.floor(weights * 0.5));
        const base = await planStrategy("layers", inputs);
        const withOverhead = await planStrategy("layers", {...inputs, cost: {...inputs.cost, decodeOverheadUs: 1000}});
        expect(withOverhead.prediction.tpotMs - base.prediction.tpotMs).toBeCloseTo(1, 9);
        expect(withOverhead.prediction.ttftMs - base.prediction.ttftMs).toBeCloseTo(1, 9); // 512 tokens = one micro-batch
    });

    it("weighs prefill against decode by the workload", async () => {
        const budget = budgetFor(0.75);
        const chat = await planStrategy("optimal", inputsFor(model, budget, {promptTokens: 64, genTokens: 512}));
        const summarise = await planStrategy("optimal", inputsFor(model, budget, {promptTokens: 4096, genTokens: 8}));
        // the prefill-heavy plan is the better one for a long prompt than the decode-heavy plan (and they differ)
        const costs = (plan: typeof chat, workload: {promptTokens: number; genTokens: number}): number =>
            predict(costContext(inputsFor(model, budget, workload).cost, plan.settings, workload), plan.resolved).requestMs;
        expect(gpuWeightBytes(summarise)).not.toBe(gpuWeightBytes(chat));
        expect(costs(summarise, {promptTokens: 4096, genTokens: 8})).toBeLessThan(costs(chat, {promptTokens: 4096, genTokens: 8}));
    });
});

describe("pricing a plan without the GPU", () => {
    it("takes only the repacked weights' CPU timings from the profile without the GPU; the same kernels keep one timing", async () => {
        const model = fakeModel();
        const main = fakeProfile(model);
        // a load with the GPU times its CPU weights in the GPU's pinned host buffer
        const pinned = {...main, matmuls: main.matmuls.map((p) => p.device === "CPU" ? {...p, weightBufferType: "Vulkan_Host"} : p)};
        const point = pinned.matmuls.find((p) => p.device === "CPU")!;
        const other = pinned.matmuls.find((p) => p.device === "CPU" && (p.rows !== point.rows || p.cols !== point.cols || p.batch !== point.batch))!;
        // timed again without the GPU: one weight repacked into AMX (faster), another in the same layout (10% slower by noise)
        const cpuOnly = {...pinned, matmuls: pinned.matmuls.map((p) => p === point ? {...p, medianUs: p.medianUs / 2, weightBufferType: "AMX"}
            : p === other ? {...p, medianUs: p.medianUs * 1.1} : p)};
        const {withRepackedCpuPoints} = await import("./strategies/StrategyResult.js");
        const merged = withRepackedCpuPoints(pinned, cpuOnly);
        expect(merged.matmuls.find((p) => p.device === "CPU" && p.rows === point.rows && p.cols === point.cols && p.batch === point.batch && p.type === point.type)!.medianUs)
            .toBe(point.medianUs / 2);
        expect(merged.matmuls.find((p) => p === other || (p.device === "CPU" && p.rows === other.rows && p.cols === other.cols && p.batch === other.batch && p.type === other.type))!.medianUs)
            .toBe(other.medianUs);
        expect(withRepackedCpuPoints(pinned, cpuOnly)).toBe(merged);
    });
});
