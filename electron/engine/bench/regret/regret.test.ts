import {describe, expect, it} from "vitest";
import {ALL_GPU_LAYERS, configArgv, configFlags, configKey, type RegretConfig} from "./regretConfig.js";
import {cellUbatches, defaultLayerSplits, defaultThreadCounts, enumerateRegretGrid, kvCombinations, regretPlacements, type RegretGridOptions} from "./regretGrid.js";
import {PlanDoesNotFit, planToConfig, UnknownPlanField} from "./planConfig.js";
import {DEFAULT_MIN_PHASE_LIMIT_MS, phaseLimitMs, phaseOfLine, PruneMonitor} from "./pruneRule.js";
import {contextKeyOfConfig, contextKeyOfEntry, gpuBytesOf, parseProbeLog, probeContextFlags} from "./probeMemory.js";
import {cellVerdict, explainMiss, inertFields, rankByBruteForce, verdictTable} from "./regretReport.js";

const dense = {layerCount: 3, moe: false};
const moe = {layerCount: 4, moe: true};
const full: RegretGridOptions = {threads: [1, 2]};
const base: RegretConfig = {hideGpu: false, gpuLayers: 0, overrides: [], cpuMoeLayers: 0, ubatch: 512, opOffload: true, typeK: "f16", typeV: "f16",
    flashAttention: false, kvOffload: true, threads: 2, mmap: false};

/** A `tensorwise plan --json` of today's shape (the tiny model, CPU-only plan with llvmpipe visible). */
function planJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
        strategy: "optimal", fits: true, reason: null, gpuLayers: 0,
        settings: {contextSize: 2048, batchSize: 512, threads: 2, useMmap: false},
        prediction: {ttftMs: 124, tpotMs: 0.2}, bytesPerBufferType: {CPU: 1313280}, overrides: [],
        placement: {defaultBufferType: "Vulkan0", assignments: {"output.weight": "CPU"}},
        llamaCppFlags: {argv: ["-m", "/tmp/tiny.gguf", "-ngl", "0", "-ub", "512", "-t", "2", "--load-mode", "none"], command: "llama-cli …", notes: []},
        notes: [], explanation: {placement: "…"},
        ...overrides
    };
}

describe("the regret grid", () => {
    it("places: GPU hidden, -ngl 0, the splits, all, and FFN → CPU on a dense model; experts → CPU (half, all) on a MoE", () => {
        expect(regretPlacements(dense).map((p) => p.label)).toEqual(["GPU hidden", "-ngl 0", "-ngl 1", "-ngl 2", "-ngl all", "-ngl all, FFN → CPU"]);
        expect(regretPlacements(moe).map((p) => p.label)).toEqual(["GPU hidden", "-ngl 0", "-ngl 1", "-ngl 2", "-ngl 3", "-ngl all",
            "-ngl all, experts of 2 layers → CPU", "-ngl all, experts → CPU"]);
        expect(defaultLayerSplits(32)).toEqual([8, 16, 24]);
        expect(regretPlacements(dense, {placements: ["hidden"]})).toHaveLength(1);
    });

    it("clamps micro-batches to the prompt and runs decode at the smallest", () => {
        expect(cellUbatches({kind: "ttft", tokens: 64}, [16, 128, 512, 2048])).toEqual([16, 64]);
        expect(cellUbatches({kind: "ttft", tokens: 2048}, [16, 128, 512, 2048])).toEqual([16, 128, 512, 2048]);
        expect(cellUbatches({kind: "tpot", tokens: 32}, [512, 16, 128])).toEqual([16]);
    });

    it("pairs a quantized V cache only with flash attention", () => {
        const combos = kvCombinations(["f16", "q8_0"], ["f16", "q8_0"], [false, true]).map((c) => `${c.typeK}/${c.typeV}/${c.flashAttention ? 1 : 0}`);
        expect(combos).toEqual(["f16/f16/0", "q8_0/f16/0", "f16/f16/1", "f16/q8_0/1", "q8_0/f16/1", "q8_0/q8_0/1"]);
    });

    it("crosses op offload only where it can happen: GPU in use, host weights, a prompt, a micro-batch ≥ the threshold", () => {
        const configs = enumerateRegretGrid(dense, {kind: "ttft", tokens: 512}, {...full, typesK: ["f16"], typesV: ["f16"], flashAttention: [false], mmap: [false], threads: [1]});
        const noOffload = configs.filter((c) => !c.opOffload);
        expect(noOffload.length).toBeGreaterThan(0);
        expect(noOffload.every((c) => !c.hideGpu && c.ubatch >= 32 && (c.gpuLayers < ALL_GPU_LAYERS || c.overrides.length > 0))).toBe(true);
        // -ngl all keeps no weight matrix on the host: one setting per micro-batch
        expect(configs.filter((c) => c.gpuLayers === ALL_GPU_LAYERS && c.overrides.length === 0)).toHaveLength(3);
        const decode = enumerateRegretGrid(dense, {kind: "tpot", tokens: 32}, {...full, threads: [1]});
        expect(decode.every((c) => c.opOffload && c.ubatch === 16)).toBe(true);
        expect(enumerateRegretGrid(dense, {kind: "ttft", tokens: 512}, {...full, offloadMinBatch: 1024, threads: [1]}).every((c) => c.opOffload)).toBe(true);
    });

    it("crosses mmap only with host weights and never repeats a configuration", () => {
        const configs = enumerateRegretGrid(moe, {kind: "ttft", tokens: 2048}, full);
        expect(new Set(configs.map(configKey)).size).toBe(configs.length);
        expect(configs.filter((c) => c.gpuLayers === ALL_GPU_LAYERS && c.cpuMoeLayers === 0).every((c) => !c.mmap)).toBe(true);
        expect(configs.filter((c) => c.hideGpu).every((c) => c.opOffload && c.kvOffload && c.gpuLayers === 0)).toBe(true);
        expect(configs.some((c) => c.hideGpu && c.mmap)).toBe(true);
        // placements 8 × settings; the hidden GPU alone: 4 ub × 6 KV/FA × 2 threads × 2 mmap
        expect(configs.filter((c) => c.hideGpu)).toHaveLength(4 * 6 * 2 * 2);
    });

    it("uses every core count on small machines and a ladder on large ones", () => {
        expect(defaultThreadCounts(2)).toEqual([1, 2]);
        expect(defaultThreadCounts(16)).toEqual([1, 4, 8, 16]);
        expect(() => defaultThreadCounts(0)).toThrow(RangeError);
    });
});

