// The planners on hand-sized models whose every op cost is written down, so the expected placements and the gaps
// between them are computed by hand (in the comments) rather than read back from the code under test.
import {describe, expect, it} from "vitest";
import {costContext, predict, vramNeed} from "./costModel.js";
import {planStrategy} from "./planStrategy.js";
import {layerSplit, perTensor} from "./resolvePlacement.js";
import {neighbourTransfer, oato} from "./strategies/oatoStrategy.js";
import type {StrategyInputs, StrategyResult} from "./strategies/StrategyResult.js";
import {handInputs, handModel, handProfile, layerFit, layerNormBytes, outputNormBytes, type HandOp, type HandShape} from "./testing/handModel.js";

const KiB = 1024;

/** Names of the weights a plan keeps in GPU memory. */
function gpuWeights(plan: StrategyResult): string[] {
    return [...plan.resolved.onGpu].filter((name) => name.startsWith("blk.")).sort();
}

describe("optimal (MILP) against every baseline under budgets that bind", () => {
    // Two layers; the single-token times make the value of moving op i to the GPU v_i = cpuUs − gpuUs per token.
    // With a 16-token prompt (below llama.cpp's offload threshold of 32, so prefill ops run where they live) each op
    // costs 16× its one-token time in prefill and once per each of the 16 later tokens: moving it saves 32·v_i µs.
    //   op        KiB   v    v/KiB (OATO's affinity order)
    //   q0         60  60   1.00
    //   up0        50  46   0.92
    //   down0      50  44   0.88
    //   q1         40   9   0.225
    //   up1        40   8   0.20
    //   down1      40   7   0.175
    const shape: HandShape = {layers: 2, embd: 64, heads: 4, kvHeads: 1};
    const ops: HandOp[] = [
        {layer: 0, role: "attn_q", bytes: 60 * KiB, cpuUs: 61, gpuUs: 1},
        {layer: 0, role: "ffn_up", bytes: 50 * KiB, cpuUs: 47, gpuUs: 1},
        {layer: 0, role: "ffn_down", bytes: 50 * KiB, cpuUs: 45, gpuUs: 1},
        {layer: 1, role: "attn_q", bytes: 40 * KiB, cpuUs: 10, gpuUs: 1},
        {layer: 1, role: "ffn_up", bytes: 40 * KiB, cpuUs: 9, gpuUs: 1},
        {layer: 1, role: "ffn_down", bytes: 40 * KiB, cpuUs: 8, gpuUs: 1}
    ];
    const model = handModel(shape, ops);
    // switches free, activation copies negligible (4096 B at 1 TB/s = 0.004 µs): the choice is a pure knapsack
    const profile = handProfile(model, ops, {switchUs: 0, h2dBytesPerSec: 1e12});
    const contextSize = 256;
    const scratchBytes = 64 * KiB;

    /**
     * Inputs whose weights may take exactly `weightKiB` once scratch and output_norm are reserved: the KV cache stays in
     * host memory (`--no-kv-offload`, chosen), so which layers are GPU layers moves no bytes, and attention runs on the
     * CPU in every plan (the layer-device choice has tests of its own below).
     */
    function inputsWith(weightKiB: number): StrategyInputs {
        const budgetBytes = weightKiB * KiB + scratchBytes + outputNormBytes(shape);
        const base = handInputs(model, profile, {budgetBytes, scratchBytes, contextSize, batchSize: 128, workload: {promptTokens: 16, genTokens: 17},
            settings: {kvOffload: false}});
        const fits = (n: number): boolean => vramNeed(costContext(base.cost, base.settings, base.workload), layerSplit(model, n)).total <= budgetBytes;
        return {...base, chosen: {kvOffload: false}, fit: layerFit(fits, shape.layers)};
    }

    async function allPlans(inputs: StrategyInputs): Promise<Record<"cpu" | "layers" | "fit" | "oato" | "optimal", StrategyResult>> {
        const [cpu, layers, fit, oatoPlan, optimal] = await Promise.all((["cpu", "layers", "fit", "oato", "optimal"] as const).map((s) => planStrategy(s, inputs)));
        return {cpu: cpu!, layers: layers!, fit: fit!, oato: oatoPlan!, optimal: optimal!};
    }

    // The knapsack optimum, by hand, for each weight room:
    //   60 KiB:  {q0} = 60                  (up0 alone 46)
    //   100 KiB: {up0, down0} = 90          ({q0} + any layer-1 op = 60 + 9 = 69)
    //   150 KiB: {q0, up0, q1} = 115        ({q0, down0, q1} = 113, {up0, down0, q1} = 99; all of layer 0 is 160 KiB)
    const expected: [weightKiB: number, gpu: string[]][] = [
        [60, ["blk.0.attn_q.weight"]],
        [100, ["blk.0.ffn_down.weight", "blk.0.ffn_up.weight"]],
        [150, ["blk.0.attn_q.weight", "blk.0.ffn_up.weight", "blk.1.attn_q.weight"]]
    ];

    for (const [weightKiB, gpu] of expected) {
        it(`with ${weightKiB} KiB for weights, keeps exactly the hand-computed optimum on the GPU`, async () => {
            const inputs = inputsWith(weightKiB);
            const plan = await planStrategy("optimal", inputs);
            expect(plan.fits).toBe(true);
            expect(plan.notes[0]).toMatch(/^MILP \(HiGHS, exact\)/);
            expect(gpuWeights(plan)).toEqual(gpu);
            expect(plan.prediction.vram.total).toBeLessThanOrEqual(inputs.budgetBytes);
        });
    }

    it("the chosen plan changes with the budget: three budgets, three different placements", async () => {
        const chosen = await Promise.all(expected.map(async ([weightKiB]) => gpuWeights(await planStrategy("optimal", inputsWith(weightKiB)))));
        expect(new Set(chosen.map((names) => names.join(","))).size).toBe(3);
    });

    it("at 100 KiB the optimum differs from every baseline and beats OATO by the hand-computed 0.96 ms", async () => {
        const plans = await allPlans(inputsWith(100));
        // OATO takes q0 (60 ≤ 90% of 100), then up0 overflows (110 > 90) and it stops: {q0}
        expect(gpuWeights(plans.oato)).toEqual(["blk.0.attn_q.weight"]);
        // layer 1 needs 120 KiB > the 100 KiB left: -ngl 1 (output layer only, no blk weights)
        expect(plans.layers.gpuLayers).toBe(1);
        expect(gpuWeights(plans.layers)).toEqual([]);
        expect(gpuWeights(plans.fit)).toEqual([]);
        expect(gpuWeights(plans.cpu)).toEqual([]);
        for (const baseline of [plans.cpu, plans.layers, plans.fit, plans.oato]) {
            expect(gpuWeights(baseline)).not.toEqual(gpuWeights(plans.optimal));
            expect(plans.optimal.prediction.requestMs, baseline.strategy).toBeLessThan(baseline.prediction.requestMs);
        }
        // 32 × (v(up0) + v(down0) − v(q0)) = 32 × (90 − 60) µs = 0.96 ms; both run every attention on the CPU
        expect(plans.oato.prediction.requestMs - plans.optimal.prediction.requestMs).toBeCloseTo(0.96, 4);
    });

    it("at 150 KiB a layer split fits but the per-tensor optimum still wins by the hand-computed margins", async () => {
        const plans = await allPlans(inputsWith(150));
        // OATO: q0, up0 (110 ≤ 135), down0 overflows (160 > 135): {q0, up0}, 32 × 9 µs behind the optimum's extra q1
        expect(gpuWeights(plans.oato)).toEqual(["blk.0.attn_q.weight", "blk.0.ffn_up.weight"]);
        expect(plans.oato.prediction.requestMs - plans.optimal.prediction.requestMs).toBeCloseTo(0.288, 4);
        // -ngl 2: layer 1 (120 KiB) fits in the 150 KiB
        expect(plans.layers.gpuLayers).toBe(2);
        expect(gpuWeights(plans.layers)).toEqual(["blk.1.attn_q.weight", "blk.1.ffn_down.weight", "blk.1.ffn_up.weight"]);
        for (const baseline of [plans.cpu, plans.layers, plans.fit, plans.oato]) {
            expect(gpuWeights(baseline)).not.toEqual(gpuWeights(plans.optimal));
            expect(plans.optimal.prediction.requestMs, baseline.strategy).toBeLessThan(baseline.prediction.requestMs);
        }
    });
});

