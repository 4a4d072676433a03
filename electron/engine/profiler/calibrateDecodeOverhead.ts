/**
 * The cost of one decode step beyond its weight matmuls — llama.cpp's graph build and scheduling, the output copy and
 * sampling (a fixed cost per token), and every layer's non-matmul nodes: norms, RoPE, softmax, adds, the KV cache
 * copies, each one node launch and one thread barrier (a cost per layer per token). Measured as the time per output
 * token of two tiny models on the CPU that differ only in layer count: their matmuls (~0.2 MB of weights a layer, in
 * the cache) are negligible next to both costs, so the slope over layers is the per-layer cost and the intercept the
 * fixed one.
 *
 * With a GPU, also the cost of one CPU↔GPU switch inside a decode step, end to end: the deeper tiny model once more with
 * every layer on the GPU and every matmul weight in host memory, where llama.cpp still runs each layer's norms on the
 * GPU (costModel.ts PINNED_NORM_MAX_BATCH) — two switches per norm, each a copy of the activations, the GPU's launch
 * and sync, and the CPU threads woken for the next CPU split — against the same model all on the CPU. The profiler's
 * own switch timing (TransferPoint.switchUs) leaves the CPU's side out: on an H200 machine it said 22 µs, and the
 * recorded decode steps cost about three times that per switch (bench/results/2026-11-28-h200/README.md).
 */
