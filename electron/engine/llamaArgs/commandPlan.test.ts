/**
 * A pasted llama.cpp command priced beside the plan, on Qwen3-30B-A3B's shape and a fake H100-like profile: the load it
 * builds is the one the same flags build in the planner's own baselines, a plan exported as a command reads back as the
 * same plan, and what this machine cannot run is refused by name.
 */
import {describe, expect, it} from "vitest";
import {renderLlamaCppFlags} from "../placement/llamaCppFlags.js";
import {planStrategy} from "../planner/planStrategy.js";
import type {StrategyInputs} from "../planner/strategies/StrategyResult.js";
import {handSettings} from "../planner/testing/handModel.js";
import {fakeModel, fakeModelOfShape, fakeProfile} from "../planner/testing/fakeProfile.js";
import type {PlannerModel} from "../planner/types.js";
import {resolveSyntheticShape} from "../writer/makeSyntheticModel.js";
import {commandLoad, compareCommand, type CommandMachine} from "./commandPlan.js";
import {parseLlamaCommand} from "./parseLlamaCommand.js";

const GiB = 2 ** 30;

function inputsFor(model: PlannerModel, budgetShare: number): StrategyInputs {
    return {
        cost: {model, profile: fakeProfile(model), gpuDevice: "CUDA0"},
        gpuBufferType: "CUDA0",
        budgetBytes: Math.round(model.weightBytes * budgetShare),
        settings: handSettings({useMmap: false, batchSize: 512, contextSize: 4096, threads: 16, flashAttention: true, kvOffload: true, opOffload: true}),
        workload: {promptTokens: 512, genTokens: 128}
    };
}

const moe = fakeModelOfShape(resolveSyntheticShape({preset: "qwen3-30b-a3b"}), "q8_0");
/** The same shape with 4 layers: the MILP of `optimal` over 48 layers takes minutes on 2 cores. */
const smallMoe = fakeModelOfShape(resolveSyntheticShape({preset: "qwen3-30b-a3b", layers: 4}), "q8_0");
const machine = (inputs: StrategyInputs, freeBytes = 80 * GiB): CommandMachine => ({gpu: {name: "CUDA0", freeBytes}, trainedContextSize: inputs.settings.contextSize});

