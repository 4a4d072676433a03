import {describe, expect, it} from "vitest";
import {OpenAiError} from "../../common/OpenAiError.js";
import {parseChatCompletionRequest, parseCompletionRequest} from "./parseGenerationRequest.js";
import {curlExample, CURL_EXAMPLE_MAX_TOKENS} from "../../../contract/server.js";

function refusal(run: () => unknown): {status: number; param: string | null; message: string} {
    try {
        run();
    } catch (error) {
        if (error instanceof OpenAiError)
            return {status: error.status, param: error.param, message: error.message};
        throw error;
    }
    throw new Error("not refused");
}

describe("OpenAI request bodies", () => {
    it("accepts the Server screen's copy-paste curl as a streamed request for a short reply", () => {
        const curl = curlExample({url: "http://127.0.0.1:8080/v1", port: 8080, bindAddress: "127.0.0.1", requireKey: true, apiKey: "tw-x"});
        const body = JSON.parse(/-d '(.*)'/.exec(curl)![1]!) as unknown;
        // a bounded first try: without max_tokens a reply runs until the context is full
        expect(parseChatCompletionRequest(body)).toMatchObject({stream: true, maxTokens: CURL_EXAMPLE_MAX_TOKENS});
        expect(CURL_EXAMPLE_MAX_TOKENS).toBeLessThanOrEqual(128);
    });

    it("reads a chat request the way OpenAI clients send it", () => {
        const parsed = parseChatCompletionRequest({
            model: "x", messages: [{role: "developer", content: "Be brief."}, {role: "user", content: [{type: "text", text: "Hi "}, {type: "text", text: "there"}]}],
            max_tokens: 12, temperature: 0, top_p: 0.9, top_k: 40, seed: 7, stop: "\n", stream: true, stream_options: {include_usage: true},
            user: "ignored", presence_penalty: 0
        });
        expect(parsed).toEqual({
            kind: "chat", model: "x", messages: [{role: "system", text: "Be brief."}, {role: "user", text: "Hi there"}],
            maxTokens: 12, temperature: 0, topP: 0.9, topK: 40, minP: undefined, seed: 7, stop: ["\n"], stream: true, includeUsage: true,
            frequencyPenalty: undefined, presencePenalty: 0, repeatPenalty: undefined, repeatLastN: undefined, logitBias: new Map(), constraint: null, logprobs: null, tools: null,
            reasoning: {format: "auto"}
        });
        expect(parseChatCompletionRequest({messages: [{role: "user", content: "x"}], max_completion_tokens: 5}).maxTokens).toBe(5);
        expect(parseChatCompletionRequest({messages: [{role: "user", content: "x"}]})).toMatchObject({maxTokens: undefined, temperature: 1, stop: [], stream: false});
    });

    it("refuses what it cannot honour with a 400 naming the field", () => {
        const user = [{role: "user", content: "x"}];
        expect(refusal(() => parseChatCompletionRequest([]))).toMatchObject({status: 400, param: null});
        expect(refusal(() => parseChatCompletionRequest({messages: []}))).toMatchObject({param: "messages"});
        expect(refusal(() => parseChatCompletionRequest({messages: [{role: "assistant", content: "x"}]}))).toMatchObject({param: "messages", message: expect.stringMatching(/must follow a user message/)});
        expect(refusal(() => parseChatCompletionRequest({messages: [{role: "user", content: "x"}, {role: "system", content: "x"}]}))).toMatchObject({param: "messages"});
        expect(refusal(() => parseChatCompletionRequest({messages: [{role: "function", content: "x"}]}))).toMatchObject({param: "messages[0].role"});
        expect(refusal(() => parseChatCompletionRequest({messages: [{role: "user", content: [{type: "image_url"}]}]}))).toMatchObject({param: "messages[0].content"});
        expect(refusal(() => parseChatCompletionRequest({messages: user, n: 2}))).toMatchObject({param: "n"});
        expect(refusal(() => parseChatCompletionRequest({messages: user, max_tokens: 0}))).toMatchObject({param: "max_tokens", message: expect.stringMatching(/max tokens must be an integer from 1/)});
        expect(refusal(() => parseChatCompletionRequest({messages: user, top_p: 1.5}))).toMatchObject({param: "top_p"});
        expect(refusal(() => parseChatCompletionRequest({messages: user, seed: -1}))).toMatchObject({param: "seed"});
        expect(refusal(() => parseChatCompletionRequest({messages: user, stop: ["a", "b", "c", "d", "e"]}))).toMatchObject({param: "stop"});
        expect(refusal(() => parseChatCompletionRequest({messages: user, stream: "yes"}))).toMatchObject({param: "stream"});
        expect(refusal(() => parseChatCompletionRequest({messages: user, tools: [{type: "function"}]}))).toMatchObject({param: "tools[0].function"});
        expect(refusal(() => parseCompletionRequest({prompt: ["a", "b"]}))).toMatchObject({param: "prompt"});
        expect(parseCompletionRequest({prompt: ["once"]}).prompt).toBe("once");
    });
});
