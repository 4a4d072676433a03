// Needs a GPU device: Mesa's software Vulkan (llvmpipe) here and in CI. Skipped, with the reason, where there is none.
// Auto-offload of a mixture-of-experts model end to end, through the engine service the app and `tensorwise chat
// --auto` both use: profile (dense matmuls and MUL_MAT_ID), plan under a budget, load, chat. The load must hold what
// the plan says (llama.cpp's own tensor assignment and its measured bytes per device), and the greedy reply and
// next-token distributions must match an all-CPU load of the same model.
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {Token} from "node-llama-cpp";
import {isHostBufferType} from "../contract/memory.js";
import type {LoadedModelState} from "../contract/ipc.js";
import {generateGreedy} from "../engine/runtime/generateGreedy.js";
import {PlacedModel} from "../engine/runtime/PlacedModel.js";
import {maxProbabilityDifference, teacherForcedProbabilities} from "../engine/runtime/teacherForcedProbabilities.js";
import {probeEngine} from "../engine/testing/probeEngine.js";
import {makeTestModel} from "../engine/testing/testModels.js";
import {confirmedTensors, OverrideLog} from "../engine/testing/overrideLog.js";
import {EngineService} from "./EngineService.js";

// The service makes its engine as the app does; the probe decides whether this file can run. One engine per process:
// node-llama-cpp's log callback stays with the first llama instance, and llama.cpp's override lines are read from it.
const overrideLog = new OverrideLog();
let created = null as EngineService | null;
const probe = await probeEngine("vulkan", overrideLog.engineOptions, async (options) => {
    created = await EngineService.create({gpu: options.gpu, maxThreads: options.maxThreads, logLevel: options.logLevel, onLog: options.onLog});
    return created.engine;
});
if (probe.reason != null)
    console.warn(`[skip] Vulkan MoE auto-offload tests: ${probe.reason}`);

const SENTENCE = "The quick brown fox jumps over the lazy dog";
// ≥ 32 prompt tokens: the prompt's host-resident MUL_MAT_ID ops are offloaded to Vulkan0, copying only the used experts
const PROMPT = `${SENTENCE}. ${SENTENCE}. ${SENTENCE}.`;

