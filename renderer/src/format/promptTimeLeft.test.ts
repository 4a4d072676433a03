import {describe, expect, it} from "vitest";
import {formatTimeLeft, predictedPromptTokensPerSecond, promptTimeLeftMs, streamPromptTimeLeftMs} from "./promptTimeLeft";

describe("the time left to process a prompt", () => {
    it("goes by the rate measured on this prompt: tokens decoded over the engine's time since it started", () => {
        // 200 of 1000 tokens in 4 s: 50 tokens/s, 800 left → 16 s
        expect(promptTimeLeftMs({evaluated: 200, total: 1000, reused: 0, elapsedMs: 4000})).toBe(16_000);
        // and keeps moving between events: 3 s after that event, 13 s
        expect(promptTimeLeftMs({evaluated: 200, total: 1000, reused: 0, elapsedMs: 4000}, {sinceProgressMs: 3000})).toBe(13_000);
        // a measured rate wins over the plan's
        expect(promptTimeLeftMs({evaluated: 200, total: 1000, reused: 0, elapsedMs: 4000}, {predictedTokensPerSecond: 1000})).toBe(16_000);
    });

    it("does not count tokens reused from the KV cache as decoded (they took no time)", () => {
        // 600 reused, 100 decoded in 2 s: 50 tokens/s, 300 left → 6 s (not 700 tokens in 2 s → 0.86 s)
        expect(promptTimeLeftMs({evaluated: 700, total: 1000, reused: 600, elapsedMs: 2000})).toBe(6000);
    });

    it("before any token was measured, goes by the plan's predicted prompt speed less the time already spent", () => {
        // the engine's first event: nothing decoded yet; 1000 tokens at 100 tokens/s → 10 s
        expect(promptTimeLeftMs({evaluated: 0, total: 1000, reused: 0, elapsedMs: 0}, {predictedTokensPerSecond: 100})).toBe(10_000);
        expect(promptTimeLeftMs({evaluated: 0, total: 1000, reused: 0, elapsedMs: 0}, {predictedTokensPerSecond: 100, sinceProgressMs: 2500})).toBe(7500);
        // reused tokens are not left to do: 400 at 100 tokens/s
        expect(promptTimeLeftMs({evaluated: 600, total: 1000, reused: 600, elapsedMs: 50}, {predictedTokensPerSecond: 100})).toBe(3950);
        // longer than predicted: 0, never negative
        expect(promptTimeLeftMs({evaluated: 0, total: 1000, reused: 0, elapsedMs: 0}, {predictedTokensPerSecond: 100, sinceProgressMs: 60_000})).toBe(0);
    });

    it("is unknown without a measured rate and without a prediction, and never NaN or negative", () => {
        expect(promptTimeLeftMs({evaluated: 0, total: 1000, reused: 0, elapsedMs: 0})).toBeNull();
        expect(promptTimeLeftMs({evaluated: 0, total: 1000, reused: 0, elapsedMs: 0}, {predictedTokensPerSecond: null})).toBeNull();
        for (const predicted of [0, -5, Number.NaN, Number.POSITIVE_INFINITY])
            expect(promptTimeLeftMs({evaluated: 0, total: 1000, reused: 0, elapsedMs: 0}, {predictedTokensPerSecond: predicted}), String(predicted)).toBeNull();
        // decoded but no time measured yet: not an infinite rate
        expect(promptTimeLeftMs({evaluated: 10, total: 1000, reused: 0, elapsedMs: 0})).toBeNull();
        for (const bad of [{evaluated: Number.NaN}, {total: Number.NaN}, {reused: Number.NaN}, {elapsedMs: Number.NaN}, {elapsedMs: -1}])
            expect(promptTimeLeftMs({evaluated: 200, total: 1000, reused: 0, elapsedMs: 4000, ...bad}), JSON.stringify(bad)).toBeNull();
        expect(promptTimeLeftMs({evaluated: 200, total: 1000, reused: 0, elapsedMs: 4000}, {sinceProgressMs: Number.NaN})).toBeNull();
        // more evaluated than the total (a late event): nothing left
        expect(promptTimeLeftMs({evaluated: 1200, total: 1000, reused: 0, elapsedMs: 4000})).toBe(0);
        // a clock that went back: counted from the event
        expect(promptTimeLeftMs({evaluated: 200, total: 1000, reused: 0, elapsedMs: 4000}, {sinceProgressMs: -500})).toBe(16_000);
        // far past the estimate: 0
        expect(promptTimeLeftMs({evaluated: 200, total: 1000, reused: 0, elapsedMs: 4000}, {sinceProgressMs: 20_000})).toBe(0);
    });

    it("takes the plan's speed from its typical prompt over its predicted time to the first token", () => {
        expect(predictedPromptTokensPerSecond({promptTokens: 512, ttftMs: 2000})).toBe(256);
        expect(predictedPromptTokensPerSecond(null)).toBeNull();
        expect(predictedPromptTokensPerSecond({promptTokens: 512, ttftMs: null})).toBeNull();
        expect(predictedPromptTokensPerSecond({promptTokens: 512, ttftMs: 0})).toBeNull();
        expect(predictedPromptTokensPerSecond({promptTokens: 0, ttftMs: 2000})).toBeNull();
    });

    it("of a streaming reply: from when its last progress arrived, and none once the reply has begun", () => {
        const reading = {prompt: {evaluated: 200, total: 1000, reused: 0, elapsedMs: 4000}, promptAt: 10_000, tokens: 0, text: ""};
        expect(streamPromptTimeLeftMs(reading, 12_000, null)).toBe(14_000);
        expect(streamPromptTimeLeftMs({...reading, tokens: 1, text: "Hi"}, 12_000, null)).toBeNull();
        expect(streamPromptTimeLeftMs({...reading, prompt: null, promptAt: null}, 12_000, 100)).toBeNull();
    });

    it("is shown in words from one second on, hidden below it or when unknown", () => {
        expect(formatTimeLeft(null)).toBeNull();
        expect(formatTimeLeft(Number.NaN)).toBeNull();
        expect(formatTimeLeft(0)).toBeNull();
        expect(formatTimeLeft(999)).toBeNull();
        expect(formatTimeLeft(1000)).toBe("about 1 s left");
        expect(formatTimeLeft(16_400)).toBe("about 16 s left");
        expect(formatTimeLeft(59_400)).toBe("about 59 s left");
        expect(formatTimeLeft(59_600)).toBe("about 1 min left");
        expect(formatTimeLeft(125_000)).toBe("about 2 min 5 s left");
        expect(formatTimeLeft(3_600_000)).toBe("about 1 h left");
        expect(formatTimeLeft(3_780_000)).toBe("about 1 h 3 min left");
    });
});
