/**
 * The cost of one decode step beyond its weight matmuls — llama.cpp's graph build and scheduling, the output copy and
 * sampling (a fixed cost per token), and every layer's non-matmul nodes: norms, RoPE, softmax, adds, the KV cache
 * copies, each one node launch and one thread barrier (a cost per layer per token). Measured as the time per output
 * token of two tiny models on the CPU that differ only in layer count: their matmuls (~0.2 MB of weights a layer, in
 * the cache) are negligible next to both costs, so the slope over layers is the per-layer cost and the intercept the
 * fixed one.
 */
import {mkdtemp, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {EngineLlama} from "../native/getEngineLlama.js";
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
};

/** Fastest-run TPOT of a tiny model with `layers` layers at `-ngl 0` with `threads`, µs (0 when no run finished in time). */
async function tinyTpotUs(engine: EngineLlama, dir: string, layers: number, threads: number): Promise<number> {
    const modelPath = path.join(dir, `tiny-${layers}.gguf`);
    await makeSyntheticModel(modelPath, {preset: "tiny", type: "f16", layers});
    const placed = await PlacedModel.load(engine, {modelPath, gpuLayers: 0, useMmap: true, contextSize: 256, batchSize: 64, threads});
    try {
        const prompt = placed.model.tokenize("the tiny model times one decode step", false);
        // bounded in time: on a contended machine one token can take hundreds of ms
        const signal = AbortSignal.timeout(OVERHEAD_TIME_LIMIT_MS);
        const started = performance.now();
        await generateGreedy(placed, prompt, {maxTokens: 2, stopAtEog: false, signal});
        const samples: number[] = [];
        for (let run = 0; run < 3 && !signal.aborted && performance.now() - started < OVERHEAD_TIME_LIMIT_MS / 2; run++) {
            const {timing} = await generateGreedy(placed, prompt, {maxTokens: OVERHEAD_TOKENS, stopAtEog: false, signal});
            if (timing.tpotMs != null) samples.push(timing.tpotMs * 1000);
        }
        // the fastest run: a burst of other load during this short measurement would otherwise set the cost of
        // every token the plan predicts
        return samples.length > 0 ? Math.min(...samples) : 0;
    } finally {
        await placed.dispose();
    }
}

/** Measures {@link DecodeOverhead} with `threads` CPU threads (zeros where no run finished in time). */
export async function calibrateDecodeOverhead(engine: EngineLlama, threads: number): Promise<DecodeOverhead> {
    const dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-overhead-"));
    try {
        const [few, many] = OVERHEAD_LAYERS;
        const fewUs = await tinyTpotUs(engine, dir, few, threads);
        const manyUs = await tinyTpotUs(engine, dir, many, threads);
        if (fewUs <= 0) return {fixedUs: 0, perLayerUs: 0};
        const perLayerUs = manyUs > fewUs ? (manyUs - fewUs) / (many - few) : 0;
        return {fixedUs: Math.max(0, fewUs - few * perLayerUs), perLayerUs};
    } finally {
        await rm(dir, {recursive: true, force: true});
    }
}
