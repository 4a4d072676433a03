import {describe, expect, it} from "vitest";
import {LlamaLogLevel} from "node-llama-cpp";
import {confirmedTensors, OverrideLog} from "./overrideLog.js";

// Lines as llama.cpp logs them (llama_model_loader, llama_context::~llama_context), delivered late on purpose: the way
// node-llama-cpp's log queue can hand them over after the load has resolved.
const line = (tensor: string): string => `tensor ${tensor} (16 MiB f16) buffer type overridden to Vulkan_Host`;
const FREED = "~llama_context:    Vulkan0 compute buffer size is   3.9023 MiB, matches expectation of   3.9023 MiB";

describe("reading llama.cpp's override lines for one load", () => {
    it("waits for the lines that arrive after the load resolved, and ignores those of an earlier load", async () => {
        const log = new OverrideLog();
        const emit = (message: string): void => log.engineOptions.onLog!(LlamaLogLevel.debug, message);
        emit(line("blk.9.ffn_up.weight"));
        const confirmed = await log.confirmedBy(async () => {
            setTimeout(() => {
                emit(line("blk.1.ffn_up.weight"));
                emit(line("blk.0.ffn_up.weight"));
                emit(FREED);
            }, 50);
        });
        expect(confirmedTensors(confirmed)).toEqual(["blk.0.ffn_up.weight", "blk.1.ffn_up.weight"]);
        expect(confirmed.map((entry) => entry.bufferType)).toEqual(["Vulkan_Host", "Vulkan_Host"]);
    });

    it("fails clearly when the freed context's line never comes", async () => {
        const log = new OverrideLog();
        await expect(log.confirmedBy(async () => {}, 100)).rejects.toThrow(/did not arrive within 100 ms/);
    });
});