describe("OATO's transfer correction T′ (Algorithm 1 lines 8–11)", () => {
    // One layer in graph order q, attention, up, down. Affinities without T′: down 50/50 = 1.0, q 45/50 = 0.9,
    // up 12/50 = 0.24; 90% of 60 KiB holds one 50 KiB op.
    const shape: HandShape = {layers: 1, embd: 64, heads: 4, kvHeads: 1};
    const ops: HandOp[] = [
        {layer: 0, role: "attn_q", bytes: 50 * KiB, cpuUs: 46, gpuUs: 1},
        {layer: 0, role: "ffn_up", bytes: 50 * KiB, cpuUs: 13, gpuUs: 1},
        {layer: 0, role: "ffn_down", bytes: 50 * KiB, cpuUs: 51, gpuUs: 1}
    ];
    const model = handModel(shape, ops);
    const kvBytes = 2 * 256 * 16 * 2;
    const scratchBytes = 64 * KiB;
    const inputsWith = (switchUs: number): StrategyInputs => handInputs(model, handProfile(model, ops, {switchUs, h2dBytesPerSec: 1e12}), {
        budgetBytes: 60 * KiB + kvBytes + scratchBytes + outputNormBytes(shape), scratchBytes, contextSize: 256, batchSize: 128,
        workload: {promptTokens: 16, genTokens: 17}
    });
    const q = "blk.0.attn_q.weight", up = "blk.0.ffn_up.weight", down = "blk.0.ffn_down.weight";

    it("T′ is one switch per CPU neighbour in graph order (attention counts as GPU, the embeddings as CPU)", () => {
        const inputs = inputsWith(20);
        const transfer = neighbourTransfer(costContext(inputs.cost, inputs.settings, inputs.workload));
        // GPU = {down}: q has the embeddings before it (CPU) and attention after it (GPU): 1 × 20 µs;
        // up sits between attention and down, both GPU: 0; down has up (CPU) before it and the logits (CPU) after: 40 µs
        expect([q, up, down].map((name) => transfer(name, new Set([down])))).toEqual([20, 0, 40]);
        // GPU = {q, up, down}: only q's left neighbour (embeddings) and down's right one (logits) are on the CPU
        expect([q, up, down].map((name) => transfer(name, new Set([q, up, down])))).toEqual([20, 0, 20]);
    });

    it("re-ranks the operators and changes what goes to the GPU when switches are dear", async () => {
        const inputs = inputsWith(20);
        const cx = costContext(inputs.cost, {...inputs.settings, useMmap: false}, inputs.workload);
        const tableOps = ops.map((op, i) => ({name: model.tensors[i + 1]!.name, tc: op.cpuUs, tg: op.gpuUs, m: op.bytes}));
        // without T′: down (1.0), q (0.9), up (0.24) → {down}
        expect(oato(tableOps, 60 * KiB, () => 0)).toMatchObject({order: [down, q, up], gpu: new Set([down])});
        // with T′ (20 µs a switch), by hand: from {down}: q (45 − 20)/50 = 0.5, up 12/50 = 0.24, down (50 − 40)/50 = 0.2
        // → {q}; from {q}: q 0.5, down (50 − 40)/50 = 0.2, up (12 − 20)/50 = −0.16 → {q} again, stable
        expect(oato(tableOps, 60 * KiB, neighbourTransfer(cx))).toEqual({order: [q, down, up], gpu: new Set([q]), iterations: 3});

        const dear = await planStrategy("oato", inputs);
        const free = await planStrategy("oato", inputsWith(0));
        expect(gpuWeights(free)).toEqual([down]);
        expect(gpuWeights(dear)).toEqual([q]);
        // and with 20 µs a switch {q} is the better plan, by hand: {down} saves 50 µs a token but adds two switches (40 µs),
        // {q} saves 45 µs and adds none; prefill (16 tokens where the weights live): {down} saves 16 × 50 − 2 × 20 = 760 µs,
        // {q} 16 × 45 = 720 µs. Over 16 later tokens: {down} 760 + 16 × 10 = 920, {q} 720 + 16 × 45 = 1440 → 0.52 ms apart
        expect(dear.prediction.decodeHops).toBe(2);
        expect(free.prediction.decodeHops).toBe(4);
        const freeAtDearSwitches = predict(costContext(inputs.cost, free.settings, inputs.workload), free.resolved);
        expect(freeAtDearSwitches.requestMs - dear.prediction.requestMs).toBeCloseTo(0.52, 4);
    });
});

