/**
 * How far this machine's predictions have been from what it then measured, kept per figure (TTFT, TPOT) and device
 * kind in a JSON file beside the machine profiles, and per model: every prediction then carries a range from those
 * errors ("about 1.2–1.5 s"), which narrows as measurements accumulate, and a model already used has its predictions
 * corrected by its own measured ratio. Before enough measurements, an assumed band.
 */
import fs from "node:fs";
import path from "node:path";
import {fileIdentity} from "../cache/fileIdentity.js";
import {writeCacheFile} from "../cache/writeCacheFile.js";
import type {PredictionRangeView} from "../../contract/predictionRange.js";

export type PredictionFigure = "ttft" | "tpot";

/** The file's name in the cache folder. */
export const PREDICTION_ERRORS_FILE = "prediction-errors.json";

/** Ratios kept per figure and device kind, and per model: the most recent ones (the machine changes). */
export const KEEP_PER_KIND = 64;
export const KEEP_PER_MODEL = 16;
/** Fewest measurements before this machine's own errors replace the assumed band. */
export const MIN_SAMPLES = 5;
/** Fewest measurements of a model before its own measured ratio corrects its predictions. */
export const MIN_MODEL_SAMPLES = 3;

/**
 * measured ÷ predicted assumed before any measurement: the spread this project recorded across its machines, from
 * 2% to 60% off depending on the machine's noise and the figure (docs/benchmarks.md), mostly slower than predicted.
 */
export const ASSUMED_BAND = {low: 0.75, high: 1.6} as const;

/** How much wider a range is when the profile was measured while other programs kept the CPU busy. */
export const CONTENDED_WIDENING = 1.25;

/** The range of one prediction, and where it comes from (the contract's shape, shown as is). */
export type PredictionRange = PredictionRangeView;

export type ErrorsFile = {version: 1; byKind: Record<string, number[]>; byModel: Record<string, number[]>};

const kindKey = (figure: PredictionFigure, deviceKind: string) => `${figure}:${deviceKind}`;
const modelKeyOf = (figure: PredictionFigure, modelKey: string) => `${figure}:${modelKey}`;

/** The store, or an empty one where it is missing or not one this code wrote (it only ever holds ratios). */
export function readPredictionErrors(dir: string): ErrorsFile {
    const empty = (): ErrorsFile => ({version: 1, byKind: Object.create(null) as Record<string, number[]>, byModel: Object.create(null) as Record<string, number[]>});
    try {
        const parsed = JSON.parse(fs.readFileSync(path.join(dir, PREDICTION_ERRORS_FILE), "utf8")) as Partial<ErrorsFile>;
        if (parsed.version !== 1) return empty();
        const file = empty();
        const ratios = (value: unknown): number[] | null =>
            Array.isArray(value) && value.every((r) => typeof r === "number" && Number.isFinite(r) && r > 0) ? value as number[] : null;
        for (const [source, target] of [[parsed.byKind, file.byKind], [parsed.byModel, file.byModel]] as const) {
            if (source == null || typeof source !== "object") continue;
            for (const [key, value] of Object.entries(source)) {
                const kept = ratios(value);
                if (kept != null) target[key] = kept;
            }
        }
        return file;
    } catch {
        return empty();
    }
}

/**
 * Adds one measurement (a chat reply, a bench cell): measured ÷ predicted for the figure on this device kind, and for
 * the model. Ratios outside 1/50…50 are dropped as not a prediction's error (an interrupted reply, a cold cache).
 */
export async function recordPredictionError(dir: string, sample: {
    figure: PredictionFigure; deviceKind: string; modelKey: string; predictedMs: number; measuredMs: number;
}): Promise<void> {
    const ratio = sample.measuredMs / sample.predictedMs;
    if (!Number.isFinite(ratio) || ratio <= 1 / 50 || ratio >= 50) return;
    const file = readPredictionErrors(dir);
    const push = (table: Record<string, number[]>, key: string, keep: number) => {
        table[key] = [...(table[key] ?? []), ratio].slice(-keep);
    };
    push(file.byKind, kindKey(sample.figure, sample.deviceKind), KEEP_PER_KIND);
    push(file.byModel, modelKeyOf(sample.figure, sample.modelKey), KEEP_PER_MODEL);
    await writeCacheFile(path.join(dir, PREDICTION_ERRORS_FILE), `${JSON.stringify(file)}\n`);
}

