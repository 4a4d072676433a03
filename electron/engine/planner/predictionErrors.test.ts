/**
 * Ranges from this machine's own prediction errors: assumed until enough measurements, then their 10th–90th
 * percentile, narrowing as the errors settle; a model's own replies correct its predictions; a busy profile widens
 * them; the store survives what a broken or hostile file can hold.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {
    ASSUMED_BAND, CONTENDED_WIDENING, KEEP_PER_KIND, MIN_SAMPLES, PREDICTION_ERRORS_FILE, predictionDeviceKind, predictionRange,
    rangesSentence, readPredictionErrors, recordPredictionError
} from "./predictionErrors.js";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-errors-"));
const at = (dir: string, predictedMs = 100) => predictionRange(readPredictionErrors(dir), {figure: "tpot", deviceKind: "vulkan", modelKey: "m", predictedMs, contended: false});
const record = (dir: string, ratio: number, modelKey = "other") =>
    recordPredictionError(dir, {figure: "tpot", deviceKind: "vulkan", modelKey, predictedMs: 100, measuredMs: 100 * ratio});

describe("prediction ranges", () => {
    it("are the assumed band until this machine measured enough, then its own spread, which narrows as errors settle", async () => {
        const dir = tmp();
        expect(at(dir)).toMatchObject({basis: "assumed", lowMs: 100 * ASSUMED_BAND.low, highMs: 100 * ASSUMED_BAND.high, samples: 0, correction: null});
        for (let i = 0; i < MIN_SAMPLES - 1; i++) await record(dir, 1.1);
        expect(at(dir).basis).toBe("assumed");
        // noisy first measurements: a wide range
        for (const ratio of [0.9, 1.4, 1.0, 1.3, 1.2]) await record(dir, ratio);
        const early = at(dir);
        expect(early.basis).toBe("measured");
        // then a long run of steady ones: the range narrows around them
        for (let i = 0; i < KEEP_PER_KIND; i++) await record(dir, 1.2 + (i % 3) * 0.01);
        const settled = at(dir);
        expect(settled.highMs - settled.lowMs).toBeLessThan(early.highMs - early.lowMs);
        expect(settled.lowMs).toBeGreaterThan(115);
        expect(settled.highMs).toBeLessThan(125);
        // where the measurement is expected: this machine runs 20% slower than predicted, so not about the prediction
        expect(settled.centerMs).toBe(100);
        // only the most recent measurements are kept
        expect(JSON.parse(fs.readFileSync(path.join(dir, PREDICTION_ERRORS_FILE), "utf8")).byKind["tpot:vulkan"]).toHaveLength(KEEP_PER_KIND);
    });

    it("centres a model's predictions on its own measured replies once it has a few, and says so", async () => {
        const dir = tmp();
        for (let i = 0; i < 8; i++) await record(dir, 1.0 + (i % 2) * 0.1);
        for (const ratio of [1.5, 1.6, 1.55]) await record(dir, ratio, "m");
        const range = at(dir);
        expect(range.correction?.samples).toBe(3);
        expect(range.correction?.factor).toBeCloseTo(1.55, 5);
        expect(range.centerMs).toBeCloseTo(155, 5);
        expect(range.lowMs).toBeLessThan(155);
        expect(range.highMs).toBeGreaterThan(155);
        expect(rangesSentence(range, range, false)).toMatch(/corrected by this model's own measured replies \(TTFT ×1\.55, TPOT ×1\.55\)/);
    });

    it("are wider for a profile measured on a busy machine", async () => {
        const dir = tmp();
        for (let i = 0; i < 10; i++) await record(dir, 1 + i / 100);
        const quiet = at(dir);
        const busy = predictionRange(readPredictionErrors(dir), {figure: "tpot", deviceKind: "vulkan", modelKey: null, predictedMs: 100, contended: true});
        expect(busy.lowMs).toBeCloseTo(quiet.lowMs / CONTENDED_WIDENING, 6);
        expect(busy.highMs).toBeCloseTo(quiet.highMs * CONTENDED_WIDENING, 6);
        expect(rangesSentence(busy, busy, true)).toMatch(/busy machine/);
    });

    it("keeps figures and device kinds apart, and drops what is not a prediction's error", async () => {
        const dir = tmp();
        for (let i = 0; i < 10; i++) await recordPredictionError(dir, {figure: "ttft", deviceKind: "cpu", modelKey: "m", predictedMs: 100, measuredMs: 300});
        expect(at(dir).basis).toBe("assumed");
        for (const measuredMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, 100 * 60, 100 / 60])
            await recordPredictionError(dir, {figure: "tpot", deviceKind: "vulkan", modelKey: "m", predictedMs: 100, measuredMs});
        expect(readPredictionErrors(dir).byKind["tpot:vulkan"]).toBeUndefined();
        expect(predictionDeviceKind("Vulkan0", true)).toBe("vulkan");
        expect(predictionDeviceKind("CUDA1", true)).toBe("cuda");
        expect(predictionDeviceKind("CUDA0", false)).toBe("cpu");
        expect(predictionDeviceKind(null, true)).toBe("cpu");
    });

    it("reads a broken or hostile store as empty, or keeps only its valid entries", () => {
        const dir = tmp();
        const file = path.join(dir, PREDICTION_ERRORS_FILE);
        for (const text of ["{", "null", "[]", JSON.stringify({version: 2, byKind: {"tpot:vulkan": [1, 1, 1, 1, 1]}})]) {
            fs.writeFileSync(file, text);
            expect(at(dir).basis, text).toBe("assumed");
        }
        fs.writeFileSync(file, JSON.stringify({version: 1, byKind: {"tpot:vulkan": [1, 1, "x", 1, 1], "ttft:vulkan": [1, -1], "__proto__": [1, 1, 1, 1, 1],
            "tpot:cuda": [1.1, 1.1, 1.1, 1.1, 1.1]}, byModel: "m"}));
        const errors = readPredictionErrors(dir);
        expect(Object.keys(errors.byKind)).toEqual(["tpot:cuda"]);
        expect(Object.keys(errors.byModel)).toEqual([]);
    });
});
