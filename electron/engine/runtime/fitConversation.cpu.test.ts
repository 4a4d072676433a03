/**
 * A conversation longer than a 256-token context, replied to by the real native loop (streamChatReply.ts) under each
 * context overflow policy: which messages reached the model is read back from the prompt's own token ids.
 */
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {ChatTurn} from "../../contract/chat.js";
import {replyReserve} from "../../contract/contextOverflow.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {PlacedModel} from "./PlacedModel.js";
import {streamChatReply} from "./streamChatReply.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] context overflow tests: ${probe.reason}`);

const CONTEXT = 256;
const MAX_TOKENS = 12;

/** A marker per message that no other message's text contains. */
const marker = (role: ChatTurn["role"], index: number): string => `<${role === "user" ? "q" : "a"}${index}>`;

/** `exchanges` exchanges of a user message and its reply, each with its marker. */
function longChat(exchanges: number): ChatTurn[] {
    return Array.from({length: exchanges}, (_, index): ChatTurn[] => [
        {role: "user", text: `tell me more ${marker("user", index)}`},
        {role: "assistant", text: `here it is ${marker("assistant", index)}`}
    ]).flat();
}

describe.skipIf(probe.reason != null)("context overflow policies (patched CPU build, 256-token context)", () => {
    let engine: EngineLlama;
    let placed: PlacedModel;

    beforeAll(async () => {
        engine = probe.engine!;
        const modelPath = await makeTestModel("overflow-tiny", {preset: "tiny", type: "q8_0"});
        placed = await PlacedModel.load(engine, {modelPath, contextSize: CONTEXT, batchSize: 256});
    }, 180_000);
    afterAll(async () => {
        await placed?.dispose();
        await engine?.llama.dispose();
    });

    /** The reply to `history` + a new message, and which history messages' markers the prompt held. */
    async function reply(history: ChatTurn[], policy: "truncateMiddle" | "rollingWindow") {
        const newest = `and now? ${marker("user", history.length / 2)}`;
        const answer = await streamChatReply(placed, {
            history, message: newest, systemPrompt: "be brief", maxTokens: MAX_TOKENS, temperature: 0, contextOverflow: policy, withTokenIds: true
        });
        const prompt = placed.model.detokenize(answer.tokenIds!.prompt.map((id) => id as never), true);
        const seen = history.map((turn, index) => prompt.includes(marker(turn.role, Math.floor(index / 2))));
        return {answer, prompt, seen, newest};
    }

    it("truncateMiddle keeps answering a long chat, with the system prompt, the first exchange and the newest messages in view", async () => {
        const history = longChat(20);
        const {answer, prompt, seen, newest} = await reply(history, "truncateMiddle");
        expect(answer.stopReason).not.toBe("stopped");
        expect(answer.timing.generatedTokens).toBeGreaterThan(0);
        expect(prompt).toContain("be brief");
        expect(prompt).toContain(newest);
        expect(answer.leftOutMessages).toBeGreaterThan(0);
        expect(answer.leftOutMessages % 2).toBe(0);
        // what the model saw: the first exchange, then exactly the newest messages, with room kept for the reply
        const kept = history.length - answer.leftOutMessages;
        expect(seen).toEqual(history.map((_, index) => index < 2 || index >= history.length - (kept - 2)));
        expect(answer.prompt.tokens + replyReserve(MAX_TOKENS, CONTEXT)).toBeLessThanOrEqual(CONTEXT);
        console.log(`[measure] truncateMiddle: ${answer.leftOutMessages} of ${history.length} messages left out, prompt ${answer.prompt.tokens} tokens`);
    }, 180_000);

    it("a chat goes on reply after reply under truncateMiddle, its replies fed back, never losing the first question", async () => {
        const history = longChat(1);
        let leftOut = 0;
        for (let turn = 0; turn < 14; turn++) {
            const {answer, seen} = await reply(history, "truncateMiddle");
            expect(answer.prompt.tokens).toBeLessThan(CONTEXT);
            expect(seen[0]).toBe(true);
            expect(seen.at(-1)).toBe(true);
            leftOut = answer.leftOutMessages;
            const exchange = history.length / 2;
            history.push({role: "user", text: `and now? ${marker("user", exchange)}`}, {role: "assistant", text: `${answer.text.slice(0, 40)} ${marker("assistant", exchange)}`});
        }
        expect(leftOut).toBeGreaterThan(0);
    }, 300_000);

    it("rollingWindow keeps only the newest messages that fit", async () => {
        const history = longChat(20);
        const {answer, prompt, seen, newest} = await reply(history, "rollingWindow");
        expect(answer.timing.generatedTokens).toBeGreaterThan(0);
        expect(prompt).toContain("be brief");
        expect(prompt).toContain(newest);
        const kept = history.length - answer.leftOutMessages;
        expect(kept).toBeGreaterThan(0);
        expect(seen).toEqual(history.map((_, index) => index >= history.length - kept));
        expect(answer.prompt.tokens + replyReserve(MAX_TOKENS, CONTEXT)).toBeLessThanOrEqual(CONTEXT);
    }, 180_000);

    it("a conversation that fits is sent whole, whatever the policy", async () => {
        const history = longChat(2);
        for (const policy of ["truncateMiddle", "rollingWindow"] as const) {
            const {answer, seen} = await reply(history, policy);
            expect(answer.leftOutMessages).toBe(0);
            expect(seen.every(Boolean)).toBe(true);
        }
    }, 180_000);

    it("stop refuses a conversation that does not fit, naming its size and the context's", async () => {
        await expect(streamChatReply(placed, {history: longChat(20), message: "and now?", maxTokens: MAX_TOKENS, contextOverflow: "stop"}))
            .rejects.toMatchObject({code: "conversation-too-long", message: expect.stringMatching(/^The conversation \(\d+ tokens\) does not fit in the context \(256 tokens\)/)});
    }, 180_000);

    it("a newest message that alone does not fit is refused under every policy, with its size and the context's", async () => {
        const message = Array.from({length: 200}, (_, index) => `w${index}`).join(" ");
        for (const policy of ["truncateMiddle", "rollingWindow"] as const)
            await expect(streamChatReply(placed, {history: longChat(3), message, maxTokens: MAX_TOKENS, contextOverflow: policy}))
                .rejects.toMatchObject({code: "conversation-too-long", message: expect.stringMatching(/^The newest message .* takes \d+ tokens and the context holds 256/)});
    }, 180_000);
});
