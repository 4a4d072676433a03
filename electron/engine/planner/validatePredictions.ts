/**
 * The prediction check: load plans for real, time them from the engine side, and compare with what the cost model
 * said — TTFT, TPOT and VRAM per plan, with the error per cell. Shared by the Vulkan test, the benchmark and the CLI.
 */
import type {Token} from "node-llama-cpp";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {generateGreedy} from "../runtime/generateGreedy.js";
import {PlacedModel, settingsLoadOptions} from "../runtime/PlacedModel.js";
import type {StrategyResult} from "./strategies/StrategyResult.js";

/** One plan to check: what to load and what was predicted (prompt and reply lengths come from the prediction). */
export type PredictionCase = {
    readonly label: string;
    readonly plan: Pick<StrategyResult, "gpuLayers" | "overrides" | "settings" | "prediction">;
};

/** Options of {@link validatePredictions}. */
export type ValidatePredictionsOptions = {
    /**
     * Runs discarded before timing (the first decode on a GPU compiles its pipelines: on llvmpipe that is seconds).
     * Defaults to 1.
     */
    warmupRuns?: number;
    /** Timed runs per case; the median TTFT and TPOT are reported. Defaults to 3. */
    runs?: number;
    /** First token id of the synthetic prompt (ids above the byte tokens). Defaults to 300. */
    firstPromptToken?: number;
    /** Prompt token ids stay below this (the smallest vocabulary of the models checked). Defaults to 1024. */
    promptVocab?: number;
    signal?: AbortSignal;
    onProgress?: (message: string) => void;
};

/** Predicted vs measured for one case. Errors are signed: (predicted − measured) / measured × 100. */
export type PredictionRow = {
    readonly label: string;
    readonly promptTokens: number;
    readonly genTokens: number;
    readonly predictedTtftMs: number;
    readonly measuredTtftMs: number;
    readonly ttftErrorPct: number;
    readonly predictedTpotMs: number;
    readonly measuredTpotMs: number;
    readonly tpotErrorPct: number;
    /** GPU weights + KV + scratch, bytes (measured: llama.cpp's per-buffer-type accounting after load). */
    readonly predictedVramBytes: number;
    readonly measuredVramBytes: number;
    readonly vramErrorPct: number;
};

function errorPct(predicted: number, measured: number): number {
    return measured === 0 ? (predicted === 0 ? 0 : Infinity) : (predicted - measured) / measured * 100;
}

function median(values: readonly number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A deterministic prompt of `length` ordinary tokens (no BOS, no specials), so every case sees the same input. */
function syntheticPrompt(length: number, first: number, vocab: number): Token[] {
    const span = Math.max(1, vocab - first);
    return Array.from({length}, (_, i) => (first + (i * 7919) % span) as Token);
}

/**
 * Loads each case's plan through {@link PlacedModel} (its `-ngl`, overrides, mmap, micro-batch, context, threads),
 * warms up, times greedy generation of the predicted prompt/reply lengths, and returns predicted vs measured rows.
 * Cases run one after another; each model is disposed before the next loads.
 */
export async function validatePredictions(engine: EngineLlama, modelPath: string, cases: readonly PredictionCase[],
    options: ValidatePredictionsOptions = {}): Promise<PredictionRow[]> {
    const {warmupRuns = 1, runs = 3, firstPromptToken = 300, promptVocab = 1024, signal, onProgress} = options;
    const rows: PredictionRow[] = [];
    for (const {label, plan} of cases) {
        signal?.throwIfAborted();
        const {settings, prediction} = plan;
        onProgress?.(`${label}: loading`);
        const placed = await PlacedModel.load(engine, {
            modelPath, gpuLayers: plan.gpuLayers, overrides: plan.overrides, ...settingsLoadOptions(settings), signal
        });
        try {
            const tokens = syntheticPrompt(prediction.promptTokens, firstPromptToken, promptVocab);
            const generate = {maxTokens: Math.max(2, prediction.genTokens), stopAtEog: false, signal};
            for (let i = 0; i < warmupRuns; i++) await generateGreedy(placed, tokens, generate);
            const ttft: number[] = [];
            const tpot: number[] = [];
            for (let i = 0; i < runs; i++) {
                onProgress?.(`${label}: run ${i + 1}/${runs}`);
                const {timing} = await generateGreedy(placed, tokens, generate);
                ttft.push(timing.ttftMs);
                if (timing.tpotMs != null) tpot.push(timing.tpotMs);
            }
            const memory = placed.memory().device;
            const measuredVram = memory.weightsBytes + memory.kvCacheBytes + memory.scratchBytes;
            const measuredTtftMs = median(ttft);
            const measuredTpotMs = tpot.length > 0 ? median(tpot) : NaN;
            rows.push({
                label, promptTokens: prediction.promptTokens, genTokens: generate.maxTokens,
                predictedTtftMs: prediction.ttftMs, measuredTtftMs, ttftErrorPct: errorPct(prediction.ttftMs, measuredTtftMs),
                predictedTpotMs: prediction.tpotMs, measuredTpotMs, tpotErrorPct: errorPct(prediction.tpotMs, measuredTpotMs),
                predictedVramBytes: prediction.vram.total, measuredVramBytes: measuredVram,
                vramErrorPct: errorPct(prediction.vram.total, measuredVram)
            });
        } finally {
            await placed.dispose();
        }
    }
    return rows;
}

/** The rows as a fixed-width text table (ms, MiB, signed % error). */
export function formatPredictionTable(rows: readonly PredictionRow[]): string {
    const MiB = 2 ** 20;
    const pct = (v: number): string => `${v >= 0 ? "+" : ""}${v.toFixed(0)}%`;
    const header = ["case", "TTFT pred", "TTFT meas", "err", "TPOT pred", "TPOT meas", "err", "VRAM pred", "VRAM meas", "err"];
    const body = rows.map((r) => [
        `${r.label} (pp${r.promptTokens}/tg${r.genTokens})`,
        r.predictedTtftMs.toFixed(1), r.measuredTtftMs.toFixed(1), pct(r.ttftErrorPct),
        r.predictedTpotMs.toFixed(2), r.measuredTpotMs.toFixed(2), pct(r.tpotErrorPct),
        (r.predictedVramBytes / MiB).toFixed(1), (r.measuredVramBytes / MiB).toFixed(1), pct(r.vramErrorPct)
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
    return [header, ...body].map((row) => row.map((cell, i) => i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)).join("  ")).join("\n");
}
