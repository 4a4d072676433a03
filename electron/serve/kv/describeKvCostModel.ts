import {formatBytes, formatMs} from "../../engine/format/formatBytes.js";
import type {KvCostModel} from "./KvCostModel.js";

/** A finite, non-negative number, or null for anything else (a hand-given model may hold what no fit produces). */
function measured(value: number): number | null {
    return Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * One fitted line `fixed + amount × per` in words. A line with growth reads as a rate (`rate(per)`) plus its fixed
 * part; a line that fitLinearCost (KvCostModel.ts) flattened to a constant — the measured points did not grow with
 * the amount, as on a busy machine — has no rate to tell (dividing by its `msPer` of 0 printed "Infinity"), so it
 * reads as what it costs whatever the amount.
 */
function describeLine(name: string, line: {fixed: number; per: number}, words: {
    rate: (per: number) => string; fixed: (fixed: number) => string; amount: string; fixedPerOperation: boolean;
}): string {
    const fixed = measured(line.fixed);
    const per = measured(line.per);
    if (per != null && per > 0)
        return `${name} ${words.rate(per)}${words.fixedPerOperation && fixed != null && fixed > 0 ? ` + ${words.fixed(fixed)} each` : ""}`;
    if (fixed == null)
        return `${name} not measured`;
    return `${name} about ${words.fixed(fixed)} whatever the ${words.amount} (no growth measured)`;
}

/** Three significant digits, whole numbers from 100 on: 1.23, 12.3, 123, 12345. */
function threeDigits(value: number): string {
    return value >= 100 ? value.toFixed(0) : value.toPrecision(3);
}

/** Milliseconds per byte as GB/s, or MB/s below 1 GB/s (a slow disk would read "0.00 GB/s"). */
function bandwidth(msPerByte: number): string {
    const bytesPerSecond = 1000 / msPerByte;
    return bytesPerSecond >= 1e9 ? `${threeDigits(bytesPerSecond / 1e9)} GB/s` : `${threeDigits(bytesPerSecond / 1e6)} MB/s`;
}

/**
 * The KV swap-vs-recompute cost model in words, for the serve log: state file size, save and load bandwidth, prefill
 * speed — each as a rate where the calibration measured growth, otherwise as a flat cost (see describeLine). Never
 * prints "Infinity", "NaN" or a negative figure.
 */
export function describeKvCostModel(model: KvCostModel): string {
    const time = {fixed: formatMs, fixedPerOperation: true};
    const lines = [
        describeLine("state", {fixed: model.stateBytes.headerBytes, per: model.stateBytes.bytesPerToken},
            {rate: (perToken) => `${Math.round(perToken)} B/token`, fixed: (bytes) => formatBytes(Math.round(bytes)), amount: "length", fixedPerOperation: false}),
        describeLine("save", {fixed: model.save.fixedMs, per: model.save.msPer}, {...time, rate: bandwidth, amount: "size"}),
        describeLine("load", {fixed: model.load.fixedMs, per: model.load.msPer}, {...time, rate: bandwidth, amount: "size"}),
        describeLine("prefill", {fixed: model.prefill.fixedMs, per: model.prefill.msPer},
            {...time, rate: (msPerToken) => `${threeDigits(1000 / msPerToken)} tokens/s`, amount: "length"})
    ];
    return `KV swap vs recompute (${model.source}): ${lines.join(", ")}`;
}