describe.skipIf(probe.reason != null)("auto-offload of a mixture-of-experts model on a real second device (Vulkan)", () => {
    let service: EngineService;
    let modelPath: string;
    let state: LoadedModelState;

    beforeAll(async () => {
        modelPath = await makeTestModel("vk-auto-mixtral-mini", {preset: "mixtral-mini", type: "f16", seed: 5});
        service = created!;
        // 60% of the weights (≈ 16 MiB with the KV cache and compute buffer): some weights must stay in host memory
        state = await service.autoOffload({
            // cpu-moe: a mixed plan by construction (on llvmpipe, which shares the CPU, `optimal` may rightly keep
            // everything on the CPU); the optimal plan is checked against llama.cpp's assignment below
            path: modelPath, budget: {kind: "percent", percent: 60}, settings: {contextSize: 512, threads: 2}, strategy: "cpu-moe", taskId: "moe-auto"
        });
    }, 600_000);
    afterAll(async () => {
        await service?.dispose();
    });

    /** Tensors a plan puts in host memory, from the placement map the app shows. */
    function plannedHost({placement}: LoadedModelState = state): string[] {
        const host = (bufferType: string | null): boolean => bufferType != null && bufferType !== placement.defaultBufferType;
        const names = placement.grid.flatMap((row, layer) => row.flatMap((bufferType, i) => host(bufferType) ? [`blk.${layer}.${placement.roles[i]}.weight`] : []));
        return [...names, ...placement.globals.filter((g) => host(g.bufferType) && g.name !== "token_embd.weight").map((g) => g.name)].sort();
    }

    it("plans a mixed placement with the experts as their own group, and the load holds exactly the planned bytes per side", () => {
        expect(state.card.experts).toEqual({count: 8, used: 2});
        expect(state.placement.strategy).toBe("cpu-moe");
        expect([...state.placement.expertRoles ?? []].sort()).toEqual(["ffn_down_exps", "ffn_gate_exps", "ffn_up_exps"]);
        expect(state.prediction).not.toBeNull();
        // the engine's planned-vs-measured comparison (the Memory screen's), summed over the GPU memories
        const gpus = state.memory.devices.filter((device) => device.kind === "gpu");
        const memory = {
            planned: {deviceBytes: gpus.reduce((sum, device) => sum + (device.planned?.weightsBytes ?? 0), 0)},
            measured: {deviceBytes: gpus.reduce((sum, device) => sum + device.measured.weightsBytes, 0)}
        };
        console.log(`MoE auto-offload: ${state.placement.llamaCppFlags}\n  planned device ${memory.planned.deviceBytes} B, measured ${memory.measured.deviceBytes} B; ` +
            `predicted TTFT ${state.prediction!.ttftMs?.toFixed(1)} ms, TPOT ${state.prediction!.tpotMs?.toFixed(1)} ms`);
        expect(memory.planned.deviceBytes).toBeGreaterThan(0);
        expect(plannedHost().length).toBeGreaterThan(0);
        // llama.cpp pads each tensor in its buffer: equal up to that
        expect(Math.abs(memory.measured.deviceBytes - memory.planned.deviceBytes)).toBeLessThan(64 * 1024);
    });

    it("chats through the service, and replies greedily as the all-CPU load does", async () => {
        const reply = await service.chat({streamId: "moe", history: [], message: SENTENCE, maxTokens: 2, temperature: 0}, () => {});
        expect(reply.timing.generatedTokens).toBeGreaterThan(0);

        const runs: {name: string; tokens: Token[]; probabilities: Map<Token, number>[]}[] = [];
        let forced: Token[] | null = null;
        const measure = async (name: string): Promise<void> => {
            const placed = service.placedModel()!;
            const tokens = [...(await generateGreedy(placed, PROMPT, {maxTokens: 4, stopAtEog: false})).tokens];
            forced ??= tokens;
            runs.push({name, tokens, probabilities: await teacherForcedProbabilities(placed, PROMPT, forced)});
        };
        await measure("auto-offload");
        await service.load({path: modelPath, gpuLayers: 0, settings: {contextSize: 512, threads: 2}, taskId: "moe-cpu"});
        await measure("all on CPU");
        const [auto, cpu] = runs;
        console.log(`greedy: auto-offload [${auto!.tokens.join(",")}], CPU [${cpu!.tokens.join(",")}], ` +
            `max |Δp| ${maxProbabilityDifference(cpu!.probabilities, auto!.probabilities).toExponential(1)}`);
        expect(auto!.tokens).toEqual(cpu!.tokens);
        // llvmpipe's and the CPU's kernels sum in different orders: next-token probabilities agree to 1e-3
        expect(maxProbabilityDifference(cpu!.probabilities, auto!.probabilities)).toBeLessThanOrEqual(1e-3);
        // the distributions are not degenerate: the model's top token is not certain
        expect(Math.max(...cpu!.probabilities[0]!.values())).toBeLessThan(0.99);
    }, 900_000);
    /** The tensors llama.cpp reports moving to host memory when loading `loaded`'s overrides (every one a host buffer type). */
    async function confirmedHost(loaded: LoadedModelState): Promise<string[]> {
        const confirmed = await overrideLog.confirmedBy(async () => {
            const placed = await PlacedModel.load(service.engine, {
                modelPath, gpuLayers: loaded.placement.gpuLayers, overrides: loaded.placement.overrides, contextSize: 256, useMmap: false
            });
            await placed.dispose();
        });
        expect(confirmed.every((entry) => isHostBufferType(entry.bufferType, loaded.measured.bufferTypes))).toBe(true);
        return confirmedTensors(confirmed);
    }

    it("llama.cpp assigns exactly the planned tensors to host memory, for the cpu-moe, optimal and auto-tuned --n-cpu-moe plans", async () => {
        expect(await confirmedHost(state)).toEqual(plannedHost(state));
        const optimal = await service.autoOffload({
            path: modelPath, budget: {kind: "percent", percent: 60}, settings: {contextSize: 512, threads: 2}, taskId: "moe-optimal"
        });
        console.log(`optimal auto plan: ${optimal.placement.llamaCppFlags}`);
        // the optimal plan may be a plain layer split or all-CPU (no overrides to check)
        if (optimal.placement.overrides.length > 0) expect(await confirmedHost(optimal)).toEqual(plannedHost(optimal));
        const nCpuMoe = await service.autoOffload({
            path: modelPath, budget: {kind: "percent", percent: 60}, settings: {contextSize: 512, threads: 2}, strategy: "n-cpu-moe", taskId: "moe-n-cpu-moe"
        });
        const host = plannedHost(nCpuMoe);
        console.log(`n-cpu-moe auto plan: ${nCpuMoe.placement.llamaCppFlags}`);
        expect(host.length).toBeGreaterThan(0);
        expect(host.every((name) => /_exps\.weight$/.test(name))).toBe(true);
        expect(await confirmedHost(nCpuMoe)).toEqual(host);
    }, 600_000);

    it("a user's llama.cpp command, loaded as asked: llama.cpp assigns exactly the tensors the command was read to move", async () => {
        // MoE recipes as users paste them: an -ot regex, --n-cpu-moe, llama-bench's ;-joined overrides
        for (const line of [
            "llama-server -m model.gguf -ngl 99 -ot '\\.ffn_.*_exps\\.=CPU' -c 512 -t 2 --port 8080",
            "llama-server -ngl 99 --n-cpu-moe 2 -c 512 -t 2 -fa off",
            "llama-bench -m model.gguf -ngl 99 -ot 'blk\\.[01]\\.ffn_(up|gate)_exps=CPU;blk\\.3\\.ffn_down_exps=CPU' -t 2 -p 64 -n 16"
        ]) {
            const loaded = await service.autoOffload({
                path: modelPath, budget: {kind: "percent", percent: 60}, settings: {contextSize: 512, threads: 2}, taskId: "moe-command",
                llamaCommand: {line, load: "command"}
            });
            expect(loaded.placement.strategy, line).toBe("command");
            expect(loaded.command?.loaded).toBe("command");
            expect(loaded.command?.priced?.fits, line).toBe(true);
            const host = plannedHost(loaded);
            console.log(`${line}\n  → ${loaded.placement.llamaCppFlags}; host: ${host.join(" ")}`);
            expect(host.length, line).toBeGreaterThan(0);
            expect(await confirmedHost(loaded), line).toEqual(host);
        }
        // what cannot be priced here is named, and the plan loads instead
        const refused = await service.autoOffload({
            path: modelPath, budget: {kind: "percent", percent: 60}, settings: {contextSize: 512, threads: 2}, taskId: "moe-command-refused",
            llamaCommand: {line: "llama-server -ngl 99 -ts 3,1 -ot 'ffn_up_exps=CUDA0'", load: "plan"}
        });
        expect(refused.placement.strategy).toBe("optimal");
        expect(refused.command?.priced).toBeNull();
        expect(refused.command?.refused.map((note) => note.flag)).toEqual(["-ts", "-ot ffn_up_exps=CUDA0"]);
        // and asking to load it says why not, loading nothing else
        await expect(service.autoOffload({
            path: modelPath, budget: {kind: "percent", percent: 60}, settings: {contextSize: 512, threads: 2}, taskId: "moe-command-refused-load",
            llamaCommand: {line: "llama-server -ngl 99 -ts 3,1", load: "command"}
        })).rejects.toThrow(/cannot be loaded here: -ts/);
    }, 600_000);
});
