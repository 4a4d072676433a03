// Needs a GPU device: Mesa's software Vulkan (llvmpipe) here and in CI. Skipped, with the reason, where there is none.
// The prediction check (validatePredictions.ts): predicted vs measured TTFT/TPOT/VRAM for a few placements. llvmpipe shares the
// CPU with the "CPU" device, so only sanity is asserted; the table is printed for the record.
import {mkdtempSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {checkWithSimulation, prepareStrategyInputs} from "./autoPlan.js";
import {planStrategy} from "./planStrategy.js";
import {perTensor} from "./resolvePlacement.js";
import {finishPlan} from "./strategies/StrategyResult.js";
import {formatPredictionTable, validatePredictions, type PredictionCase} from "./validatePredictions.js";

const probe = await probeEngine("vulkan");
if (probe.reason != null)
    console.warn(`[skip] prediction check on Vulkan: ${probe.reason}`);

describe.skipIf(probe.reason != null)("predicted vs measured TTFT/TPOT/VRAM on the Vulkan device", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });

    it("loads cpu, layers 50%, optimal 50% and an FFN-on-host plan and reports the error per cell", async () => {
        const engine = probe.engine!;
        const modelPath = await makeTestModel("predict-small", {preset: "small", layers: 4, type: "f16"});
        const cacheDir = mkdtempSync(path.join(os.tmpdir(), "tensorwise-profile-"));
        const started = performance.now();
        const {inputs, simulator} = await prepareStrategyInputs(engine, modelPath, {
            budget: {kind: "percent", percent: 50},
            workload: {promptTokens: 64, genTokens: 16},
            settings: {contextSize: 512, batchSize: 256, threads: 2},
            profile: {cacheDir}
        });
        const prepareMs = performance.now() - started;
        const cases: PredictionCase[] = [];
        for (const strategy of ["cpu", "layers", "optimal"] as const) {
            const plan = await checkWithSimulation(simulator!, inputs, strategy, await planStrategy(strategy, inputs));
            cases.push({label: strategy === "cpu" ? "cpu" : `${strategy} 50%`, plan});
        }
        const {model} = inputs.cost;
        const ffn = new Set(model.tensors.filter((t) => t.layer != null && ["ffn_gate", "ffn_up", "ffn_down"].includes(t.role)).map((t) => t.name));
        const ffnPlan = finishPlan({...inputs, budgetBytes: Number.MAX_SAFE_INTEGER}, "optimal", perTensor(model, ffn),
            {...inputs.settings, useMmap: false}, ["FFN on host"]);
        cases.push({label: "ffn-on-host", plan: await checkWithSimulation(simulator!, {...inputs, budgetBytes: Number.MAX_SAFE_INTEGER}, "optimal", ffnPlan)});

        const rows = await validatePredictions(engine, modelPath, cases, {warmupRuns: 1, runs: 2});
        console.log(`prediction check (llvmpipe, small f16 4 layers, ctx 512, threads 2; profile + simulation ${(prepareMs / 1000).toFixed(1)} s; ` +
            `decode overhead ${((inputs.cost.profile.decodeOverheadUs ?? 0) / 1000).toFixed(2)} ms + ${((inputs.cost.profile.decodePerLayerUs ?? 0) / 1000).toFixed(3)} ms/layer)\n${formatPredictionTable(rows)}`);
        expect(rows).toHaveLength(cases.length);
        for (const row of rows) {
            for (const value of [row.predictedTtftMs, row.measuredTtftMs, row.predictedTpotMs, row.measuredTpotMs])
                expect(Number.isFinite(value) && value > 0).toBe(true);
            expect(Number.isFinite(row.ttftErrorPct) && Number.isFinite(row.tpotErrorPct)).toBe(true);
        }
        // VRAM is llama.cpp's own simulation of the same plan: exact up to tensor padding
        for (const row of rows.filter((r) => r.label !== "cpu"))
            expect(Math.abs(row.vramErrorPct)).toBeLessThan(1);
    }, 600_000);
});
