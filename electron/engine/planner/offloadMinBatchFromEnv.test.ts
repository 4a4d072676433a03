import {describe, expect, it} from "vitest";
import {OFFLOAD_MIN_BATCH} from "./costModel.js";
import {offloadMinBatchFromEnv} from "./offloadMinBatchFromEnv.js";

describe("offloadMinBatchFromEnv", () => {
    it("is llama.cpp's default of 32 without the variable, and the variable as ggml's atoi reads it", () => {
        expect(offloadMinBatchFromEnv({})).toBe(OFFLOAD_MIN_BATCH);
        expect(offloadMinBatchFromEnv({GGML_OP_OFFLOAD_MIN_BATCH: "128"})).toBe(128);
        expect(offloadMinBatchFromEnv({GGML_OP_OFFLOAD_MIN_BATCH: " 64tokens"})).toBe(64);
    });

    it("refuses thresholds that would offload decode steps, saying what to set", () => {
        expect(() => offloadMinBatchFromEnv({GGML_OP_OFFLOAD_MIN_BATCH: "1"})).toThrow(/unset it or set it to 2 or more/);
        // atoi of a word is 0
        expect(() => offloadMinBatchFromEnv({GGML_OP_OFFLOAD_MIN_BATCH: "off"})).toThrow(/"off"/);
    });
});
