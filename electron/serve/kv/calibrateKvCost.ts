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

/**
 * Bumped when what a calibration measures changes meaning, so cost models cached by an older version are measured
 * again (kvCostCache.ts).
 */
export const KV_COST_FORMAT = 1;

/** Everything about how {@link calibrateKvCost} measures that its result depends on, for the cache key. */
export function calibrationMethod(maxTokens: number | undefined): {format: number; shares: readonly number[]; stateRounds: number; maxTokens: number} {
    return {format: KV_COST_FORMAT, shares: [...LENGTH_SHARES], stateRounds: STATE_ROUNDS, maxTokens: maxTokens ?? DEFAULT_CALIBRATION_TOKENS};
}

/** One timed round at one prompt length. */
export type KvCalibrationPoint = {tokens: number; stateBytes: number; prefillMs: number; saveMs: number; loadMs: number};

/** What a calibration measured and the lines fitted through it. */
export type KvCalibration = {model: KvCostModel; points: KvCalibrationPoint[]};

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
export async function calibrateKvCost(sequence: LlamaContextSequence, options: {
    maxTokens?: number; dir?: string;
    /** After each prefill and each save/load round: `done` of `total` (the untimed warm-up round counts too). */
    onProgress?: (done: number, total: number) => void;
} = {}): Promise<KvCalibration> {
    const lengths = calibrationLengths(sequence.contextSize, options.maxTokens);
    const longest = lengths.at(-1)!;
    const tokens = fillerTokens(sequence, longest);
    const folder = await mkdtemp(path.join(options.dir ?? os.tmpdir(), `${KV_FOLDER_PREFIX}${process.pid}-calibrate-`));
    const points: KvCalibrationPoint[] = [];
    const rounds = [lengths[0]!, ...lengths];
    const total = rounds.length * (1 + STATE_ROUNDS);
    let done = 0;
    const step = () => options.onProgress?.(++done, total);
    try {
        // a first untimed round warms the graph allocation and the file system
        for (const n of rounds) {
            const file = path.join(folder, `state-${n}.bin`);
            await sequence.clearHistory();
            let started = performance.now();
            await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(0, n));
            const prefillMs = performance.now() - started;
            step();
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
                step();
            }
            points.push({tokens: n, stateBytes: fileSize || (await stat(file)).size, prefillMs, saveMs: median(saves), loadMs: median(loads)});
            await rm(file, {force: true});
        }
        points.shift();
        await sequence.clearHistory();
    } finally {
        await rm(folder, {recursive: true, force: true});
    }
    return {points, model: fitKvCostModel(points)};
}

/** The prompt lengths a calibration times on a context of `contextSize` tokens, shortest first. */
export function calibrationLengths(contextSize: number, maxTokens: number | undefined): number[] {
    const longest = Math.max(8, Math.min(maxTokens ?? DEFAULT_CALIBRATION_TOKENS, contextSize - 1));
    return [...new Set(LENGTH_SHARES.map((share) => Math.max(4, Math.round(longest * share))))];
}

/** The lines of {@link KvCostModel} through measured points (the same numbers for the same points, cached or not). */
export function fitKvCostModel(points: readonly KvCalibrationPoint[]): KvCostModel {
    const bytesLine = fitLinearCost(points.map((p) => ({amount: p.tokens, cost: p.stateBytes})));
    return {
        stateBytes: {headerBytes: bytesLine.fixedMs, bytesPerToken: bytesLine.msPer},
        save: fitLinearCost(points.map((p) => ({amount: p.stateBytes, cost: p.saveMs}))),
        load: fitLinearCost(points.map((p) => ({amount: p.stateBytes, cost: p.loadMs}))),
        prefill: fitLinearCost(points.map((p) => ({amount: p.tokens, cost: p.prefillMs}))),
        source: `measured at ${points.map((p) => p.tokens).join("/")} tokens on this context`
    };
}
