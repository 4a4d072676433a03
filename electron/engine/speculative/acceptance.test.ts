import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {ACCEPTANCE_FILE, acceptanceKey, ASSUMED_ACCEPTANCE, ASSUMED_COVERAGE, MIN_MEASURED_TOKENS, readAcceptance, recordAcceptance} from "./acceptance.js";

let dir: string;
beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tw-acceptance-"));
});
afterEach(() => fs.rmSync(dir, {recursive: true, force: true}));

describe("α measured on the user's own replies", () => {
    it("is assumed until enough draft tokens were judged, then measured from the counts, per model and speculator", async () => {
        const key = "ngram|/m.gguf";
        expect(readAcceptance(dir, key, "ngram")).toEqual({alpha: ASSUMED_ACCEPTANCE.ngram, coverage: ASSUMED_COVERAGE.ngram, source: "assumed", drafted: 0});
        // 10 steps, 4 kept whole, 20 drafted, 14 kept, in a reply of 40 tokens
        await recordAcceptance(dir, key, {steps: 10, fullyAccepted: 4, drafted: 20, accepted: 14, generated: 40});
        expect(readAcceptance(dir, key, "ngram")).toMatchObject({source: "assumed", drafted: 20});
        await recordAcceptance(dir, key, {steps: 10, fullyAccepted: 4, drafted: MIN_MEASURED_TOKENS, accepted: 14, generated: 40});
        const measured = readAcceptance(dir, key, "ngram");
        // α̂ = accepted / (accepted + rejections) = 28 / (28 + 12); coverage = steps with a draft / model steps = 20 / 52
        expect(measured.source).toBe("measured");
        expect(measured.alpha).toBeCloseTo(28 / 40, 12);
        expect(measured.coverage).toBeCloseTo(20 / 52, 12);
        expect(readAcceptance(dir, "draft|/m.gguf|/d.gguf", "draft").source).toBe("assumed");
    });

    it("a reply that drafted nothing writes nothing", async () => {
        await recordAcceptance(dir, "k", {steps: 0, fullyAccepted: 0, drafted: 0, accepted: 0, generated: 50});
        expect(fs.existsSync(path.join(dir, ACCEPTANCE_FILE))).toBe(false);
    });

    it("a damaged or foreign file is read as no measurement, and the next reply writes a good one", async () => {
        const file = path.join(dir, ACCEPTANCE_FILE);
        const bad = [
            "{not json", "[]", "null", JSON.stringify({version: 1, pairs: {k: {}}}), JSON.stringify({version: 2, pairs: []}),
            JSON.stringify({version: 2, pairs: {k: {accepted: -5, rejections: 0, drafted: 999, draftSteps: 1, modelSteps: 1, updatedAt: ""}}}),
            JSON.stringify({version: 2, pairs: {k: {accepted: 1e300, rejections: 0, drafted: 999, draftSteps: 1, modelSteps: 1, updatedAt: ""}}}),
            JSON.stringify({version: 2, pairs: {k: {accepted: "50", rejections: 0, drafted: 999, draftSteps: 1, modelSteps: 1, updatedAt: ""}}})
        ];
        for (const text of bad) {
            fs.writeFileSync(file, text);
            expect(readAcceptance(dir, "k", "draft"), text).toMatchObject({source: "assumed", alpha: ASSUMED_ACCEPTANCE.draft});
        }
        await recordAcceptance(dir, "k", {steps: 40, fullyAccepted: 30, drafted: 120, accepted: 100, generated: 150});
        expect(readAcceptance(dir, "k", "draft")).toMatchObject({source: "measured", drafted: 120});
    });

    it("a model file changed in place is a new pair: its measurements do not carry over", () => {
        const model = path.join(dir, "m.gguf");
        fs.writeFileSync(model, "one");
        const before = acceptanceKey(model, "ngram");
        fs.writeFileSync(model, "other bytes");
        expect(acceptanceKey(model, "ngram")).not.toBe(before);
        expect(acceptanceKey(model, "draft", model)).not.toBe(acceptanceKey(model, "ngram"));
    });
});
