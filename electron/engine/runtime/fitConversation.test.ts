/**
 * fitConversation's choices with a prompt length computed by hand (one token per word, plus 10 for the template and
 * the newest message), so each case's answer can be written down; the real tokenizer and native loop run in
 * fitConversation.cpu.test.ts.
 */
import {describe, expect, it} from "vitest";
import type {ChatTurn} from "../../contract/chat.js";
import {fitConversation, fitConversationAsync, type FitOptions} from "./fitConversation.js";

const words = (turns: readonly ChatTurn[]): number => 10 + turns.reduce((sum, turn) => sum + turn.text.split(" ").length, 0);
/** Exchange i: a user message of 10 words and a reply of 10 words. */
const chat = (exchanges: number): ChatTurn[] => Array.from({length: exchanges}, (_, index): ChatTurn[] => [
    {role: "user", text: `q${index} ` + "w ".repeat(9).trim()},
    {role: "assistant", text: `a${index} ` + "w ".repeat(9).trim()}
]).flat();
const ids = (turns: readonly ChatTurn[]): string[] => turns.map((turn) => turn.text.split(" ")[0]!);
const fit = (history: ChatTurn[], options: Partial<FitOptions>) =>
    fitConversation(history, {policy: "truncateMiddle", contextSize: 100, maxTokens: 20, promptTokens: words, ...options});

describe("fitConversation", () => {
    it("leaves out the fewest middle exchanges, keeping the first one and room for the reply", () => {
        // 10 exchanges: 210 tokens; a 100-token context with 20 for the reply holds 80: the first and the newest two
        const fitted = fit(chat(10), {});
        expect(ids(fitted.history)).toEqual(["q0", "a0", "q8", "a8", "q9", "a9"]);
        expect(fitted).toMatchObject({leftOutMessages: 14, promptTokens: 70});
    });

    it("a rolling window keeps the newest exchanges only", () => {
        const fitted = fit(chat(10), {policy: "rollingWindow"});
        expect(ids(fitted.history)).toEqual(["q7", "a7", "q8", "a8", "q9", "a9"]);
        expect(fitted.leftOutMessages).toBe(14);
    });

    it("the reply's room is its max tokens, but at most a quarter of the context", () => {
        expect(ids(fit(chat(10), {maxTokens: 5}).history)).toEqual(["q0", "a0", "q7", "a7", "q8", "a8", "q9", "a9"]);
        // 500 max tokens would push everything out of a 100-token context; 25 are kept free
        expect(ids(fit(chat(10), {maxTokens: 500}).history)).toEqual(["q0", "a0", "q8", "a8", "q9", "a9"]);
    });

    it("an exchange goes whole: a reply is never seen without its question, even when replies run on", () => {
        const history: ChatTurn[] = [...chat(3), {role: "assistant", text: "extra w w w w w w w w w"}, ...chat(6).slice(6)];
        const fitted = fit(history, {policy: "rollingWindow", contextSize: 80});
        expect(fitted.history[0]!.role).toBe("user");
        expect(ids(fitted.history)).toEqual(["q3", "a3", "q4", "a4", "q5", "a5"].slice(-fitted.history.length));
    });

    it("under truncateMiddle a first exchange too long to keep goes, and the newest exchanges that fit stay", () => {
        // 61 words: the first exchange and the newest message (71 tokens) leave the reply its 20
        const long = (wordCount: number): ChatTurn[] => [{role: "user", text: "q0 " + "w ".repeat(wordCount - 1).trim()}, ...chat(4).slice(2)];
        expect(ids(fit(long(61), {}).history)).toEqual(["q0"]);
        // 85 words: they do not, so it goes and every later exchange (70 tokens) fits again
        expect(ids(fit(long(85), {}).history)).toEqual(["q1", "a1", "q2", "a2", "q3", "a3"]);
    });

    it("a conversation that fits is kept whole", () => {
        expect(fit(chat(3), {})).toMatchObject({leftOutMessages: 0, promptTokens: 70});
        expect(fit(chat(3), {policy: "stop"})).toMatchObject({leftOutMessages: 0, promptTokens: 70});
    });

    it("stop refuses only a prompt with no room for one reply token, and says so with both sizes", () => {
        // 90 tokens: less than the reply's room, but stop replies into what is left (as it did before policies)
        expect(fit(chat(4), {policy: "stop"}).leftOutMessages).toBe(0);
        expect(() => fit(chat(5), {policy: "stop"})).toThrow("The conversation (110 tokens) does not fit in the context (100 tokens)");
    });

    it("refuses a newest message that alone leaves no room, naming its size and the context's", () => {
        expect(() => fit(chat(5), {promptTokens: (turns) => 100 + words(turns)}))
            .toThrow("takes 110 tokens and the context holds 100");
        // with every earlier message out, a small room left is still used
        expect(fit(chat(5), {promptTokens: (turns) => 85 + words(turns)})).toMatchObject({history: [], leftOutMessages: 10, promptTokens: 95});
    });
});

describe("fitConversationAsync", () => {
    it("chooses what fitConversation chooses, under every policy, measuring each history it tries once", async () => {
        for (const policy of ["truncateMiddle", "rollingWindow", "stop"] as const)
            for (const [exchanges, contextSize] of [[10, 100], [3, 1000], [40, 300]] as const) {
                const measured: string[] = [];
                const options = {policy, contextSize, maxTokens: 20};
                const run = async () => await fitConversationAsync(chat(exchanges), {...options, promptTokens: async (turns) => {
                    measured.push(ids(turns).join(" "));
                    return await Promise.resolve(words(turns));
                }});
                let expected: unknown, thrown: unknown;
                try {
                    expected = fitConversation(chat(exchanges), {...options, promptTokens: words});
                } catch (error) {
                    thrown = error;
                }
                if (thrown != null) await expect(run()).rejects.toThrow((thrown as Error).message);
                else expect(await run()).toEqual(expected);
                expect(new Set(measured).size, `${policy} ${exchanges}`).toBe(measured.length);
            }
    });
});
