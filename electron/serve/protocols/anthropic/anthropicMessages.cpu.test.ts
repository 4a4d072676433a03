/**
 * Anthropic's Messages API (`/v1/messages`, `/v1/messages/count_tokens`) through the unmodified `@anthropic-ai/sdk`
 * on a generated model: the same greedy reply as `/v1/chat/completions` (one generation path), the streamed event
 * sequence, stop reasons and usage, both key headers, and every field it cannot honour refused by name in Anthropic's
 * error shape.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {PlacedModel} from "../../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../../engine/testing/probeEngine.js";
import type {OpenAiServer} from "../../serveOpenAi.js";
import {clientConnection} from "../../../contract/clientSnippets.js";
import {rawRequest} from "../../../engine/testing/rawRequest.js";
import {loadTestModel, serveTestModel} from "../../testing/servedTestModel.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] Anthropic messages tests: ${probe.reason}`);

const KEY = "tw-anthropic-test-0123456789";
const SYSTEM = "You are terse.";
const QUESTION = "Name three colours of the rainbow";
/**
 * Sampling fields the Messages API takes and this server honours; the SDK's own types no longer list them (newer
 * models fix their sampling), but it sends them as given.
 */
const sampling = (fields: {temperature?: number; top_p?: number; top_k?: number}): object => fields;
/** The whole prompt of an answer: Anthropic counts the tokens evaluated and those read from the KV cache apart. */
const promptOf = (usage: Anthropic.Usage): number => usage.input_tokens + (usage.cache_read_input_tokens ?? 0);

