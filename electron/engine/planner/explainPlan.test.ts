import {handSettings} from "./testing/handModel.js";
import {describe, expect, it} from "vitest";
import {AUTO_SAFETY_MARGIN_BYTES, weightBudget} from "./budget.js";
import {explainBudget, explainGpuLayers, explainPlacement, explainPlan, explainProfile, explainSettings, mib} from "./explainPlan.js";
import {planStrategy} from "./planStrategy.js";
import {layerSplit, perTensor} from "./resolvePlacement.js";
import {finishPlan, type StrategyInputs} from "./strategies/StrategyResult.js";
import {fakeModel, fakeProfile} from "./testing/fakeProfile.js";
import type {PlannerModel} from "./types.js";

const MiB = 1024 * 1024;

function inputsFor(model: PlannerModel, budgetBytes: number, gpu: string | null = "Vulkan0"): StrategyInputs {
    return {
        cost: {model, profile: fakeProfile(model, {gpuDevice: gpu ?? "CUDA0"}), gpuDevice: gpu},
        gpuBufferType: gpu, budgetBytes,
        settings: handSettings({useMmap: false, batchSize: 512, contextSize: 2048, threads: 2}),
        workload: {promptTokens: 512, genTokens: 128}
    };
}

const measured = {createdAt: "2026-11-23T02:55:12.000Z", elapsedMs: 21_400, truncated: false, reused: false};