describe("llama-bench flags of a configuration", () => {
    it("writes every knob, -b only above 2048, -ot pairs joined with ;", () => {
        expect(configFlags({...base, hideGpu: true})).toEqual(["-dev", "none", "-ngl", "0", "-ub", "512", "-ctk", "f16", "-ctv", "f16", "-fa", "0", "-t", "2", "-lm", "none"]);
        expect(configFlags({...base, gpuLayers: ALL_GPU_LAYERS, overrides: [["a", "CPU"], ["b", "CPU"]], ubatch: 4096, opOffload: false, kvOffload: false, flashAttention: true, typeV: "q8_0", mmap: true}))
            .toEqual(["-ngl", "999", "-ot", "a=CPU;b=CPU", "-b", "4096", "-ub", "4096", "-nopo", "1", "-ctk", "f16", "-ctv", "q8_0", "-fa", "1", "-nkvo", "1", "-t", "2", "-lm", "mmap"]);
        expect(() => configFlags({...base, overrides: [["a,b", "CPU"]]})).toThrow(/-ot/);
        expect(configArgv(base, {modelPath: "m.gguf", cell: {kind: "tpot", tokens: 32}, repeats: 3}).slice(-9)).toEqual(["-p", "0", "-n", "32", "-r", "3", "-o", "json", "--progress"]);
    });
});