describe("a llama.cpp command priced beside the plan", () => {
    it("-ngl 99 --n-cpu-moe N builds the n-cpu-moe baseline's placement and is predicted the same", async () => {
        const inputs = inputsFor(moe, 0.5);
        const baseline = await planStrategy("n-cpu-moe", inputs);
        const n = Number(/--n-cpu-moe (\d+)/.exec(baseline.notes[0]!)![1]);
        const command = parseLlamaCommand(`llama-server -m q.gguf -ngl 99 --n-cpu-moe ${n} -c 4096 -ub 512 -t 16 -fa on -lm none`);
        const compared = await compareCommand(command, inputs, baseline, machine(inputs), null);
        expect(compared.refused).toEqual([]);
        expect([...compared.priced!.resolved.onGpu].sort()).toEqual([...baseline.resolved.onGpu].sort());
        expect(compared.priced!.prediction.requestMs).toBeCloseTo(baseline.prediction.requestMs, 6);
        expect(compared.differences).toEqual([]);
        expect(compared.knobDifferences).toEqual([]);
    });

    it("a plan exported as llama-server's command reads back as the same plan: tensors, layers and knobs", async () => {
        for (const [model, strategy, share] of [[smallMoe, "optimal", 0.25], [smallMoe, "optimal", 0.5], [smallMoe, "n-cpu-moe", 0.5],
            [fakeModel(), "layers", 0.5], [fakeModel(), "optimal", 0.4], [fakeModel(), "cpu", 0.5]] as const) {
            const inputs = inputsFor(model, share);
            const plan = await planStrategy(strategy, inputs);
            const rendered = renderLlamaCppFlags(plan, {program: "llama-server", modelPath: "/m/q.gguf", layerCount: model.layerCount,
                tensorNames: model.tensors.map((t) => t.name)});
            const what = `${strategy} ${share}: ${rendered.command}`;
            const {load, refused} = commandLoad(parseLlamaCommand(rendered.command), inputs, machine(inputs));
            expect(refused, what).toEqual([]);
            const compared = await compareCommand(parseLlamaCommand(rendered.command), inputs, plan, machine(inputs), null);
            expect([...compared.priced!.resolved.onGpu].sort(), what).toEqual(plan.settings.useGpu ? [...plan.resolved.onGpu].sort() : []);
            for (const knob of ["batchSize", "useMmap", "useGpu", "opOffload", "kvOffload", "flashAttention", "kvCacheType", "contextSize", "threads"] as const)
                expect(load!.settings[knob], `${knob} of ${what}`).toBe(plan.settings[knob]);
            expect(compared.differences, what).toEqual([]);
            expect(compared.priced!.prediction.requestMs, what).toBeCloseTo(plan.prediction.requestMs, 6);
        }
    });

    it("prices what the command does differently from the plan, group by group, and says which knobs differ", async () => {
        const inputs = inputsFor(moe, 0.5);
        const plan = await planStrategy("n-cpu-moe", inputs);
        // every expert on the CPU, a smaller micro-batch and no flash attention
        const compared = await compareCommand(parseLlamaCommand("llama-server -ngl 99 --cpu-moe -c 4096 -ub 256 -t 16 -fa off -lm none"),
            inputs, plan, machine(inputs), null);
        expect(compared.differences.length).toBeGreaterThan(0);
        for (const difference of compared.differences) {
            expect([difference.command, difference.plan]).toEqual(["CPU", "GPU"]);
            expect(difference.what).toMatch(/^ffn_(up|down|gate)_exps × \d+ \(blk\.\d+–\d+\)$/);
            // experts the plan keeps on the GPU cost time when moved to the host
            expect(difference.requestMsDelta).toBeGreaterThan(0);
        }
        expect(compared.knobDifferences).toEqual(["micro-batch: 256 in the command, 512 in the plan", "flash attention: off in the command, on in the plan"]);
    });

    it("says by how much a command does not fit the GPU's free memory", async () => {
        const inputs = inputsFor(moe, 0.5);
        const plan = await planStrategy("n-cpu-moe", inputs);
        const compared = await compareCommand(parseLlamaCommand("llama-server -ngl 99 -c 4096"), inputs, plan, machine(inputs, 8 * GiB), null);
        expect(compared.priced!.fits).toBe(false);
        expect(compared.overshootBytes).toBeGreaterThan(GiB);
        expect(compared.overshootBytes).toBeCloseTo(compared.priced!.prediction.vram.total - 8 * GiB, -3);
    });

    it("refuses what this machine cannot run, by name: another machine's device, a multi-GPU split, mixed KV types", () => {
        const inputs = inputsFor(fakeModel(), 0.5);
        const refused = (line: string) => commandLoad(parseLlamaCommand(line), inputs, machine(inputs)).refused.map((note) => note.flag);
        expect(refused("llama-server -ngl 99 -ot 'ffn_down=Vulkan0'")).toEqual(["-ot ffn_down=Vulkan0"]);
        expect(refused("llama-server -ngl 99 -ts 3,1")).toEqual(["-ts"]);
        expect(refused("llama-server -ngl 99 -sm row")).toEqual(["-sm"]);
        expect(refused("llama-server -ngl 99 -dev CUDA1")).toEqual(["-dev"]);
        expect(refused("llama-server -ngl 99 -mg 1")).toEqual(["-mg"]);
        expect(refused("llama-server -ngl 99 -ctk q8_0 -ctv f16")).toEqual(["-ctk/-ctv"]);
        expect(refused("llama-server -ngl 99 -ctk q5_1 -ctv q5_1")).toEqual(["-ctk"]);
        expect(refused("llama-server -ngl 99 --no-repack")).toEqual(["--no-repack"]);
        // the parser's own refusals travel too
        expect(refused("llama-server -ngl lots")).toEqual(["-ngl"]);
        // and what it can run is not refused: -dev none is a CPU-only load
        const cpu = commandLoad(parseLlamaCommand("llama-server -dev none -ngl 99"), inputs, machine(inputs));
        expect([cpu.refused, cpu.load?.settings.useGpu, cpu.load?.gpuLayers]).toEqual([[], false, 0]);
    });

    it("fills llama.cpp's defaults where the command says nothing, and says so", () => {
        const inputs = inputsFor(fakeModel(), 0.5);
        const {load} = commandLoad(parseLlamaCommand("llama-server -ngl 10"), {...inputs}, {gpu: {name: "CUDA0", freeBytes: GiB}, trainedContextSize: 32768});
        expect(load!.settings).toMatchObject({contextSize: 32768, batchSize: 512, useMmap: true, flashAttention: true, kvOffload: true, opOffload: true});
        expect(load!.notes.join(" ")).toMatch(/trained context, 32768 tokens/);
        expect(load!.notes.join(" ")).toMatch(/-fa auto/);
    });
});
