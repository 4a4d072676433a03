import {describe, expect, it} from "vitest";
import {splitThinking} from "./splitThinking";

describe("a reasoning model's reply, split into its thinking and its answer", () => {
    it("Qwen3's shape: <think>…</think> then the answer", () => {
        expect(splitThinking("<think>\nThe user greets me.\n</think>\n\nHello!")).toEqual({thinking: "The user greets me.", thinkingOpen: false, answer: "Hello!"});
    });

    it("while the thinking is streamed it is open and there is no answer yet", () => {
        expect(splitThinking("<think>\nStill wor")).toEqual({thinking: "Still wor", thinkingOpen: true, answer: ""});
        expect(splitThinking("<think>")).toEqual({thinking: "", thinkingOpen: true, answer: ""});
    });

    it("DeepSeek-R1's shape: the prompt opened the thinking, the reply only closes it", () => {
        expect(splitThinking("Let me add 2 and 2.\n</think>\n\n4")).toEqual({thinking: "Let me add 2 and 2.", thinkingOpen: false, answer: "4"});
    });

    it("a reply without thinking, or one that only mentions the tags, is all answer", () => {
        for (const text of ["Hello!", "", "Use `<think>` tags like <think>this</think>.", "a <think>b</think> c"])
            expect(splitThinking(text)).toEqual({thinking: null, thinkingOpen: false, answer: text});
    });
});