describe("tensorwise's plan as llama-bench flags", () => {
    it("maps today's plan fields, with what the runtime does where the plan says nothing", () => {
        const {config, contextSize} = planToConfig(planJson(), dense);
        expect(contextSize).toBe(2048);
        expect(configFlags(config)).toEqual(["-ngl", "0", "-ub", "512", "-ctk", "f16", "-ctv", "f16", "-fa", "0", "-t", "2", "-lm", "none"]);
        const moePlan = planToConfig(planJson({gpuLayers: "max", overrides: [{pattern: "\\.ffn_up_exps", bufferType: "Vulkan_Host"}],
            llamaCppFlags: {argv: ["-ngl", "999", "--cpu-moe", "-ub", "512", "-t", "2", "--load-mode", "none"]}}), moe);
        expect(moePlan.config.gpuLayers).toBe(ALL_GPU_LAYERS);
        expect(moePlan.config.overrides).toEqual([["\\.ffn_up_exps", "CPU"]]);
    });

    it("maps the configuration knobs: GPU use, op offload, KV offload, flash attention, KV cache type", () => {
        const knobs = {useGpu: true, opOffload: false, kvOffload: false, flashAttention: true, kvCacheType: "q8_0"};
        const {config} = planToConfig(planJson({settings: {contextSize: 2048, batchSize: 512, threads: 2, useMmap: false, ...knobs},
            llamaCppFlags: {argv: ["-ngl", "0", "-ub", "512", "-t", "2", "--load-mode", "none", "--no-op-offload", "-nkvo", "-fa", "on", "-ctk", "q8_0", "-ctv", "q8_0"]}}), dense);
        expect(configFlags(config)).toEqual(["-ngl", "0", "-ub", "512", "-nopo", "1", "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "1", "-nkvo", "1", "-t", "2", "-lm", "none"]);
        const hidden = planToConfig(planJson({settings: {contextSize: 2048, batchSize: 512, threads: 2, useMmap: true, useGpu: false, opOffload: true, kvOffload: true, flashAttention: false, kvCacheType: "f16"},
            llamaCppFlags: {argv: ["-ngl", "0", "-ub", "512", "-t", "2", "-dev", "none", "-fa", "off"]}}), dense);
        expect(configFlags(hidden.config).slice(0, 4)).toEqual(["-dev", "none", "-ngl", "0"]);
        // the command and the fields must agree
        expect(() => planToConfig(planJson({settings: {contextSize: 2048, batchSize: 512, threads: 2, useMmap: false, ...knobs},
            llamaCppFlags: {argv: ["-ngl", "0", "-ub", "512", "-fa", "off"]}}), dense)).toThrow(/-fa off/);
    });

    it("refuses a field it does not know, at the top, in settings, in placement, in an override", () => {
        expect(() => planToConfig(planJson({opOffload: false}), dense)).toThrow(UnknownPlanField);
        expect(() => planToConfig(planJson({settings: {contextSize: 2048, batchSize: 512, threads: 2, useMmap: false, swaFull: true}}), dense))
            .toThrow(/settings\.swaFull/);
        expect(() => planToConfig(planJson({settings: {contextSize: 2048, batchSize: 512, threads: 2, useMmap: false, kvCacheType: "q3_k"}}), dense))
            .toThrow(/kvCacheType/);
        expect(() => planToConfig(planJson({placement: {defaultBufferType: "Vulkan0", assignments: {}, devices: []}}), dense)).toThrow(/placement\.devices/);
        expect(() => planToConfig(planJson({overrides: [{pattern: "x", bufferType: "CPU", when: "prefill"}]}), dense)).toThrow(/when/);
    });

    it("refuses a llama.cpp flag it does not know and a command that disagrees with the fields", () => {
        expect(() => planToConfig(planJson({llamaCppFlags: {argv: ["-ngl", "0", "-ub", "512", "--swa-full"]}}), dense)).toThrow(/--swa-full/);
        expect(() => planToConfig(planJson({llamaCppFlags: {argv: ["-ngl", "0", "-ub", "256"]}}), dense)).toThrow(/-ub 256/);
        expect(() => planToConfig(planJson({llamaCppFlags: {argv: ["-ngl", "0", "--no-op-offload"]}}), dense)).toThrow(/--no-op-offload/);
        // the flags llama.cpp has for the knobs being added pass when the fields agree (today's defaults)
        expect(() => planToConfig(planJson({llamaCppFlags: {argv: ["-ngl", "0", "-fa", "off", "-ctk", "f16", "-ctv", "f16"]}}), dense)).not.toThrow();
    });

    it("tells a plan that does not fit from one it cannot read", () => {
        expect(() => planToConfig(planJson({fits: false, reason: "too small"}), dense)).toThrow(PlanDoesNotFit);
        expect(() => planToConfig(planJson({gpuLayers: -1}), dense)).toThrow(UnknownPlanField);
        expect(() => planToConfig(planJson({settings: {contextSize: 2048, batchSize: 512, threads: 2}}), dense)).toThrow(/useMmap/);
    });
});

describe("the time cap", () => {
    const ttft = {kind: "ttft", tokens: 512} as const;
    const tpot = {kind: "tpot", tokens: 32} as const;

    it("reads llama-bench's progress lines", () => {
        expect(phaseOfLine("llama-bench: benchmark 1/4: starting")).toBe("load");
        expect(phaseOfLine("llama-bench: benchmark 1/4: warmup prompt run")).toBe("warmup");
        expect(phaseOfLine("llama-bench: benchmark 1/4: generation run 2/3")).toBe("run");
        expect(phaseOfLine("load_backend: loaded CPU backend")).toBeNull();
    });

    it("caps a repetition at factor × the best run, the warm-up with a slack, nothing below the floor", () => {
        expect(phaseLimitMs("run", ttft, 1000, {factor: 2})).toBe(2000);
        expect(phaseLimitMs("run", tpot, 10, {factor: 2})).toBe(640);
        expect(phaseLimitMs("warmup", tpot, 10, {factor: 2, warmupSlackMs: 100})).toBe(DEFAULT_MIN_PHASE_LIMIT_MS + 100);
        expect(phaseLimitMs("warmup", ttft, 1000, {factor: 2, warmupSlackMs: 100})).toBe(2100);
        expect(phaseLimitMs("run", ttft, null, {unboundedPhaseMs: 5})).toBe(5);
        expect(phaseLimitMs("run", ttft, 1, {factor: 2})).toBe(DEFAULT_MIN_PHASE_LIMIT_MS);
        expect(() => phaseLimitMs("run", ttft, 1, {factor: 0.5})).toThrow(RangeError);
    });

    it("prunes a repetition that overruns, not a process that is only exiting", () => {
        const monitor = new PruneMonitor(ttft, 1000, 0, {factor: 2, warmupSlackMs: 0});
        monitor.line("llama-bench: benchmark 1/1: starting", 0);
        monitor.line("llama-bench: benchmark 1/1: warmup prompt run", 5000);
        expect(monitor.check(6900)).toBeNull();
        monitor.line("llama-bench: benchmark 1/1: prompt run 1/3", 6900);
        monitor.line("llama-bench: benchmark 1/1: prompt run 2/3", 7900);
        expect(monitor.check(9800)).toBeNull();
        const verdict = monitor.check(10_000);
        expect(verdict?.phase).toBe("run");
        expect(verdict?.reason).toMatch(/timed repetition 2 ran 2\.10 s, over 2× the best/);
        expect(monitor.lowerBoundMs(10_000)).toBe(2100);

        const exiting = new PruneMonitor(ttft, 1000, 0, {factor: 2});
        exiting.line("llama-bench: benchmark 1/1: prompt run 1/1", 0);
        exiting.done(900);
        expect(exiting.check(5000)).toBeNull();
    });
});

describe("the memory check", () => {
    const log = [
        "llama-bench: benchmark 1/2: starting",
        "load_tensors:   CPU_Mapped model buffer size =     1.25 MiB",
        "load_tensors:      Vulkan0 model buffer size =     2.00 MiB",
        "llama_context:        CPU  output buffer size =     0.00 MiB",
        "llama_kv_cache:    Vulkan0 KV buffer size =     0.25 MiB",
        "sched_reserve:    Vulkan0 compute buffer size =     1.53 MiB",
        "sched_reserve: Vulkan_Host compute buffer size =     0.44 MiB",
        "~llama_context:    Vulkan0 compute buffer size is   1.5317 MiB, matches expectation of   1.5317 MiB",
        "llama-bench: benchmark 2/2: starting",
        "llama_kv_cache:    Vulkan0 KV buffer size =     0.25 MiB",
        "sched_reserve: Vulkan_Host compute buffer size =     0.20 MiB"
    ].join("\n");

    it("splits llama.cpp's log per instance, carrying the model's buffers to the instances that reuse it", () => {
        const [first, second] = parseProbeLog(log);
        expect(first!.buffers.Vulkan0).toEqual({model: 2 * 1024 * 1024, kv: 0.25 * 1024 * 1024, compute: Math.round(1.53 * 1024 * 1024)});
        expect(first!.gpuBytes).toBe(2 * 1024 * 1024 + 0.25 * 1024 * 1024 + Math.round(1.53 * 1024 * 1024));
        expect(second!.gpuBytes).toBe(2.25 * 1024 * 1024);
        expect(gpuBytesOf({CPU: {model: 5}, Vulkan_Host: {compute: 7}, CUDA0: {kv: 3}})).toBe(3);
    });

    it("keys a probe's instances like the configurations, and never creates a quantized V cache without flash attention", () => {
        expect(contextKeyOfEntry({n_ubatch: 512, type_k: "q8_0", type_v: "f16", flash_attn: 0, no_op_offload: 1, no_kv_offload: false}))
            .toBe(contextKeyOfConfig({...base, typeK: "q8_0", opOffload: false}));
        const groups = probeContextFlags([base, {...base, ubatch: 16}, {...base, flashAttention: true, typeV: "q8_0"}]);
        expect(groups).toEqual([
            ["-ub", "512,16", "-ctk", "f16", "-ctv", "f16", "-fa", "0", "-nopo", "0", "-nkvo", "0"],
            ["-ub", "512", "-ctk", "f16", "-ctv", "q8_0", "-fa", "1", "-nopo", "0", "-nkvo", "0"]
        ]);
    });
});

describe("the verdict", () => {
    const hidden = {...base, hideGpu: true};
    const plan = {...base, ubatch: 128};

    it("judges by the confirmation rounds, with the plan's regret and the runtime's ratio", () => {
        const v = cellVerdict({kind: "ttft", tokens: 512}, {
            measured: [{config: hidden, bruteForceMs: 90, roundsMs: [100, 104, 98]}, {config: plan, bruteForceMs: 101, roundsMs: [102, 103, 101]},
                {config: {...base, gpuLayers: 1}, bruteForceMs: 50, roundsMs: [], eligible: false}],
            planConfig: plan, runtimeRoundsMs: [110]
        });
        expect(v.best?.ms).toBe(100);
        expect(v.regret).toBeCloseTo(1.02);
        expect(v.miss).toBe(false);
        expect(v.runtime?.ratio).toBeCloseTo(1.1);
        expect(v.note).toMatch(/runtime is 10% slower/);
    });

    it("explains a miss by the flags that differ and what the plan measured with each changed", () => {
        const measured = [{config: hidden, bruteForceMs: 10, roundsMs: []}, {config: plan, bruteForceMs: 100, roundsMs: []}, {config: base, bruteForceMs: 95, roundsMs: []}];
        const v = cellVerdict({kind: "ttft", tokens: 512}, {measured, planConfig: plan, runtimeRoundsMs: []});
        expect(v.miss).toBe(true);
        expect(v.regret).toBe(10);
        expect(v.note).toMatch(/GPU hidden \(-dev none\) off → on.*-ub 128 → 512 \(plan with only that changed: 95\.0 ms\)/);
        expect(explainMiss(plan, hidden, () => null).map((d) => d.field)).toEqual(["GPU hidden (-dev none)", "-ub"]);
        // hiding the GPU of a plan without op offload is looked up as the grid writes it (op offload then means nothing)
        const noOffload = {...plan, opOffload: false};
        const hiddenAt128 = {...hidden, ubatch: 128};
        const w = cellVerdict({kind: "ttft", tokens: 512}, {measured: [{config: hiddenAt128, bruteForceMs: 10, roundsMs: []}, {config: noOffload, bruteForceMs: 100, roundsMs: []}],
            planConfig: noOffload, runtimeRoundsMs: []});
        expect(w.note).toMatch(/GPU hidden \(-dev none\) off → on \(plan with only that changed: 10\.0 ms\)/);
        expect(rankByBruteForce(measured, 2).map((m) => m.bruteForceMs)).toEqual([10, 95]);
        expect(verdictTable([v]).split("\n")).toHaveLength(3);
    });

    it("calls a gap noise where the plan differs from the best only in flags that cannot change the cell's work", () => {
        const decodeBest = {...base, ubatch: 16};
        const v = cellVerdict({kind: "tpot", tokens: 32}, {measured: [{config: decodeBest, bruteForceMs: 1, roundsMs: []}, {config: base, bruteForceMs: 1.2, roundsMs: []}],
            planConfig: base, runtimeRoundsMs: []});
        expect(v.regret).toBeCloseTo(1.2);
        expect(v.equivalent).toBe(true);
        expect(v.miss).toBe(false);
        expect(v.note).toMatch(/-ub 512 → 16 \(no effect on this cell\).*measurement noise/);
        expect([...inertFields({kind: "ttft", tokens: 512}, {...base, ubatch: 16})]).toEqual(["opOffload"]);
        expect(inertFields({kind: "ttft", tokens: 512}, base).size).toBe(0);
    });

    it("counts a cell without a plan as a miss", () => {
        const v = cellVerdict({kind: "tpot", tokens: 32}, {measured: [{config: hidden, bruteForceMs: 1, roundsMs: []}], planConfig: null, planProblem: "the plan does not fit", runtimeRoundsMs: []});
        expect(v.miss).toBe(true);
        expect(v.note).toBe("the plan does not fit");
    });
});
