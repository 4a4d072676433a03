// Needs a GPU device: Mesa's software Vulkan (llvmpipe) here and in CI. Skipped, with the reason, where there is none.
// A Mixtral-style MoE written by our own GGUF writer: expert placements compiled to overrides are loaded by llama.cpp,
// whose own tensor assignment (its "buffer type overridden" debug lines) must equal the plan, and the model computes
// the same greedy reply with its experts on the Vulkan device as on the CPU alone.
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Token} from "node-llama-cpp";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {inspectGguf, type InspectedModel} from "../gguf/inspectGguf.js";
import {validateGgufFile} from "../gguf/validateGguf.js";
import {PlacedModel} from "../runtime/PlacedModel.js";
import {generateGreedy} from "../runtime/generateGreedy.js";
import {maxProbabilityDifference, teacherForcedProbabilities} from "../runtime/teacherForcedProbabilities.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {confirmedTensors, OverrideLog} from "../testing/overrideLog.js";
import {compilePlacement} from "./compilePlacement.js";
import {cpuMoeOverrides, nCpuMoeOverrides} from "./moeFlags.js";
import type {Placement, TensorBufferOverride} from "./Placement.js";

const overrideLog = new OverrideLog();
const probe = await probeEngine("vulkan", overrideLog.engineOptions);
if (probe.reason != null)
    console.warn(`[skip] Vulkan MoE placement tests: ${probe.reason}`);

const PROMPT = "The quick brown fox jumps over the lazy dog";

describe.skipIf(probe.reason != null)("mixture-of-experts placement on a real second device (Vulkan)", () => {
    let engine: EngineLlama;
    let modelPath: string;
    let model: InspectedModel;

    beforeAll(async () => {
        modelPath = await makeTestModel("vk-mixtral-mini", {preset: "mixtral-mini", type: "f16", seed: 5});
        model = inspectGguf(await validateGgufFile(modelPath));
        engine = probe.engine!;
    });
    afterAll(async () => {
        await engine?.llama.dispose();
    });

    function hostPlacement(pick: (role: string, layer: number) => boolean): Placement {
        const assignments: Record<string, string> = {};
        for (const t of model.tensors)
            if (t.layer != null && pick(t.role, t.layer)) assignments[t.name] = "CPU";
        return {defaultBufferType: "Vulkan0", assignments};
    }

    /** The tensors llama.cpp reports moving to host memory when loading with `overrides`. */
    async function confirmedHost(overrides: readonly TensorBufferOverride[]): Promise<string[]> {
        const confirmed = await overrideLog.confirmedBy(async () => {
            const placed = await PlacedModel.load(engine, {modelPath, overrides, contextSize: 256});
            await placed.dispose();
        });
        expect(confirmed.every((entry) => entry.bufferType === "Vulkan_Host")).toBe(true);
        return confirmedTensors(confirmed);
    }

    it("llama.cpp assigns exactly the planned expert weights to host memory, for per-kind, --n-cpu-moe and --cpu-moe plans", async () => {
        const plans: {name: string; placement: Placement; llamaCpp?: TensorBufferOverride[]}[] = [
            {name: "up+down experts of layers 0–1, gate experts of layer 3", placement: hostPlacement((role, layer) =>
                ((role === "ffn_up_exps" || role === "ffn_down_exps") && layer < 2) || (role === "ffn_gate_exps" && layer === 3))},
            {name: "--n-cpu-moe 2", placement: hostPlacement((role, layer) => role.endsWith("_exps") && layer < 2), llamaCpp: nCpuMoeOverrides(2)},
            {name: "--cpu-moe", placement: hostPlacement((role) => role.endsWith("_exps")), llamaCpp: cpuMoeOverrides()}
        ];
        for (const plan of plans) {
            const {overrides} = compilePlacement(plan.placement, model.tensors);
            const planned = Object.keys(plan.placement.assignments).sort();
            expect(await confirmedHost(overrides), plan.name).toEqual(planned);
            // llama.cpp's own flag regexes (common/common.h) move the same tensors
            if (plan.llamaCpp != null) expect(await confirmedHost(plan.llamaCpp), `${plan.name}, llama.cpp's regexes`).toEqual(planned);
        }
    }, 240_000);

    it("gives the same greedy reply and next-token distributions with the experts on Vulkan0, on the host, and all on the CPU", async () => {
        const variants = [
            {name: "all on CPU", options: {gpuLayers: 0}},
            {name: "experts on Vulkan0 (all offloaded)", options: {gpuLayers: "max" as const}},
            {name: "--cpu-moe", options: {overrides: compilePlacement(hostPlacement((role) => role.endsWith("_exps")), model.tensors).overrides}}
        ];
        // 40 prompt tokens ≥ 32: for --cpu-moe the prompt's host-resident MUL_MAT_ID ops are offloaded to Vulkan0,
        // copying only the experts the micro-batch uses
        const prompt = `${PROMPT}. ${PROMPT}. ${PROMPT}.`;
        const runs: {name: string; tokens: Token[]; probabilities: Map<Token, number>[]; ms: number}[] = [];
        let forced: Token[] | null = null;
        for (const variant of variants) {
            const started = performance.now();
            const placed = await PlacedModel.load(engine, {modelPath, contextSize: 256, ...variant.options});
            try {
                const tokens = [...(await generateGreedy(placed, prompt, {maxTokens: 6, stopAtEog: false})).tokens];
                forced ??= tokens;
                runs.push({name: variant.name, tokens, probabilities: await teacherForcedProbabilities(placed, prompt, forced), ms: performance.now() - started});
            } finally {
                await placed.dispose();
            }
        }
        const [cpu] = runs;
        console.log("MoE placements:", runs.map((r) => `${r.name}: [${r.tokens.join(",")}] in ${r.ms.toFixed(0)} ms, ` +
            `max |Δp| vs CPU ${maxProbabilityDifference(cpu!.probabilities, r.probabilities).toExponential(1)}`).join(" | "));
        for (const run of runs.slice(1)) {
            expect(run.tokens, run.name).toEqual(cpu!.tokens);
            // llvmpipe's and the CPU's kernels sum in different orders: next-token probabilities agree to 1e-3
            expect(maxProbabilityDifference(cpu!.probabilities, run.probabilities), run.name).toBeLessThanOrEqual(1e-3);
        }
        // the distributions are not degenerate: the model's top token is not certain
        expect(Math.max(...cpu!.probabilities[0]!.values())).toBeLessThan(0.99);
    }, 400_000);
});