describe("why the weights are where they are", () => {
    const model = fakeModel(4);

    it("no GPU: says llama.cpp found none", async () => {
        const inputs = inputsFor(model, 0, null);
        const result = await planStrategy("optimal", inputs);
        expect(explainPlacement(inputs, result)).toBe("Everything runs on the CPU because llama.cpp found no GPU on this machine.");
    });

    it("CPU-only because the KV cache and scratch alone exceed the budget, with both sizes and the budget in MiB", async () => {
        const probe = weightBudget(inputsFor(model, 0).cost, inputsFor(model, 0).settings, 0);
        // below the KV cache alone: no micro-batch the optimiser tries (smaller ones need less scratch) can fit
        const budget = probe.kvBytes - MiB;
        const inputs = inputsFor(model, budget);
        // the client keeps the KV cache on the GPU and uses it (else the optimiser would move the cache or leave the GPU out)
        const result = await planStrategy("optimal", {...inputs, chosen: {kvOffload: true, useGpu: true}});
        expect(result.resolved.onGpu.size).toBe(0);
        const sentence = explainPlacement(inputs, result);
        expect(sentence).toMatch(/^Every weight stays on the CPU because the KV cache \([\d.]+ MiB at 2048 tokens\) and scratch \([\d.]+ MiB at micro-batch \d+\) alone exceed the [\d.]+ MiB budget;/);
        expect(sentence).toContain(`KV cache (${mib(probe.kvBytes)} at 2048 tokens)`);
        expect(sentence).toContain(`exceed the ${mib(budget)} budget`);
        // with nothing on the GPU, the reserve of offloaded prompt ops would break the budget: op offload is off
        expect(result.settings.opOffload).toBe(false);
        expect(sentence).toMatch(/op offload is off, so no prompt op is copied to Vulkan0\.$/);
        // one sentence: no full stop before its end
        expect(sentence.slice(0, -1)).not.toContain(". ");
    });

    it("CPU-only because what is left after KV cache and scratch cannot hold the smallest weight", () => {
        const base = inputsFor(model, 0);
        const probe = weightBudget(base.cost, base.settings, 0);
        const smallest = Math.min(...model.tensors.filter((t) => t.op != null).map((t) => t.bytes));
        const inputs = inputsFor(model, probe.kvBytes + probe.scratchBytes + Math.floor(smallest / 2));
        const result = finishPlan(inputs, "oato", layerSplit(model, 0), inputs.settings, []);
        expect(explainPlacement(inputs, result)).toMatch(/cannot hold even the smallest weight matrix \([\d.]+ MiB\); prompt micro-batches of 32 tokens or more still run on Vulkan0/);
    });

    it("layer split: cannot hold even the output layer", () => {
        const base = inputsFor(model, 0);
        const probe = weightBudget(base.cost, base.settings, 0);
        const inputs = inputsFor(model, probe.kvBytes + probe.scratchBytes + MiB / 2);
        const result = finishPlan(inputs, "layers", layerSplit(model, 0), inputs.settings, []);
        expect(explainPlacement(inputs, result)).toContain("cannot hold even the output layer");
    });

    it("CPU-only by choice: the optimiser predicted it faster for the workload", () => {
        const inputs = inputsFor(model, 4096 * MiB);
        const result = finishPlan(inputs, "optimal", layerSplit(model, 0), inputs.settings, []);
        expect(explainPlacement(inputs, result)).toBe("Every weight stays on the CPU because, for a 512-token prompt and a 128-token reply, " +
            "that is predicted faster than every placement that puts weights on Vulkan0 within the 4096 MiB budget; prompt micro-batches of 32 tokens " +
            "or more still run on Vulkan0, which copies each weight in for them (op offload).");
        const smallBatch = finishPlan(inputs, "optimal", layerSplit(model, 0), {...inputs.settings, batchSize: 16}, []);
        expect(explainPlacement(inputs, smallBatch)).toMatch(/; the 16-token micro-batch is below the 32 tokens from which no prompt op is copied to Vulkan0\.$/);
    });

    it("CPU-only because the user chose that strategy", async () => {
        const inputs = inputsFor(model, 4096 * MiB);
        expect(explainPlacement(inputs, await planStrategy("cpu", inputs))).toBe("Every weight stays on the CPU because the CPU-only strategy was chosen; " +
            "prompt micro-batches of 32 tokens or more still run on Vulkan0, which copies each weight in for them (op offload).");
    });

    it("without the GPU: because no plan that uses it fits, or because every one that does is predicted slower (with both times)", async () => {
        const probe = weightBudget(inputsFor(model, 0).cost, inputsFor(model, 0).settings, 0);
        const tiny = inputsFor(model, Math.floor(probe.kvBytes / 4));
        const none = await planStrategy("optimal", {...tiny, chosen: {kvOffload: true, opOffload: true}});
        expect(none.settings.useGpu).toBe(false);
        // (a plan that keeps the GPU but puts nothing on it, with a 16-token micro-batch, still fits any budget)
        expect(explainPlacement(tiny, none)).toMatch(/^Everything runs on the CPU without Vulkan0 \(llama\.cpp's --device none: nothing is offloaded or reserved on it\), because /);
        // a GPU slower than the CPU at everything: leaving it out wins on speed, and the sentence gives both predictions
        const ample = inputsFor(model, 4096 * MiB);
        const slowGpu = {...ample, cost: {...ample.cost, profile: {...ample.cost.profile,
            matmuls: ample.cost.profile.matmuls.map((p) => p.device === "Vulkan0" ? {...p, medianUs: p.medianUs * 1000, minUs: p.minUs * 1000} : p)}}};
        const cpu = await planStrategy("optimal", slowGpu);
        expect(cpu.settings.useGpu).toBe(false);
        expect(explainPlacement(slowGpu, cpu)).toMatch(/because for a 512-token prompt and a 128-token reply it is predicted faster than every plan that uses Vulkan0 within the 4096 MiB budget \(the best of them: [\d.]+ s per request, against [\d.]+ s\)\.$/);
        // and the settings sentence weighs the knob: here a plan that keeps the GPU but puts nothing on it (op offload off)
        // ties, and at a tie the plan leaves the GPU free
        expect(explainSettings(cpu, "Vulkan0")).toMatch(/^Settings: leaving Vulkan0 out \(--device none\), flash attention o(n|ff), an f16 KV cache, a \d+-token micro-batch, \d+ threads?\..* Within 5% either way: using Vulkan0/);
        const decided = {...cpu, alternatives: [{knob: "useGpu" as const, value: true, requestMs: cpu.prediction.requestMs * 3, atLeast: false}]};
        expect(explainSettings(decided, "Vulkan0")).toMatch(/What decided: with using Vulkan0 the best plan is predicted [\d.]+ (ms|s) per request \(3\.0× this plan's [\d.]+ (ms|s)\)\.$/);
    });

    it("mixed: the device's share of the weights, the KV layers, and where the rest lives", () => {
        const inputs = inputsFor(model, 4096 * MiB);
        const ffn = new Set(model.tensors.filter((t) => t.role.startsWith("ffn_") && t.op != null).map((t) => t.name));
        const result = finishPlan(inputs, "optimal", perTensor(model, ffn), inputs.settings, []);
        const sentence = explainPlacement(inputs, result);
        expect(sentence).toMatch(/^Vulkan0 holds \d+% of the weights \([\d.]+ MiB of [\d.]+ MiB\) and the KV cache of 4 of 4 layers; the other [\d.]+ MiB stay in pinned host memory, because on Vulkan0 weights, KV cache and scratch need [\d.]+ MiB of the 4096 MiB budget\.$/);
    });

    it("everything on the device", () => {
        const inputs = inputsFor(model, 4096 * MiB);
        const result = finishPlan(inputs, "layers", layerSplit(model, model.layerCount + 1), inputs.settings, []);
        expect(explainPlacement(inputs, result)).toMatch(/^The whole model fits on Vulkan0: weights, KV cache and scratch need [\d.]+ MiB of the 4096 MiB budget/);
    });
});

describe("where the budget came from", () => {
    const gpu = {name: "Vulkan0", freeBytes: 3072 * MiB};

    it("auto: free memory minus the safety margin, in MiB", () => {
        expect(explainBudget({kind: "auto"}, {gpu, weightBytes: 100 * MiB})).toBe(
            "Auto budget: 2048 MiB = the 3072 MiB free on Vulkan0 minus a 1024 MiB safety margin " +
            "(the larger of 1024 MiB and 5% of free memory, left for the driver and other apps).");
    });

    it("auto with less free memory than the margin: 0 MiB, and what to do", () => {
        const sentence = explainBudget({kind: "auto"}, {gpu: {name: "Vulkan0", freeBytes: AUTO_SAFETY_MARGIN_BYTES / 2}, weightBytes: 100 * MiB});
        expect(sentence).toMatch(/^Auto budget: 0 MiB, because Vulkan0 has only 512 MiB free, less than the 1024 MiB safety margin .*choose a budget in MiB to use it anyway\.$/);
    });

    it("auto without a GPU", () => {
        expect(explainBudget({kind: "auto"}, {gpu: null, weightBytes: 100 * MiB})).toBe("Auto budget: 0 MiB, because llama.cpp found no GPU on this machine.");
    });

    it("a size in MiB, and a warning when it is more than is free", () => {
        expect(explainBudget({kind: "mib", mib: 512}, {gpu, weightBytes: 100 * MiB})).toBe(
            "Budget: 512 MiB of Vulkan0 memory, as entered; weights, KV cache and scratch on the GPU must all fit in it.");
        expect(explainBudget({kind: "mib", mib: 4096}, {gpu, weightBytes: 100 * MiB})).toContain("(it is more than the 3072 MiB free now).");
    });

    it("a share of the weights: the percent and the MiB it makes", () => {
        expect(explainBudget({kind: "percent", percent: 50}, {gpu, weightBytes: 102 * MiB})).toBe(
            "Budget: 51 MiB = 50% of the model's 102 MiB of weights; weights, KV cache and scratch on the GPU must all fit in it.");
    });
});

describe("what -ngl counts", () => {
    it("0: nothing offloaded", () => {
        expect(explainGpuLayers(0, 0, 2)).toBe("-ngl 0 offloads no layer: every layer and its KV cache stay on the CPU.");
    });

    it("1: only the output layer", () => {
        expect(explainGpuLayers(1, 0, 2)).toBe("-ngl 1 counts the output layer as one: it offloads the output layer and no repeating layer.");
    });

    it("n ≤ layers: the output layer and the last n − 1 repeating layers, named", () => {
        expect(explainGpuLayers(2, 0, 2)).toBe("-ngl 2 counts the output layer as one: it offloads the output layer and the last repeating layer (blk.1).");
        expect(explainGpuLayers(3, 0, 4)).toBe("-ngl 3 counts the output layer as one: it offloads the output layer and the last 2 of 4 repeating layers (blk.2–blk.3).");
    });

    it("all layers: the output layer is one more than the repeating layers", () => {
        expect(explainGpuLayers(3, 0, 2)).toBe("-ngl offloads all 2 repeating layers and the output layer, which llama.cpp counts as one more layer (3 in all).");
        expect(explainGpuLayers("max", 5, 2)).toBe("-ngl offloads all 2 repeating layers and the output layer, which llama.cpp counts as one more layer (3 in all), " +
            "then 5 tensor overrides (-ot) move the weights they name back to host memory.");
    });
});

describe("where the timings came from", () => {
    it("measured now", () => {
        expect(explainProfile(measured)).toBe("Timings measured on this machine just now (21.4 s) and saved for the next plan.");
    });

    it("reused from the cache, with its date", () => {
        expect(explainProfile({...measured, reused: true})).toBe(
            "Timings from this machine's profile of 2026-11-23 02:55 UTC, reused from the cache; re-profile to measure again.");
    });

    it("cut at the time limit", () => {
        expect(explainProfile({...measured, truncated: true})).toContain("It was cut at its time limit, so some timings are extrapolated.");
    });

    it("measured while other programs kept the cores busy, reused or not (profileMachine records it)", () => {
        const busy = {...measured, cpuContention: {otherCores: 1.4, cores: 2, threads: 2}};
        const sentence = "While it was measured, other programs kept 1.4 of 2 CPU cores busy";
        expect(explainProfile(busy)).toContain(sentence);
        expect(explainProfile({...busy, reused: true})).toContain(sentence);
        expect(explainProfile({...busy, cpuContention: {otherCores: 0.2, cores: 2, threads: 2}})).not.toContain("other programs");
    });
});

describe("explainPlan", () => {
    it("puts the four sentences together and says whether the profile was reused", async () => {
        const model = fakeModel(2);
        const inputs = inputsFor(model, 512 * MiB);
        const result = await planStrategy("layers", inputs);
        const explanation = explainPlan(inputs, result, {budget: {kind: "mib", mib: 512}, gpu: {name: "Vulkan0", freeBytes: 2048 * MiB}, profile: {...measured, reused: true}});
        expect(explanation.profileReused).toBe(true);
        expect(explanation.budget).toContain("512 MiB of Vulkan0");
        expect(explanation.gpuLayers).toContain("output layer");
        expect(explanation.placement).toContain("Vulkan0");
    });
});
