import {mkdtemp, rm, stat} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {LlamaContextSequence, Token} from "node-llama-cpp";
import {fitLinearCost, type KvCostModel} from "./KvCostModel.js";
import {KV_FOLDER_PREFIX} from "./kvStateFolder.js";

/** Calibration prompt lengths, as shares of the longest one. */
const LENGTH_SHARES = [1 / 8, 1 / 2, 1] as const;
/** Timed save/load rounds per length (the median is kept): they are short, so the noisiest. */
const STATE_ROUNDS = 3;
/** The longest calibration prompt, tokens (capped by the context). */
export const DEFAULT_CALIBRATION_TOKENS = 256;

/** One timed round at one prompt length. */
export type KvCalibrationPoint = {tokens: number; stateBytes: number; prefillMs: number; saveMs: number; loadMs: number};

function median(values: readonly number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
}

/** Filler text for calibration prompts: any tokens cost the same to evaluate. */
function fillerTokens(sequence: LlamaContextSequence, count: number): Token[] {
    const words = "the river carried small boats past old stone houses while children counted the bridges one by one";
    const tokens: Token[] = [];
    const piece = sequence.model.tokenize(words + " ");
    while (tokens.length < count)
        tokens.push(...piece);
    return tokens.slice(0, count);
}

/**
 * Measures, on `sequence` (which it leaves empty), what a prefill of n tokens, a save of the sequence's state to a
 * file and a load back cost at a few lengths up to `maxTokens`, and fits the lines of {@link KvCostModel}. State files go
 * to a temporary folder under `dir` (the OS temp dir by default) that is removed afterwards.
 */
export async function calibrateKvCost(sequence: LlamaContextSequence, options: {maxTokens?: number; dir?: string} = {}):
Promise<{model: KvCostModel; points: KvCalibrationPoint[]}> {
    const longest = Math.max(8, Math.min(options.maxTokens ?? DEFAULT_CALIBRATION_TOKENS, sequence.contextSize - 1));
    const lengths = [...new Set(LENGTH_SHARES.map((share) => Math.max(4, Math.round(longest * share))))];
    const tokens = fillerTokens(sequence, longest);
    const folder = await mkdtemp(path.join(options.dir ?? os.tmpdir(), `${KV_FOLDER_PREFIX}${process.pid}-calibrate-`));
    const points: KvCalibrationPoint[] = [];
    try {
        // a first untimed round warms the graph allocation and the file system
        for (const n of [lengths[0]!, ...lengths]) {
            const file = path.join(folder, `state-${n}.bin`);
            await sequence.clearHistory();
            let started = performance.now();
            await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(0, n));
            const prefillMs = performance.now() - started;
            const saves: number[] = [];
            const loads: number[] = [];
            let fileSize = 0;
            for (let round = 0; round < STATE_ROUNDS; round++) {
                await rm(file, {force: true});
                started = performance.now();
                fileSize = (await sequence.saveStateToFile(file)).fileSize;
                saves.push(performance.now() - started);
                await sequence.clearHistory();
                started = performance.now();
                await sequence.loadStateFromFile(file, {acceptRisk: true});
                loads.push(performance.now() - started);
                if (sequence.contextTokens.length !== n)
                    throw new Error(`The sequence state saved with ${n} tokens loaded back with ${sequence.contextTokens.length}.`);
            }
            points.push({tokens: n, stateBytes: fileSize || (await stat(file)).size, prefillMs, saveMs: median(saves), loadMs: median(loads)});
            await rm(file, {force: true});
        }
        points.shift();
        await sequence.clearHistory();
    } finally {
        await rm(folder, {recursive: true, force: true});
    }
    const bytesLine = fitLinearCost(points.map((p) => ({amount: p.tokens, cost: p.stateBytes})));
    return {
        points,
        model: {
            stateBytes: {headerBytes: bytesLine.fixedMs, bytesPerToken: bytesLine.msPer},
            save: fitLinearCost(points.map((p) => ({amount: p.stateBytes, cost: p.saveMs}))),
            load: fitLinearCost(points.map((p) => ({amount: p.stateBytes, cost: p.loadMs}))),
            prefill: fitLinearCost(points.map((p) => ({amount: p.tokens, cost: p.prefillMs}))),
            source: `measured at ${lengths.join("/")} tokens on this context`
        }
    };
}