/** The q-quantile of `values` (linear between the closest ranks). */
function quantile(values: readonly number[], q: number): number {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (sorted.length - 1) * q;
    const lo = Math.floor(at);
    return sorted[lo]! + (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!) * (at - lo);
}

/**
 * The range of a prediction: this machine's 10th–90th percentile of measured ÷ predicted for the figure and device
 * kind (with at least {@link MIN_SAMPLES}; else {@link ASSUMED_BAND}) — where the measurement is expected, which on a
 * machine whose predictions run consistently fast need not hold the prediction itself — widened
 * by {@link CONTENDED_WIDENING} for a profile taken on a busy machine; centred on the model's own measured ratio where
 * it has {@link MIN_MODEL_SAMPLES} replies.
 */
export function predictionRange(errors: ErrorsFile, request: {
    figure: PredictionFigure; deviceKind: string; modelKey: string | null; predictedMs: number; contended: boolean;
}): PredictionRange {
    const kind = errors.byKind[kindKey(request.figure, request.deviceKind)] ?? [];
    const model = request.modelKey == null ? [] : errors.byModel[modelKeyOf(request.figure, request.modelKey)] ?? [];
    const measured = kind.length >= MIN_SAMPLES;
    let low = measured ? quantile(kind, 0.1) : ASSUMED_BAND.low;
    let high = measured ? quantile(kind, 0.9) : ASSUMED_BAND.high;
    let center = 1;
    let correction: PredictionRange["correction"] = null;
    if (model.length >= MIN_MODEL_SAMPLES) {
        const factor = quantile(model, 0.5);
        correction = {factor, samples: model.length};
        // the spread about the kind's own median, moved to the model's ratio
        const median = measured ? quantile(kind, 0.5) : 1;
        center = factor;
        low = factor * low / median;
        high = factor * high / median;
    }
    if (request.contended) {
        low /= CONTENDED_WIDENING;
        high *= CONTENDED_WIDENING;
    }
    const p = request.predictedMs;
    return {centerMs: p * center, lowMs: p * low, highMs: p * high, basis: measured ? "measured" : "assumed", samples: kind.length, correction};
}

/** The device kind a load's predictions are kept under: `cpu` without a GPU in the plan, else the GPU's backend (`vulkan`, `cuda`). */
export function predictionDeviceKind(gpuDevice: string | null, usesGpu: boolean): string {
    if (gpuDevice == null || !usesGpu) return "cpu";
    return gpuDevice.replace(/\d+$/, "").toLowerCase();
}

/** The key a model's predictions are corrected under: its file by path, size and time (a new download is a new model). */
export function predictionModelKey(modelPath: string): string {
    return fileIdentity(modelPath);
}

/** One sentence on how sure the predictions are, for the plan's explanation. */
export function rangesSentence(ttft: PredictionRange, tpot: PredictionRange, contended: boolean): string {
    const basis = ttft.basis === "measured"
        ? `from the last ${ttft.samples} measurements of this machine's prediction errors`
        : `assumed (fewer than ${MIN_SAMPLES} replies measured here yet; they narrow as you chat)`;
    const corrected = [ttft.correction != null ? `TTFT ×${ttft.correction.factor.toFixed(2)}` : null, tpot.correction != null ? `TPOT ×${tpot.correction.factor.toFixed(2)}` : null]
        .filter((part): part is string => part != null);
    return `Ranges ${basis}${contended ? ", widened because the profile was measured on a busy machine" : ""}` +
        (corrected.length > 0 ? `; corrected by this model's own measured replies (${corrected.join(", ")})` : "") + ".";
}