describe("which layers are GPU layers (llama.cpp runs a GPU layer's norms on the GPU while a token is generated)", () => {
    // One layer in graph order attn_norm, q, attention, ffn_norm, up, down (costModel.ts PINNED_NORM_MAX_BATCH); the KV
    // cache in host memory (chosen), so attention runs on the CPU in every plan and only weights and norms move. A 16-token
    // prompt is below the offload threshold (ops run where they live, norms pinned) and 16 tokens follow: 17 steps.
    const shape: HandShape = {layers: 1, embd: 64, heads: 4, kvHeads: 1};
    const ops: HandOp[] = [
        {layer: 0, role: "attn_q", bytes: 50 * KiB, cpuUs: 46, gpuUs: 1},
        {layer: 0, role: "ffn_up", bytes: 50 * KiB, cpuUs: 13, gpuUs: 1},
        {layer: 0, role: "ffn_down", bytes: 50 * KiB, cpuUs: 51, gpuUs: 1}
    ];
    const model = handModel(shape, ops, {norms: true});
    const scratchBytes = 64 * KiB;
    // every tensor but the matmuls and token_embd: two layer norms and output_norm
    const fixedBytes = 2 * layerNormBytes(shape) + outputNormBytes(shape);
    const inputsWith = (weightKiB: number): StrategyInputs => ({
        ...handInputs(model, handProfile(model, ops, {switchUs: 20, h2dBytesPerSec: 1e12}), {
            budgetBytes: weightKiB * KiB + scratchBytes + fixedBytes, scratchBytes, contextSize: 256, batchSize: 128,
            workload: {promptTokens: 16, genTokens: 17}, settings: {kvOffload: false}
        }),
        chosen: {kvOffload: false}
    });
    const down = "blk.0.ffn_down.weight";
    const matmuls = new Set(ops.map((_, i) => model.tensors[i + 1]!.name));

    it("with no room for a weight, leaves every layer a CPU layer: no switch, where -ngl max pays four per token", async () => {
        const inputs = inputsWith(0);
        const plan = await planStrategy("optimal", inputs);
        expect(plan.resolved.layerOnGpu).toEqual([false]);
        expect(gpuWeights(plan)).toEqual([]);
        expect(plan.prediction.decodeHops).toBe(0);
        // every matmul weight in host memory at -ngl max: attn_norm (GPU) q attention (CPU) ffn_norm (GPU) up down
        // (CPU): C→G→C→G→C, 4 switches in each of the 17 steps × 20 µs = 1.36 ms slower, by hand (to within 1%: the
        // activations' copy at each prompt switch and the host weights' pinned buffer add a little)
        // (the plan may leave the GPU out altogether, --device none: the same prediction here, nothing on it either way)
        const settings = {...plan.settings, useGpu: true};
        const cpuLayers = predict(costContext(inputs.cost, settings, inputs.workload), layerSplit(model, 0));
        expect(cpuLayers.requestMs).toBeCloseTo(plan.prediction.requestMs, 6);
        const everyLayerOnGpu = predict(costContext(inputs.cost, settings, inputs.workload), perTensor(model, matmuls));
        expect(everyLayerOnGpu.decodeHops).toBe(4);
        expect(Math.abs(everyLayerOnGpu.requestMs - cpuLayers.requestMs - 1.36)).toBeLessThan(0.0136);
    });

    it("with room for one weight, puts it on the GPU in a CPU layer (-ngl 1 and one override), two switches a token", async () => {
        const inputs = inputsWith(50);
        const plan = await planStrategy("optimal", inputs);
        // by hand: down saves 50 µs in each of 32 token-steps (16 prompt, 16 decode) = 1600 µs for 2 switches × 17 steps ×
        // 20 µs = 680 µs; q saves 45 × 32 = 1440 for the same 680 (between attn_norm and attention, both on the CPU)
        expect(gpuWeights(plan)).toEqual([down]);
        expect(plan.resolved.layerOnGpu).toEqual([false]);
        expect(plan.gpuLayers).toBe(1);
        // (output_norm goes with the output matmul, which a hand model has none of: to host memory too)
        expect(plan.overrides).toEqual([{pattern: "^blk\\.[0-9]+\\.ffn_down\\.weight$", bufferType: "CUDA0"}, {pattern: "^output_norm\\.weight$", bufferType: "CPU"}]);
        expect(plan.prediction.decodeHops).toBe(2);
        // the same weight at -ngl max: attn_norm G, q C, attention C, ffn_norm G, up C, down G, logits: 6 switches,
        // 4 more in each of 17 steps: 1.36 ms slower
        const inGpuLayer = predict(costContext(inputs.cost, plan.settings, inputs.workload), perTensor(model, new Set([...matmuls].filter((n) => n !== down))));
        expect(inGpuLayer.decodeHops).toBe(6);
        expect(Math.abs(inGpuLayer.requestMs - plan.prediction.requestMs - 1.36)).toBeLessThan(0.0136);
    });
});
