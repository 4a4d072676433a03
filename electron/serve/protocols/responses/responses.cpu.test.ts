/**
 * OpenAI's Responses API (`POST /v1/responses`, stateless) through the unmodified `openai` client and the Vercel AI SDK
 * (`ai` + `@ai-sdk/openai`, whose default provider calls /v1/responses): the same greedy reply as
 * `/v1/chat/completions`, the streamed event sequence with sequence numbers, an incomplete response at
 * `max_output_tokens`, and what a stateless server cannot honour refused by name.
 */
import {createOpenAI} from "@ai-sdk/openai";
import {generateText, streamText} from "ai";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {PlacedModel} from "../../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../../engine/testing/probeEngine.js";
import type {OpenAiServer} from "../../serveOpenAi.js";
import {rawRequest} from "../../../engine/testing/rawRequest.js";
import {loadTestModel, serveTestModel} from "../../testing/servedTestModel.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] Responses API tests: ${probe.reason}`);

const KEY = "tw-responses-test-0123456789";
const INSTRUCTIONS = "You are terse.";
const QUESTION = "Name three colours of the rainbow";

describe.skipIf(probe.reason != null)("POST /v1/responses with the openai client and the AI SDK (CPU, generated model)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;
    /** The greedy reply of /v1/chat/completions to the same prompt, and its usage. */
    let expected: {text: string; promptTokens: number; completionTokens: number; finish: string};

    beforeAll(async () => {
        placed = await loadTestModel(probe.engine!);
        server = await serveTestModel(placed, {apiKeys: [KEY]});
        client = new OpenAI({baseURL: server.url, apiKey: KEY, maxRetries: 0});
        const chat = await client.chat.completions.create({model: "kv-tiny", max_tokens: 12, temperature: 0,
            messages: [{role: "system", content: INSTRUCTIONS}, {role: "user", content: QUESTION}]});
        expected = {text: chat.choices[0]!.message.content!, promptTokens: chat.usage!.prompt_tokens, completionTokens: chat.usage!.completion_tokens,
            finish: chat.choices[0]!.finish_reason};
    });
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("answers client.responses.create with the same greedy reply as chat completions, for a string or message items", async () => {
        expect(expected.text).not.toBe("");
        const response = await client.responses.create({model: "kv-tiny", instructions: INSTRUCTIONS, input: QUESTION, max_output_tokens: 12, temperature: 0});
        expect(response.object).toBe("response");
        expect(response.id).toMatch(/^resp-/);
        expect(response.output_text).toBe(expected.text);
        expect(response.status).toBe(expected.finish === "length" ? "incomplete" : "completed");
        expect(response.usage).toMatchObject({input_tokens: expected.promptTokens, output_tokens: expected.completionTokens,
            total_tokens: expected.promptTokens + expected.completionTokens});
        expect(response.output).toHaveLength(1);
        expect(response.output[0]).toMatchObject({type: "message", role: "assistant", status: "completed"});
        const items = await client.responses.create({model: "kv-tiny", max_output_tokens: 12, temperature: 0, input: [
            {role: "developer", content: INSTRUCTIONS},
            {type: "message", role: "user", content: [{type: "input_text", text: "Name three colours"}, {type: "input_text", text: " of the rainbow"}]}
        ]});
        expect(items.output_text).toBe(expected.text);
    });

    it("says a response cut by max_output_tokens is incomplete", async () => {
        const response = await client.responses.create({model: "kv-tiny", input: "Tell a long story about a lighthouse keeper", max_output_tokens: 2, temperature: 0});
        expect(response.status).toBe("incomplete");
        expect(response.incomplete_details).toEqual({reason: "max_output_tokens"});
        expect(response.usage!.output_tokens).toBe(2);
    });

    it("streams the Responses event sequence, numbered, its deltas adding up to the reply", async () => {
        const stream = await client.responses.create({model: "kv-tiny", instructions: INSTRUCTIONS, input: QUESTION, max_output_tokens: 12, temperature: 0, stream: true});
        const events: {type: string; sequence_number: number}[] = [];
        let deltas = "";
        let done = "";
        for await (const event of stream) {
            events.push(event);
            if (event.type === "response.output_text.delta")
                deltas += event.delta;
            if (event.type === "response.output_text.done")
                done = event.text;
        }
        expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
        const types = events.map((event) => event.type).filter((type, index, all) => type !== "response.output_text.delta" || all[index - 1] !== type);
        const last = expected.finish === "length" ? "response.incomplete" : "response.completed";
        expect(types).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
            "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", last]);
        expect(deltas).toBe(expected.text);
        expect(done).toBe(expected.text);
        const final = events.at(-1) as unknown as {response: OpenAI.Responses.Response};
        expect(final.response.output_text ?? final.response.output.map((item) => item.type === "message" ? item.content.map((part) => part.type === "output_text" ? part.text : "").join("") : "").join(""))
            .toBe(expected.text);
        expect(final.response.usage).toMatchObject({input_tokens: expected.promptTokens, output_tokens: expected.completionTokens});
    });

    it("works with the AI SDK's default OpenAI provider: generateText and streamText", async () => {
        const provider = createOpenAI({baseURL: server.url, apiKey: KEY});
        const generated = await generateText({model: provider("kv-tiny"), system: INSTRUCTIONS, prompt: QUESTION, maxOutputTokens: 12, temperature: 0, maxRetries: 0});
        expect(generated.text).toBe(expected.text);
        expect(generated.usage.inputTokens).toBe(expected.promptTokens);
        expect(generated.usage.outputTokens).toBe(expected.completionTokens);
        expect(generated.finishReason).toBe(expected.finish === "length" ? "length" : "stop");
        const streamed = streamText({model: provider("kv-tiny"), system: INSTRUCTIONS, prompt: QUESTION, maxOutputTokens: 12, temperature: 0, maxRetries: 0,
            onError: () => {}});
        let text = "";
        for await (const delta of streamed.textStream)
            text += delta;
        expect(text).toBe(expected.text);
        expect((await streamed.usage).outputTokens).toBe(expected.completionTokens);
    });

    it("refuses what a stateless server cannot honour, and every wrong shape of function tools, by name", async () => {
        const cases: [Record<string, unknown>, RegExp][] = [
            [{input: "hi", previous_response_id: "resp_123"}, /`previous_response_id` cannot be used: this server is stateless/],
            [{input: "hi", store: true}, /`store` must be false or left out/],
            ...responsesToolRefusals(),
            // this model's template reads no reasoning effort (reasoning.cpu.test.ts serves one that thinks)
            [{input: "hi", reasoning: {effort: "low"}}, /`reasoning.effort` "low" cannot be honoured: this model's chat template does not read a reasoning effort/],
            [{input: "hi", text: {verbosity: "low"}}, /`text.verbosity` is not supported/],
            [{input: ""}, /`input` must be 1 to/],
            [{input: []}, /`input` must be a non-empty/],
            [{}, /`input` must be a non-empty/],
            [{input: [{type: "function_call_output", call_id: "c", output: "x"}]}, /`input\[0\]\.call_id` answers no function_call item before it/],
            [{input: [{type: "computer_call_output", call_id: "c", output: {}}]}, /input\[0\] is a "computer_call_output" item/],
            [{input: [{role: "user", content: [{type: "input_image", image_url: "data:"}]}]}, /input\[0\]\.content\[0\] is a "input_image" part/],
            [{input: [{role: "user", content: "a"}, {role: "assistant", content: "b"}]}, /last input item must be the user's/],
            [{input: [{role: "tool", content: "a"}]}, /role must be "user", "assistant", "system" or "developer"/],
            [{input: "hi", max_output_tokens: 0}, /`max_output_tokens`: The max tokens must be an integer from 1/],
            [{input: "hi", temperature: -1}, /`temperature`/],
            [{input: "hi", top_p: 2}, /`top_p`/],
            [{input: "hi", stream: "true"}, /`stream` must be true or false/],
            [{input: "hi", instructions: 5}, /`instructions` must be a string/]
        ];
        for (const [body, message] of cases) {
            const answer = await rawRequest(server.port, {method: "POST", path: "/v1/responses", headers: {Authorization: `Bearer ${KEY}`, "Content-Type": "application/json"},
                body: JSON.stringify({model: "kv-tiny", ...body})});
            expect(answer.status, JSON.stringify(body).slice(0, 100)).toBe(400);
            expect(JSON.parse(answer.text).error.message, JSON.stringify(body).slice(0, 100)).toMatch(message);
        }
        await expect(client.responses.create({model: "kv-tiny", input: "hi", previous_response_id: "resp_1"})).rejects.toMatchObject({status: 400});
        await expect(client.responses.create({model: "kv-tiny", input: "hi", store: true})).rejects.toMatchObject({status: 400});
    });
});

