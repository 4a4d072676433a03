/**
 * The machine's and the model's limits on a context size, checked after the weights load and before llama.cpp is asked
 * for the context (it would otherwise try to allocate whatever it is given: a 2^31-token context blocked the engine for
 * half a minute). The hard range is in `electron/contract/limits.ts`; here: the model's trained context × a factor, and
 * what memory holds, from node-llama-cpp's own estimate (`GgufInsights.estimateContextResourceRequirementsV2`).
 */
import os from "node:os";
import type {LlamaModel} from "node-llama-cpp";
import {CONTEXT_OVER_TRAINED_FACTOR} from "../../contract/limits.js";
import {formatBytes} from "../format/formatBytes.js";

/** Context sizes offered instead of a refused one are rounded down to this. */
const SUGGESTION_STEP = 256;

export class ContextSizeError extends Error {
    readonly code = "context-too-large";
}

export async function checkContextSize(model: LlamaModel, options: {
    contextSize: number; batchSize: number; flashAttention: boolean; useMmap: boolean;
    /** Parallel sequences, each with `contextSize` cells of KV cache. Defaults to 1. */
    sequences?: number;
}): Promise<void> {
    const trained = model.trainContextSize;
    const {contextSize} = options;
    if (trained > 0 && contextSize > trained * CONTEXT_OVER_TRAINED_FACTOR)
        throw new ContextSizeError(`A context of ${contextSize} tokens is more than ${CONTEXT_OVER_TRAINED_FACTOR}× what this model was ` +
            `trained for (${trained} tokens): choose at most ${trained * CONTEXT_OVER_TRAINED_FACTOR}.`);
    const needed = await model.fileInsights.estimateContextResourceRequirementsV2({
        contextSize, modelGpuLayers: model.gpuLayers, batchSize: options.batchSize, flashAttention: options.flashAttention,
        useMmap: options.useMmap, sequences: options.sequences ?? 1
    });
    const vram = model.llama.gpu === false ? null : await model.llama.getVramState();
    // on unified memory (an iGPU, llvmpipe) the device's free memory is the system's: count it once
    const free = os.freemem() + (vram == null || vram.unifiedSize > 0 ? 0 : vram.free);
    const total = needed.cpuRam + needed.gpuVram;
    if (total > free) {
        const fits = Math.max(SUGGESTION_STEP, Math.floor(contextSize * free / total / SUGGESTION_STEP) * SUGGESTION_STEP);
        throw new ContextSizeError(`A context of ${contextSize} tokens needs about ${formatBytes(total)} for its KV cache and scratch, ` +
            `but only ${formatBytes(free)} of memory is free: choose a smaller context (about ${fits} tokens would fit).`);
    }
}
