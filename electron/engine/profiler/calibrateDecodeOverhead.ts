/**
 * The fixed cost of one decode step beyond its matmuls — llama.cpp's graph build and scheduling, the output copy and
 * sampling, node-llama-cpp's per-token JS — measured as the time per output token of a tiny model on the CPU, whose
 * matmuls (~0.6 MB of weights) are negligible next to it.
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
/** The whole measurement stops after this long (a run cut short still yields its TPOT). */
export const OVERHEAD_TIME_LIMIT_MS = 1500;

/** Fastest-run TPOT of the tiny model at `-ngl 0` with `threads`, µs (0 when no run finished in time). */
export async function calibrateDecodeOverhead(engine: EngineLlama, threads: number): Promise<number> {
    const dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-overhead-"));
    try {
        const modelPath = path.join(dir, "tiny.gguf");
        await makeSyntheticModel(modelPath, {preset: "tiny", type: "f16"});
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
    } finally {
        await rm(dir, {recursive: true, force: true});
    }
}