import {mkdtemp, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {TensorBufferOverride} from "../placement/Placement.js";
import {generateGreedy} from "../runtime/generateGreedy.js";
import {PlacedModel} from "../runtime/PlacedModel.js";
import {makeSyntheticModel} from "../writer/makeSyntheticModel.js";

/** Tokens timed per run (after a discarded warm-up run). */
export const OVERHEAD_TOKENS = 16;
/** Each model's measurement stops after this long (a run cut short still yields its TPOT). */
export const OVERHEAD_TIME_LIMIT_MS = 1500;
/** Layer counts of the two tiny models. */
export const OVERHEAD_LAYERS = [2, 10] as const;

/** The measured per-decode costs, µs. */
export type DecodeOverhead = {
    /** Per token, whatever the model's depth. */
    readonly fixedUs: number;
    /** Per layer per token. */
    readonly perLayerUs: number;
    /** Per CPU↔GPU switch in a decode step (absent without exactly one GPU, or when no run finished in time). */
    readonly switchUs?: number;
};

/** How a tiny model is loaded for a timing: `-ngl 0`, or every layer on the GPU with the given overrides. */
type TinyLoad = {readonly gpuLayers: 0 | "max"; readonly overrides?: readonly TensorBufferOverride[]};

/**
 * Time limit of the load with switches: each switch costs tens of µs on a fast GPU but hundreds on a slow or software
 * one (llvmpipe: about 0.4 ms), where a 10-layer model's token takes tens of ms.
 */
export const SWITCH_TIME_LIMIT_MS = 3000;

/** The tiny model with `layers` layers, written once into `dir`. */
async function tinyModel(dir: string, layers: number): Promise<string> {
    const modelPath = path.join(dir, `tiny-${layers}.gguf`);
    await makeSyntheticModel(modelPath, {preset: "tiny", type: "f16", layers});
    return modelPath;
}

/**
 * Fastest-run TPOT of a tiny model with `threads`, µs (0 when no run finished in time). Attention runs on the CPU in
 * every load (the KV cache in host memory), so that loads differ only where the weights and the layers are.
 */
async function tinyTpotUs(engine: EngineLlama, modelPath: string, threads: number, load: TinyLoad = {gpuLayers: 0},
    limitMs = OVERHEAD_TIME_LIMIT_MS): Promise<number> {
    const placed = await PlacedModel.load(engine, {modelPath, gpuLayers: load.gpuLayers, overrides: load.overrides ?? [], useMmap: load.gpuLayers === 0,
        contextSize: SWITCH_CONTEXT, batchSize: 64, threads, kvOffload: false});
    try {
        const prompt = placed.model.tokenize("the tiny model times one decode step", false);
        // bounded in time: on a contended machine one token can take hundreds of ms
        const signal = AbortSignal.timeout(limitMs);
        const started = performance.now();
        // the warm-up's second token counts too: where a step takes a large share of the limit (a software GPU's
        // switches), it may be the only one measured
        const warm = await generateGreedy(placed, prompt, {maxTokens: 2, stopAtEog: false, signal});
        const samples: number[] = warm.timing.tpotMs != null && !signal.aborted ? [warm.timing.tpotMs * 1000] : [];
        for (let run = 0; run < 3 && !signal.aborted && performance.now() - started < limitMs / 2; run++) {
            const {timing} = await generateGreedy(placed, prompt, {maxTokens: OVERHEAD_TOKENS, stopAtEog: false, signal});
            if (timing.tpotMs != null && !signal.aborted) samples.push(timing.tpotMs * 1000);
        }
        // the fastest run: a burst of other load during this short measurement would otherwise set the cost of
        // every token the plan predicts
        return samples.length > 0 ? Math.min(...samples) : 0;
    } finally {
        await placed.dispose();
    }
}

/** Context of the tiny models' loads (its decode spans these cells; costModel.ts CALIBRATION_KEYS is the same). */
const SWITCH_CONTEXT = 256;

/**
 * The load of a tiny model that makes CPU↔GPU switches in every decode step (every layer on `gpuDevice`, every matmul
 * weight in host memory, the KV cache in host memory), and how many one step has. The planner knows both
 * (planner/switchProbe.ts); the profiler times the load.
 */
export type SwitchProbe = (modelPath: string, gpuDevice: string) => Promise<{readonly overrides: readonly TensorBufferOverride[]; readonly switches: number}>;

/**
 * The switch cost from the deeper tiny model's TPOT all on the CPU (`cpuUs`) and loaded with the probe's switches:
 * the difference over their number (which llama.cpp's own split count confirms: planner/graphSplits.vulkan.test.ts).
 * Null when it cannot be measured.
 */
async function switchUsOf(engine: EngineLlama, modelPath: string, threads: number, cpuUs: number, gpu: {device: string; probe: SwitchProbe}): Promise<number | null> {
    const {overrides, switches} = await gpu.probe(modelPath, gpu.device);
    const islandsUs = await tinyTpotUs(engine, modelPath, threads, {gpuLayers: "max", overrides}, SWITCH_TIME_LIMIT_MS);
    if (cpuUs <= 0 || islandsUs <= 0 || switches <= 0) return null;
    return Math.max(0, (islandsUs - cpuUs) / switches);
}

/**
 * Measures {@link DecodeOverhead} with `threads` CPU threads (zeros where no run finished in time); the switch cost
 * too when `gpu` names the one GPU whose switches plans will pay, and the probe that makes them.
 */
export async function calibrateDecodeOverhead(engine: EngineLlama, threads: number, gpu: {device: string; probe: SwitchProbe} | null = null): Promise<DecodeOverhead> {
    const dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-overhead-"));
    try {
        const [few, many] = OVERHEAD_LAYERS;
        const deep = await tinyModel(dir, many);
        const fewUs = await tinyTpotUs(engine, await tinyModel(dir, few), threads);
        const manyUs = await tinyTpotUs(engine, deep, threads);
        const switchUs = gpu == null ? null : await switchUsOf(engine, deep, threads, manyUs, gpu);
        const switches = switchUs == null ? {} : {switchUs};
        if (fewUs <= 0) return {fixedUs: 0, perLayerUs: 0, ...switches};
        const perLayerUs = manyUs > fewUs ? (manyUs - fewUs) / (many - few) : 0;
        return {fixedUs: Math.max(0, fewUs - few * perLayerUs), perLayerUs, ...switches};
    } finally {
        await rm(dir, {recursive: true, force: true});
    }
}