/** Every wrong shape of a Responses request's tools, tool_choice and tool items, with the words its refusal must have. */
function responsesToolRefusals(): [Record<string, unknown>, RegExp][] {
    const tool = {type: "function", name: "get_time", parameters: {type: "object", properties: {zone: {type: "string"}}}, strict: true};
    const call = {type: "function_call", call_id: "call_1", name: "get_time", arguments: "{\"zone\":\"utc\"}"};
    const output = {type: "function_call_output", call_id: "call_1", output: "12:00"};
    const turn = (items: unknown[]) => ({tools: [tool], input: [{role: "user", content: "Time?"}, ...items]});
    return [
        [{input: "hi", tools: {type: "function"}}, /`tools` must be a list/],
        [{input: "hi", tools: [{type: "web_search_preview"}]}, /`tools\[0\]\.type` is "web_search_preview": hosted tools run on OpenAI's side/],
        [{input: "hi", tools: [{type: "file_search", vector_store_ids: ["v"]}]}, /`tools\[0\]\.type` is "file_search"/],
        [{input: "hi", tools: [{type: "function", function: {name: "f"}}]}, /`tools\[0\]\.function` is not a field of a function tool/],
        [{input: "hi", tools: [{...tool, name: "get time"}]}, /`tools\[0\]\.name` must be 1 to 64/],
        [{input: "hi", tools: [{...tool, name: "x".repeat(65)}]}, /`tools\[0\]\.name` must be 1 to 64/],
        [{input: "hi", tools: [tool, tool]}, /`tools\[1\]\.name` repeats the tool name "get_time"/],
        [{input: "hi", tools: [{...tool, parameters: {type: "array"}}]}, /`tools\[0\]\.parameters\.type` must be "object"/],
        [{input: "hi", tools: [{...tool, strict: "yes"}]}, /`tools\[0\]\.strict` must be true or false/],
        [{input: "hi", tools: [{...tool, description: ["d"]}]}, /`tools\[0\]\.description` must be a string/],
        [{input: "hi", tools: [tool], tool_choice: "always"}, /`tool_choice` must be "none", "auto", "required"/],
        [{input: "hi", tools: [tool], tool_choice: {type: "file_search"}}, /`tool_choice\.type` is "file_search"/],
        [{input: "hi", tools: [tool], tool_choice: {type: "function", name: "get_weather"}}, /`tool_choice\.name` names the function "get_weather", which is not one of `tools`/],
        [{input: "hi", tools: [tool], tool_choice: {type: "function", function: {name: "get_time"}}}, /`tool_choice\.function` is not a field of tool_choice/],
        [{input: "hi", tool_choice: "required"}, /`tool_choice: "required"` needs `tools`/],
        [{input: "hi", tools: [tool], parallel_tool_calls: "no"}, /`parallel_tool_calls` must be true or false/],
        [{input: "hi", tools: [tool], text: {format: {type: "json_object"}}}, /`text` \(a format\) cannot be combined with tools/],
        [turn([{...call, arguments: "zone=utc"}, output]), /`input\[1\]\.arguments` must be a JSON object written as a string/],
        [turn([{...call, arguments: "[1]"}, output]), /`input\[1\]\.arguments` must be a JSON object/],
        [turn([{...call, arguments: {zone: "utc"}}, output]), /`input\[1\]\.arguments` must be a JSON object written as a string/],
        [turn([{...call, call_id: ""}, output]), /`input\[1\]\.call_id` must be a tool call id/],
        [turn([{...call, name: "get time"}, output]), /`input\[1\]\.name` must be 1 to 64/],
        [turn([{...call, status: "done"}, output]), /`input\[1\]\.status` must be "in_progress", "completed" or "incomplete"/],
        [turn([{...call, function: {}}, output]), /`input\[1\]\.function` is not a field of a function_call item/],
        [turn([call, call, output]), /`input\[2\]\.call_id` repeats the call id "call_1"/],
        [turn([call, {...output, call_id: "call_2"}]), /`input\[2\]\.call_id` answers no function_call item before it \("call_2"\)/],
        [turn([call, {...output, output: 12}]), /`input\[2\]\.output` must be a string or a non-empty list of input_text parts/],
        [turn([call, {...output, output: [{type: "input_image", image_url: "data:"}]}]), /`input\[2\]\.output\[0\]` must be \{"type": "input_text"/],
        [turn([call]), /last input item must be the user's message or a function_call_output/]
    ];
}
