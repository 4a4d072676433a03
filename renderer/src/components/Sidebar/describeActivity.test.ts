import {describe, expect, it} from "vitest";
import type {LiveStream} from "../../stores/chatStore";
import {describeActivity} from "./describeActivity";

const stream = (over: Partial<LiveStream>): LiveStream =>
    ({streamId: "s", conversationId: "c", messageId: null, text: "", tokens: 0, elapsedMs: 0, sentAt: 0, prompt: null, promptAt: null, stopping: false, awaiting: null, ...over});

describe("the sidebar's activity line", () => {
    it("says a long prompt is being read, with its progress, instead of nothing beside \"Model ready\"", () => {
        expect(describeActivity([stream({prompt: {evaluated: 120, total: 411, reused: 0, elapsedMs: 900}})], null))
            .toEqual(["Reading the prompt · 120 / 411 tokens"]);
        expect(describeActivity([stream({})], null)).toEqual(["Starting a reply"]);
    });

    it("adds the time left to a prompt being read, moving with the clock, and nothing when it is unknown or under a second", () => {
        // sent at 600; 120 tokens in 2.4 s: 50 tokens/s, 291 left → 5.8 s at the event, 4.8 s one second later
        const reading = stream({sentAt: 600, prompt: {evaluated: 120, total: 411, reused: 0, elapsedMs: 2400}, promptAt: 1000});
        expect(describeActivity([reading], null, {now: 1000, predictedTokensPerSecond: null}))
            .toEqual(["Reading the prompt · 120 / 411 tokens · 400 ms · about 6 s left"]);
        expect(describeActivity([reading], null, {now: 2000, predictedTokensPerSecond: null}))
            .toEqual(["Reading the prompt · 120 / 411 tokens · 1.40 s · about 5 s left"]);
        expect(describeActivity([reading], null, {now: 6500, predictedTokensPerSecond: null})).toEqual(["Reading the prompt · 120 / 411 tokens · 5.90 s"]);
        // before a token was measured: the plan's prompt speed, or nothing
        const started = stream({sentAt: 600, prompt: {evaluated: 0, total: 411, reused: 0, elapsedMs: 0}, promptAt: 1000});
        expect(describeActivity([started], null, {now: 1000, predictedTokensPerSecond: 100})).toEqual(["Reading the prompt · 0 / 411 tokens · 400 ms · about 4 s left"]);
        expect(describeActivity([started], null, {now: 1000, predictedTokensPerSecond: null})).toEqual(["Reading the prompt · 0 / 411 tokens · 400 ms"]);
    });

    it("counts the wait up from the Send, before the engine's first event and while its prompt clock still reads 0", () => {
        const sent = stream({sentAt: 10_000});
        expect(describeActivity([sent], null, {now: 10_000, predictedTokensPerSecond: null})).toEqual(["Starting a reply · 0.0 ms"]);
        expect(describeActivity([sent], null, {now: 11_500, predictedTokensPerSecond: null})).toEqual(["Starting a reply · 1.50 s"]);
        // the engine's first event is sent before the first chunk is read: its own clock says 0 ms, the wait goes on
        const firstEvent = {...sent, prompt: {evaluated: 0, total: 5000, reused: 0, elapsedMs: 0}, promptAt: 12_000};
        expect(describeActivity([firstEvent], null, {now: 12_000, predictedTokensPerSecond: null})).toEqual(["Reading the prompt · 0 / 5000 tokens · 2.00 s"]);
        expect(describeActivity([firstEvent], null, {now: 15_250, predictedTokensPerSecond: null})).toEqual(["Reading the prompt · 0 / 5000 tokens · 5.25 s"]);
    });

    it("follows a reply from writing to stopping, and counts the other conversations' replies", () => {
        const writing = stream({text: "Hello", tokens: 3});
        expect(describeActivity([writing], null)).toEqual(["Writing a reply · 3 tokens"]);
        expect(describeActivity([writing, stream({streamId: "t"})], null)).toEqual(["Writing a reply · 3 tokens (+1 more)"]);
        expect(describeActivity([{...writing, stopping: true}], null)).toEqual(["Stopping a reply"]);
    });

    it("says what the server is doing, and nothing when all is quiet", () => {
        expect(describeActivity([], {status: "starting", served: 0, startup: null})).toEqual(["Server starting…"]);
        expect(describeActivity([], {status: "serving", served: 1, startup: null})).toEqual(["Serving · 1 request answered"]);
        expect(describeActivity([], {status: "serving", served: 12, startup: null})).toEqual(["Serving · 12 requests answered"]);
        expect(describeActivity([], {status: "off", served: 3, startup: null})).toEqual([]);
        expect(describeActivity([], null)).toEqual([]);
    });

    it("names the step a server start is on, with its progress where known, instead of a bare \"starting\"", () => {
        expect(describeActivity([], {status: "starting", served: 0, startup: {step: null, fraction: null, steps: []}})).toEqual(["Server starting…"]);
        expect(describeActivity([], {status: "starting", served: 0, startup: {step: "loading-context", fraction: null, steps: ["loading-context"]}}))
            .toEqual(["Server starting: loading the model's context for the parallel sequences"]);
        expect(describeActivity([], {status: "starting", served: 0, startup: {step: "measuring-kv", fraction: 0.375, steps: ["loading-context", "measuring-kv"]}}))
            .toEqual(["Server starting: measuring KV swap costs (first start with this model and settings) · 38%"]);
    });
});