describe.skipIf(probe.reason != null)("POST /v1/messages with @anthropic-ai/sdk (CPU, generated model)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: Anthropic;

    beforeAll(async () => {
        placed = await loadTestModel(probe.engine!);
        server = await serveTestModel(placed, {apiKeys: [KEY]});
        client = new Anthropic({baseURL: server.url.replace(/\/v1$/, ""), apiKey: KEY, maxRetries: 0});
    });
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("answers the same greedy reply as /v1/chat/completions, with Anthropic's message, stop reason and usage", async () => {
        const message = await client.messages.create({model: "kv-tiny", max_tokens: 12, ...sampling({temperature: 0}), system: SYSTEM,
            messages: [{role: "user", content: QUESTION}], metadata: {user_id: "tester"}});
        expect(message).toMatchObject({type: "message", role: "assistant", model: "kv-tiny"});
        expect(message.id).toMatch(/^msg-/);
        expect(message.content).toHaveLength(1);
        const text = (message.content[0] as Anthropic.TextBlock).text;
        expect(text).not.toBe("");
        const openai = new OpenAI({baseURL: server.url, apiKey: KEY, maxRetries: 0});
        const chat = await openai.chat.completions.create({model: "kv-tiny", max_tokens: 12, temperature: 0,
            messages: [{role: "system", content: SYSTEM}, {role: "user", content: QUESTION}]});
        expect(text).toBe(chat.choices[0]!.message.content);
        expect(promptOf(message.usage)).toBe(chat.usage!.prompt_tokens);
        expect(message.usage.output_tokens).toBe(chat.usage!.completion_tokens);
        expect(message.stop_reason).toBe(chat.choices[0]!.finish_reason === "length" ? "max_tokens" : "end_turn");
        // system as text blocks, content as text blocks with cache_control: the same prompt
        const blocks = await client.messages.create({model: "kv-tiny", max_tokens: 12, ...sampling({temperature: 0}), cache_control: {type: "ephemeral", ttl: "5m"},
            system: [{type: "text", text: SYSTEM, cache_control: {type: "ephemeral"}}],
            messages: [{role: "user", content: [{type: "text", text: "Name three colours"}, {type: "text", text: " of the rainbow"}]}]});
        expect(blocks.content).toEqual(message.content);
        expect(promptOf(blocks.usage)).toBe(promptOf(message.usage));
    });

    it("stops at max_tokens and at a stop sequence, saying which", async () => {
        const short = await client.messages.create({model: "kv-tiny", max_tokens: 3, ...sampling({temperature: 0, top_k: 1, top_p: 1}),
            messages: [{role: "user", content: "Tell a long story about a lighthouse keeper"}]});
        expect(short.stop_reason).toBe("max_tokens");
        expect(short.usage.output_tokens).toBe(3);
        const long = await client.messages.create({model: "kv-tiny", max_tokens: 40, ...sampling({temperature: 0}),
            messages: [{role: "user", content: "Tell a long story about a lighthouse keeper"}]});
        const text = (long.content[0] as Anthropic.TextBlock).text;
        const stop = text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 2);
        expect(stop.trim()).not.toBe("");
        const stopped = await client.messages.create({model: "kv-tiny", max_tokens: 40, ...sampling({temperature: 0}), stop_sequences: [stop],
            messages: [{role: "user", content: "Tell a long story about a lighthouse keeper"}]});
        expect(stopped.stop_reason).toBe("stop_sequence");
        expect(stopped.stop_sequence).toBe(stop);
        expect(text.startsWith((stopped.content[0] as Anthropic.TextBlock).text)).toBe(true);
        expect((stopped.content[0] as Anthropic.TextBlock).text.length).toBeLessThan(text.length);
    });

    it("streams Anthropic's event sequence, its deltas adding up to the whole reply", async () => {
        const whole = await client.messages.create({model: "kv-tiny", max_tokens: 16, ...sampling({temperature: 0}), messages: [{role: "user", content: QUESTION}]});
        const stream = client.messages.stream({model: "kv-tiny", max_tokens: 16, ...sampling({temperature: 0}), messages: [{role: "user", content: QUESTION}]});
        const types: string[] = [];
        let deltas = "";
        expect((whole.content[0] as Anthropic.TextBlock).text).not.toBe("");
        for await (const event of stream) {
            types.push(event.type);
            if (event.type === "content_block_delta" && event.delta.type === "text_delta")
                deltas += event.delta.text;
        }
        const final = await stream.finalMessage();
        const compact = types.filter((type, index) => type !== "content_block_delta" || types[index - 1] !== "content_block_delta");
        expect(compact).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
        expect(deltas).toBe((whole.content[0] as Anthropic.TextBlock).text);
        expect(final.content).toEqual(whole.content);
        expect(promptOf(final.usage)).toBe(promptOf(whole.usage));
        expect(final.usage.output_tokens).toBe(whole.usage.output_tokens);
        // the same question again: its prompt's KV cache is read, not evaluated, and the usage says so (as Anthropic's does)
        expect(final.usage.cache_read_input_tokens).toBeGreaterThan(0);
        expect(final.stop_reason).toBe(whole.stop_reason);
        // the raw stream names each event and pings once
        const raw = await rawRequest(server.port, {method: "POST", path: "/v1/messages", headers: {"x-api-key": KEY, "anthropic-version": "2023-06-01", "Content-Type": "application/json"},
            body: JSON.stringify({model: "kv-tiny", max_tokens: 2, stream: true, messages: [{role: "user", content: "hi"}]})});
        expect(raw.text).toMatch(/^event: message_start\ndata: /);
        expect(raw.text).toMatch(/event: ping\ndata: \{"type":"ping"\}/);
        expect(raw.text.trimEnd()).toMatch(/event: message_stop\ndata: \{"type":"message_stop"\}$/);
        expect(raw.text).not.toMatch(/\[DONE\]/);
    });

    it("counts tokens as /v1/messages evaluates them", async () => {
        const counted = await client.messages.countTokens({model: "kv-tiny", system: SYSTEM, messages: [{role: "user", content: QUESTION}]});
        const message = await client.messages.create({model: "kv-tiny", max_tokens: 1, system: SYSTEM, messages: [{role: "user", content: QUESTION}]});
        expect(counted.input_tokens).toBe(promptOf(message.usage));
        const longer = await client.messages.countTokens({model: "kv-tiny", system: SYSTEM, messages: [{role: "user", content: `${QUESTION} and three more`}]});
        expect(longer.input_tokens).toBeGreaterThan(counted.input_tokens);
        await expect(client.messages.countTokens({model: "kv-tiny", messages: [{role: "user", content: "x"}], tools: [{name: "x", input_schema: {type: "string"}}]} as never))
            .rejects.toMatchObject({status: 400});
        // a prompt no sequence could hold is refused as /v1/messages would refuse it, before it is tokenized
        await expect(client.messages.countTokens({model: "kv-tiny", messages: [{role: "user", content: "word ".repeat(20_000)}]}))
            .rejects.toThrow(/needs at least \d+ prompt tokens/);
    });

    it("works with what the Server screen's \"Connect a client\" tells each client to set", async () => {
        const connection = clientConnection({url: server.url, port: server.port, bindAddress: "127.0.0.1", requireKey: true, apiKey: KEY, modelId: "kv-tiny"});
        const anthropic = new Anthropic({baseURL: connection.anthropicBaseUrl, authToken: connection.key, apiKey: null, maxRetries: 0});
        expect((await anthropic.messages.create({model: connection.model, max_tokens: 1, messages: [{role: "user", content: "hi"}]})).model).toBe("kv-tiny");
        const openai = new OpenAI({baseURL: connection.openAiBaseUrl, apiKey: connection.key, maxRetries: 0});
        expect((await openai.chat.completions.create({model: connection.model, max_tokens: 1, messages: [{role: "user", content: "hi"}]})).model).toBe("kv-tiny");
    });

    it("takes the key as x-api-key or Bearer and refuses a wrong one in Anthropic's shape", async () => {
        const bearer = new Anthropic({baseURL: server.url.replace(/\/v1$/, ""), authToken: KEY, apiKey: null, maxRetries: 0});
        expect((await bearer.messages.create({model: "kv-tiny", max_tokens: 1, messages: [{role: "user", content: "hi"}]})).type).toBe("message");
        const wrong = new Anthropic({baseURL: server.url.replace(/\/v1$/, ""), apiKey: "tw-anthropic-test-0123456780", maxRetries: 0});
        const error = await wrong.messages.create({model: "kv-tiny", max_tokens: 1, messages: [{role: "user", content: "hi"}]}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
        expect((error as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({type: "error", error: {type: "authentication_error"}});
    });

    it("refuses what it cannot honour by name — server tools, wrong tool shapes, thinking, images, prefill, bad numbers — in Anthropic's error shape", async () => {
        const user = [{role: "user", content: "hi"}];
        const cases: [Record<string, unknown>, RegExp][] = [
            [{messages: user}, /`max_tokens` is required/],
            ...toolRefusals(user),
            // this model's template has no thinking block (reasoning.cpu.test.ts serves one that has)
            [{max_tokens: 2000, messages: user, thinking: {type: "enabled", budget_tokens: 1024}}, /`thinking` asks for thinking, but this model's chat template has no thinking block/],
            [{max_tokens: 5, messages: [...user, {role: "assistant", content: [{type: "redacted_thinking", data: "x"}]}, ...user]}, /messages\[1\]\.content\[0\] is a "redacted_thinking" block/],
            [{max_tokens: 5, messages: user, service_tier: "auto"}, /`service_tier` is not supported/],
            [{max_tokens: 5, messages: [{role: "user", content: [{type: "image", source: {type: "base64", media_type: "image/png", data: "AAAA"}}]}]}, /messages\[0\]\.content\[0\] is a "image" block/],
            [{max_tokens: 5, messages: [{role: "user", content: [{type: "tool_result", tool_use_id: "x", content: "y"}]}]}, /tool_result for "x", which is no tool_use of the message right before/],
            [{max_tokens: 5, messages: [{role: "user", content: [{type: "text", text: "a", citations: []}]}]}, /content\[0\]\.citations is not supported/],
            [{max_tokens: 5, messages: [...user, {role: "assistant", content: "Sure,"}]}, /last message must be the user's/],
            [{max_tokens: 5, messages: [{role: "system", content: "x"}, ...user]}, /role must be "user" or "assistant"/],
            [{max_tokens: 5, messages: []}, /`messages` must be a non-empty list/],
            [{max_tokens: 5, messages: [{role: "user", content: []}]}, /must be a string or a non-empty list of text blocks/],
            [{max_tokens: 0, messages: user}, /`max_tokens`: The max tokens must be an integer from 1/],
            [{max_tokens: "5", messages: user}, /`max_tokens`/],
            [{max_tokens: 5, temperature: 11, messages: user}, /`temperature`/],
            [{max_tokens: 5, top_p: 1.5, messages: user}, /`top_p`/],
            [{max_tokens: 5, top_k: -1, messages: user}, /`top_k`/],
            [{max_tokens: 5, stop_sequences: ["a", "b", "c", "d", "e"], messages: user}, /`stop_sequences`: The number of stop sequences/],
            [{max_tokens: 5, stop_sequences: [""], messages: user}, /`stop_sequences` must be a list of non-empty strings/],
            [{max_tokens: 5, metadata: {user_id: "u", other: 1}, messages: user}, /`metadata` may only hold `user_id`/],
            [{max_tokens: 5, stream: "yes", messages: user}, /`stream` must be true or false/],
            [{max_tokens: 5, system: [{type: "image"}], messages: user}, /system\[0\] is a "image" block/],
            [{max_tokens: 5, cache_control: {type: "persistent"}, messages: user}, /`cache_control` must be \{"type": "ephemeral"\}/],
            [{max_tokens: 5, messages: [{role: "user", content: [{type: "text", text: "a", cache_control: {type: "ephemeral", ttl: "1d"}}]}]}, /content\[0\]\.cache_control must be/],
            [{max_tokens: 5, output_config: {effort: "low"}, messages: user}, /`output_config` is not supported/]
        ];
        for (const [body, message] of cases) {
            const answer = await rawRequest(server.port, {method: "POST", path: "/v1/messages", headers: {"x-api-key": KEY, "anthropic-version": "2023-06-01", "Content-Type": "application/json"},
                body: JSON.stringify({model: "kv-tiny", ...body})});
            expect(answer.status, JSON.stringify(body).slice(0, 100)).toBe(400);
            const parsed = JSON.parse(answer.text) as {type: string; error: {type: string; message: string}};
            expect(parsed.type).toBe("error");
            expect(parsed.error.type).toBe("invalid_request_error");
            expect(parsed.error.message, JSON.stringify(body).slice(0, 100)).toMatch(message);
        }
        await expect(client.messages.create({model: "kv-tiny", max_tokens: 5, messages: [{role: "user", content: "hi"}],
            tools: [{name: "get_weather", input_schema: {type: "object"}}], tool_choice: {type: "tool", name: "get_time"}})).rejects.toBeInstanceOf(Anthropic.BadRequestError);
        const unknownPath = await rawRequest(server.port, {method: "GET", path: "/v1/messages/batches", headers: {"x-api-key": KEY}});
        expect(JSON.parse(unknownPath.text)).toMatchObject({type: "error", error: {type: "not_found_error"}});
    });
});

/** Every wrong shape of Anthropic's tools, tool_choice and tool blocks, with the words its refusal must have. */
function toolRefusals(user: unknown[]): [Record<string, unknown>, RegExp][] {
    const schema = {type: "object", properties: {city: {type: "string"}}};
    const tool = {name: "get_weather", description: "Weather", input_schema: schema};
    const use = {type: "tool_use", id: "toolu_1", name: "get_weather", input: {city: "Paris"}};
    const result = {type: "tool_result", tool_use_id: "toolu_1", content: "Sunny"};
    const turns = (assistant: unknown[], answer: unknown[]) => ({max_tokens: 5, tools: [tool],
        messages: [...user, {role: "assistant", content: assistant}, {role: "user", content: answer}]});
    return [
        [{max_tokens: 5, messages: user, tools: {name: "t"}}, /`tools` must be a list/],
        [{max_tokens: 5, messages: user, tools: ["get_weather"]}, /`tools\[0\]` must be an object/],
        [{max_tokens: 5, messages: user, tools: [{name: "t"}]}, /`tools\[0\]\.input_schema` must be a JSON schema of "type": "object"/],
        [{max_tokens: 5, messages: user, tools: [{name: "t", input_schema: {type: "string"}}]}, /`tools\[0\]\.input_schema`/],
        [{max_tokens: 5, messages: user, tools: [{name: "get weather", input_schema: schema}]}, /`tools\[0\]\.name` must be 1 to 64/],
        [{max_tokens: 5, messages: user, tools: [{name: "x".repeat(65), input_schema: schema}]}, /`tools\[0\]\.name` must be 1 to 64/],
        [{max_tokens: 5, messages: user, tools: [tool, tool]}, /`tools\[1\]\.name` repeats the tool name "get_weather"/],
        [{max_tokens: 5, messages: user, tools: [{type: "web_search_20250305", name: "web_search"}]}, /`tools\[0\]\.type` is "web_search_20250305": Anthropic's server tools/],
        [{max_tokens: 5, messages: user, tools: [{...tool, input_examples: [{city: "Paris"}]}]}, /`tools\[0\]\.input_examples` is not supported/],
        [{max_tokens: 5, messages: user, tools: [{...tool, description: 3}]}, /`tools\[0\]\.description` must be a string/],
        [{max_tokens: 5, messages: user, tools: [{...tool, strict: "yes"}]}, /`tools\[0\]\.strict` must be true or false/],
        [{max_tokens: 5, messages: user, tools: [{...tool, cache_control: {type: "forever"}}]}, /`tools\[0\]\.cache_control` must be/],
        [{max_tokens: 5, messages: user, tools: [tool], tool_choice: "auto"}, /`tool_choice` must be an object/],
        [{max_tokens: 5, messages: user, tools: [tool], tool_choice: {type: "maybe"}}, /`tool_choice\.type` must be "auto", "any", "tool" or "none"/],
        [{max_tokens: 5, messages: user, tools: [tool], tool_choice: {type: "tool", name: "get_time"}}, /`tool_choice\.name` names the tool "get_time", which is not one of `tools`/],
        [{max_tokens: 5, messages: user, tools: [tool], tool_choice: {type: "tool"}}, /`tool_choice\.name` must be 1 to 64/],
        [{max_tokens: 5, messages: user, tools: [tool], tool_choice: {type: "auto", name: "get_weather"}}, /`tool_choice\.name` goes only with "type": "tool"/],
        [{max_tokens: 5, messages: user, tool_choice: {type: "any"}}, /`tool_choice` of type "any" or "tool" needs `tools`/],
        [{max_tokens: 5, messages: user, tools: [tool], tool_choice: {type: "none", disable_parallel_tool_use: true}}, /`tool_choice\.disable_parallel_tool_use`/],
        [{max_tokens: 5, messages: user, tools: [tool], tool_choice: {type: "auto", disable_parallel_tool_use: "yes"}}, /`tool_choice\.disable_parallel_tool_use` must be true or false/],
        [{max_tokens: 5, messages: user, tools: [tool], tool_choice: {type: "auto", parallel: false}}, /`tool_choice\.parallel` is not a field of tool_choice/],
        [turns([{...use, input: "Paris"}], [result]), /`messages\[1\]\.content\[0\]\.input` must be an object/],
        [turns([{...use, input: ["Paris"]}], [result]), /`messages\[1\]\.content\[0\]\.input` must be an object/],
        [turns([{...use, id: ""}], [result]), /`messages\[1\]\.content\[0\]\.id` must be a tool call id/],
        [turns([{...use, id: 7}], [result]), /`messages\[1\]\.content\[0\]\.id` must be a tool call id/],
        [turns([{...use, name: "get weather"}], [result]), /`messages\[1\]\.content\[0\]\.name` must be 1 to 64/],
        [turns([{...use, caller: {type: "direct"}}], [result]), /`messages\[1\]\.content\[0\]\.caller` is not supported/],
        [turns([use], [{type: "text", text: "here:"}, result]), /messages\[2\]\.content\[1\] is a tool_result after other content/],
        [turns([use, use], [result]), /messages\[1\]\.content repeats the tool_use id "toolu_1"/],
        [turns([use], [{type: "text", text: "and?"}]), /messages\[2\] must answer the tool_use "toolu_1"/],
        [turns([use], [{...result, tool_use_id: "toolu_2"}]), /tool_result for "toolu_2", which is no tool_use of the message right before/],
        [turns([use], [{...result, content: [{type: "image", source: {type: "url", url: "http://x/y.png"}}]}]), /`messages\[2\]\.content\[0\]\.content\[0\]` must be a text block/],
        [turns([use], [{...result, content: 5}]), /`messages\[2\]\.content\[0\]\.content` must be a string or a list of text blocks/],
        [turns([use], [{...result, is_error: "yes"}]), /`messages\[2\]\.content\[0\]\.is_error` must be true or false/],
        [turns([use], [{...result, tool_use_id: ""}]), /`messages\[2\]\.content\[0\]\.tool_use_id` must be a tool call id/],
        [{max_tokens: 5, tools: [tool], messages: [{role: "user", content: [use]}]}, /messages\[0\]\.content\[0\] is a "tool_use" block: this server takes text blocks here and tool_result blocks/],
        [{max_tokens: 5, tools: [tool], messages: [...user, {role: "assistant", content: [result]}, ...user]}, /messages\[1\]\.content\[0\] is a "tool_result" block/],
        [{max_tokens: 5, tools: [tool], messages: [...user, {role: "assistant", content: [use]}]}, /last message must be the user's/]
    ];
}
