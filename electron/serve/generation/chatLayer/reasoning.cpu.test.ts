/**
 * A reasoning model's thinking, against random-weight models whose GGUF carries a real reasoning template (Qwen3's and
 * DeepSeek-R1's, from llama.cpp's models/templates/): llama.cpp's chat layer finds the thinking block, a reply in the
 * template's format splits into thinking and answer (whole, and piece by piece as it streams), `enable_thinking`
 * switches it, a thinking sent back reaches the template; served, DeepSeek-R1's template opens the thinking in the prompt,
 * so what the model writes is thinking: the official `openai` and `@anthropic-ai/sdk` clients read it from
 * `reasoning_content`, `thinking` blocks and `reasoning` items, and each API's knobs are honoured or refused by name.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {PlacedModel} from "../../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../../engine/testing/probeEngine.js";
import {DEFAULT_REASONING, type ChatMessage, type ReasoningRequest} from "../../common/GenerationRequest.js";
import {nativeReasoning, templateReasoning} from "./chatReasoning.js";
import type {OpenAiServer} from "../../serveOpenAi.js";
import {serveTestModel} from "../../testing/servedTestModel.js";
import {chatTemplate, loadTemplatedTestModel, missingTemplates, TEMPLATE_FILES} from "../../testing/templatedTestModel.js";
import {TestPromptWorkers} from "../../testing/testPromptWorkers.js";
import {ToolCallStream, type ReplyDelta} from "./ToolCallStream.js";

const QWEN3 = TEMPLATE_FILES.qwen3;
const R1 = TEMPLATE_FILES.deepseekR1;
const QWEN25 = TEMPLATE_FILES.qwen25;

const probe = await probeEngine("cpu", {maxThreads: 1});
const skip = probe.reason ?? missingTemplates([QWEN3, R1, QWEN25]);
if (skip != null)
    console.warn(`[skip] reasoning tests: ${skip}`);

const loadWithTemplate = (name: string, file: string) => loadTemplatedTestModel(probe.engine!, name, chatTemplate(file));
const THOUGHT = "The user greets me; I should greet back.";
const ANSWER = "Hello! How can I help?";

describe.skipIf(skip != null)("llama.cpp's chat layer with reasoning templates (CPU, generated models)", () => {
    const models = new Map<string, PlacedModel>();
    const model = async (file: string) => {
        if (!models.has(file))
            models.set(file, await loadWithTemplate(`reasoning-${file.slice(0, 14)}`, file));
        return models.get(file)!;
    };
    const workers = new TestPromptWorkers();
    afterAll(async () => {
        await workers.close();
        for (const placed of models.values())
            await placed.dispose();
    });
    const promptOf = async (file: string, reasoning: ReasoningRequest, messages: readonly ChatMessage[] = [{role: "user", text: "Hi"}],
        streamed = false) => {
        const placed = await model(file);
        return await workers.prompt(placed, messages, null, nativeReasoning(reasoning, templateReasoning(placed.model, placed.engine.bindings)), streamed);
    };

    it("finds which templates think and which can switch thinking off", async () => {
        for (const file of [QWEN3, R1, QWEN25]) {
            const placed = await model(file);
            const traits = templateReasoning(placed.model, placed.engine.bindings);
            // Qwen2.5's template has no thinking block; Qwen3's and R1's do, with enable_thinking (or llama.cpp's own closing of R1's) as the switch
            expect(traits, file).toEqual(file === QWEN25 ? {thinks: false, switchable: false, effortLevels: false} : {thinks: true, switchable: true, effortLevels: false});
        }
    }, 120_000);

    // Qwen3 writes the whole <think> block; R1's prompt already opens it, so its reply starts inside the thinking
    it.each([[QWEN3, `<think>\n${THOUGHT}\n</think>\n\n${ANSWER}`], [R1, `${THOUGHT}\n</think>\n\n${ANSWER}`]])("%s: a reply in the template's format splits into thinking and answer; \"none\" leaves it whole", async (file, reply) => {
        const prompt = await promptOf(file, DEFAULT_REASONING);
        const parsed = prompt.parse(reply, false);
        expect(parsed.reasoning.trim()).toBe(THOUGHT);
        expect(parsed.content.trim()).toBe(ANSWER);
        expect(parsed.content).not.toContain("think>");
        const none = (await promptOf(file, {format: "none"})).parse(reply, false);
        expect(none.reasoning).toBe("");
        expect(none.content).toContain(`${THOUGHT}\n</think>`);
        expect(none.content.trim().endsWith(ANSWER)).toBe(true);
    }, 60_000);

    it.each([[QWEN3, `<think>\n${THOUGHT}\n</think>\n\n${ANSWER}`], [R1, `${THOUGHT}\n</think>\n\n${ANSWER}`]])("%s: streamed a few characters at a time, the thinking and answer pieces add up to the whole reply's, thinking first", async (file, reply) => {
        const prompt = await promptOf(file, DEFAULT_REASONING, [{role: "user", text: "Hi"}], true);
        const stream = new ToolCallStream(prompt.parse, () => "call_unused");
        const deltas: ReplyDelta[] = [];
        for (let at = 0; at < reply.length; at += 3)
            deltas.push(...stream.push(reply.slice(at, at + 3)));
        const {deltas: rest, reply: final} = stream.finish(reply, false);
        deltas.push(...rest);
        const whole = prompt.parse(reply, false);
        expect(final).toEqual({content: whole.content, reasoning: whole.reasoning, toolCalls: []});
        const thinking = deltas.filter((delta) => delta.type === "reasoning");
        const answer = deltas.filter((delta) => delta.type === "content");
        expect(thinking.map((delta) => delta.text).join("")).toBe(whole.reasoning);
        expect(answer.map((delta) => delta.text).join("")).toBe(whole.content);
        // the thinking streams as it is written (not at its end), and none of its markup reaches the answer
        expect(thinking.length).toBeGreaterThan(5);
        expect(deltas.findIndex((delta) => delta.type === "content")).toBeGreaterThan(deltas.findLastIndex((delta) => delta.type === "reasoning"));
        expect(answer.some((delta) => delta.text.includes("<") || delta.text.includes("think"))).toBe(false);
    }, 60_000);

    it("R1: \"deepseek-legacy\" separates the thinking whole and streamed, as this llama.cpp's parser does (it reads no reasoning_in_content)", async () => {
        const reply = `${THOUGHT}\n</think>\n\n${ANSWER}`;
        for (const streamed of [false, true]) {
            const parsed = (await promptOf(R1, {format: "deepseek-legacy"}, [{role: "user", text: "Hi"}], streamed)).parse(reply, false);
            expect(parsed.reasoning.trim()).toBe(THOUGHT);
            expect(parsed.content.trim()).toBe(ANSWER);
        }
    }, 60_000);

    it("Qwen3: enable_thinking off closes the thinking block in the prompt, so the reply is all answer", async () => {
        const on = await promptOf(QWEN3, DEFAULT_REASONING);
        const off = await promptOf(QWEN3, {...DEFAULT_REASONING, thinking: {on: false, field: "reasoning_effort"}});
        const placed = await model(QWEN3);
        const text = (tokens: typeof on.tokens) => placed.model.detokenize(tokens, true);
        expect(text(on.tokens)).not.toContain("</think>");
        expect(text(off.tokens).endsWith("<think>\n\n</think>\n\n")).toBe(true);
        expect(off.parse(ANSWER, false)).toEqual({content: ANSWER, reasoning: "", toolCalls: []});
    }, 60_000);

    it("Qwen3: an assistant's thinking sent back (reasoning_content) reaches the template, as llama-server hands it on", async () => {
        // Qwen3's template shows the thinking of the turns after the last user message: here the call's, before its result
        const call = {id: "call_1", name: "get_time", arguments: "{\"zone\":\"cet\"}"};
        const messages = [{role: "user" as const, text: "Time?"}, {role: "assistant" as const, text: "", toolCalls: [call], reasoning: "I need the clock tool."},
            {role: "tool" as const, text: "12:00", toolCallId: "call_1"}];
        const placed = await model(QWEN3);
        const tools = {tools: [{name: "get_time", description: null, parameters: {type: "object", properties: {zone: {type: "string"}}}}], choice: "auto" as const, parallel: false};
        const native = nativeReasoning(DEFAULT_REASONING, templateReasoning(placed.model, placed.engine.bindings));
        const shown = placed.model.detokenize((await workers.prompt(placed, messages, tools, native)).tokens, true);
        expect(shown).toContain("<think>\nI need the clock tool.\n</think>");
        const without = placed.model.detokenize((await workers.prompt(placed, [messages[0]!, {...messages[1]!, reasoning: undefined}, messages[2]!], tools, native)).tokens, true);
        expect(without).not.toContain("I need the clock tool.");
    }, 60_000);
});

describe.skipIf(skip != null)("a reasoning model served (CPU, generated model with DeepSeek-R1's template)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;
    let anthropic: Anthropic;
    const messages = [{role: "user" as const, content: "What is 2 + 2?"}];
    const request = {model: "kv-tiny", messages, temperature: 0, max_tokens: 12};

    beforeAll(async () => {
        placed = await loadWithTemplate("reasoning-served-r1", R1);
        server = await serveTestModel(placed);
        client = new OpenAI({baseURL: server.url, apiKey: "none", maxRetries: 0});
        anthropic = new Anthropic({baseURL: server.url.replace(/\/v1$/, ""), apiKey: "none", maxRetries: 0});
    }, 120_000);
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    type ReasoningMessage = {content: string | null; reasoning_content?: string};
    const messageOf = (completion: OpenAI.ChatCompletion) => completion.choices[0]!.message as unknown as ReasoningMessage;

    it("chat completions: the model's thinking comes as message.reasoning_content, streamed as delta.reasoning_content; \"none\" leaves it in the content", async () => {
        expect(server.reasoning).toEqual({thinks: true, switchable: true, effortLevels: false});
        const whole = await client.chat.completions.create(request);
        const thought = messageOf(whole).reasoning_content ?? "";
        // the prompt opened the thinking: greedy random text never closes it, so it is all thinking
        expect(thought.trim()).not.toBe("");
        expect(messageOf(whole).content).toBe("");
        expect(whole.usage!.completion_tokens).toBe(12);
        const stream = await client.chat.completions.create({...request, stream: true});
        let streamedThought = "";
        let streamedContent = "";
        for await (const chunk of stream) {
            const delta = chunk.choices[0]?.delta as {content?: string | null; reasoning_content?: string} | undefined;
            streamedThought += delta?.reasoning_content ?? "";
            streamedContent += delta?.content ?? "";
        }
        expect(streamedThought).toBe(thought);
        expect(streamedContent).toBe("");
        const none = await client.chat.completions.create({...request, ...{reasoning_format: "none"}});
        expect(messageOf(none).reasoning_content).toBeUndefined();
        expect(messageOf(none).content).toContain("<think>");
        expect(messageOf(none).content).toContain(thought.trim());
    }, 120_000);

    it("chat completions: thinking switched off (reasoning_effort \"none\", chat_template_kwargs.enable_thinking) makes the reply all answer", async () => {
        const offs = [await client.chat.completions.create({...request, reasoning_effort: "none"}),
            await client.chat.completions.create({...request, ...{chat_template_kwargs: {enable_thinking: false}}})];
        for (const off of offs) {
            expect(messageOf(off).reasoning_content).toBeUndefined();
            expect((messageOf(off).content ?? "").trim()).not.toBe("");
        }
        expect(messageOf(offs[0]!).content).toBe(messageOf(offs[1]!).content);
        // a thinking sent back is taken (R1's template drops the thinking of earlier turns)
        const echoed = await client.chat.completions.create({...request, messages: [...messages,
            {role: "assistant", content: "4", ...{reasoning_content: "Two and two make four."}}, {role: "user", content: "And 3 + 3?"}]});
        expect(echoed.choices[0]!.finish_reason).toBe("length");
    }, 120_000);

    it("an output constraint answers with thinking off (R1's prompt would take the JSON as thinking), and logprobs cover the thinking's tokens", async () => {
        const json = await client.chat.completions.create({...request, max_tokens: 200, response_format: {type: "json_object"}});
        expect(messageOf(json).reasoning_content).toBeUndefined();
        expect(typeof JSON.parse(messageOf(json).content ?? "")).toBe("object");
        const error = await client.chat.completions.create({...request, response_format: {type: "json_object"}, ...{chat_template_kwargs: {enable_thinking: true}}})
            .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("response_format");
        const withLogprobs = await client.chat.completions.create({...request, logprobs: true, top_logprobs: 2});
        expect((messageOf(withLogprobs).reasoning_content ?? "").trim()).not.toBe("");
        expect(withLogprobs.choices[0]!.logprobs!.content).toHaveLength(12);
    }, 120_000);

    it("refuses by name what the template cannot do, and wrong values of every shape", async () => {
        const cases: [Record<string, unknown>, string][] = [
            [{reasoning_effort: "high"}, "reasoning_effort"], [{reasoning_effort: "maximal"}, "reasoning_effort"], [{reasoning_effort: 1}, "reasoning_effort"],
            [{reasoning_format: "deepseekx"}, "reasoning_format"], [{reasoning_format: ["auto"]}, "reasoning_format"],
            [{chat_template_kwargs: {enable_thinking: "false"}}, "chat_template_kwargs.enable_thinking"],
            [{chat_template_kwargs: {reasoning_effort: "low"}}, "chat_template_kwargs.reasoning_effort"],
            [{reasoning_effort: "none", chat_template_kwargs: {enable_thinking: true}}, "chat_template_kwargs.enable_thinking"],
            [{messages: [...messages, {role: "assistant", content: "4", reasoning_content: 4}, {role: "user", content: "?"}]}, "messages[1].reasoning_content"],
            [{messages: [{role: "user", content: "Hi", reasoning_content: "x"}]}, "messages[0].reasoning_content"]
        ];
        for (const [fields, param] of cases) {
            const error = await client.chat.completions.create({...request, ...fields} as never).catch((caught: unknown) => caught);
            expect(error, JSON.stringify(fields)).toBeInstanceOf(OpenAI.BadRequestError);
            expect((error as InstanceType<typeof OpenAI.BadRequestError>).param, JSON.stringify(fields)).toBe(param);
        }
    }, 120_000);

    it("Anthropic messages through @anthropic-ai/sdk: a thinking block before the text, streamed as thinking_delta; thinking disabled or budgeted", async () => {
        const chat = await client.chat.completions.create(request);
        const anthropicRequest = {model: "kv-tiny", max_tokens: 12, ...{temperature: 0}, messages};
        const whole = await anthropic.messages.create(anthropicRequest);
        expect(whole.content.map((block) => block.type)).toEqual(["thinking", "text"]);
        expect(whole.content[0]).toEqual({type: "thinking", thinking: messageOf(chat).reasoning_content, signature: ""});
        const stream = anthropic.messages.stream(anthropicRequest);
        const deltas: string[] = [];
        for await (const event of stream)
            if (event.type === "content_block_delta")
                deltas.push(event.delta.type);
        const final = await stream.finalMessage();
        expect(final.content).toEqual(whole.content);
        expect(deltas.every((type) => type === "thinking_delta")).toBe(true);
        const off = await anthropic.messages.create({...anthropicRequest, thinking: {type: "disabled"}});
        expect(off.content.map((block) => block.type)).toEqual(["text"]);
        // a thinking block sent back is taken as the assistant turn's thinking
        const back = await anthropic.messages.create({...anthropicRequest, messages: [...messages,
            {role: "assistant", content: [{type: "thinking", thinking: "Two and two.", signature: ""}, {type: "text", text: "4"}]}, {role: "user", content: "And 3 + 3?"}]});
        expect(back.stop_reason).toBe("max_tokens");
        // the budget: thinking that reaches it is cut there (the reply ends as if by max_tokens)
        const budgeted = await anthropic.messages.create({...anthropicRequest, max_tokens: 1100, thinking: {type: "enabled", budget_tokens: 1024}});
        expect(budgeted.stop_reason).toBe("max_tokens");
        expect(budgeted.usage.output_tokens).toBe(1024);
        expect(budgeted.content.map((block) => block.type)).toEqual(["thinking", "text"]);
        for (const [thinking, param] of [[{type: "enabled", budget_tokens: 1023}, "thinking.budget_tokens"], [{type: "enabled", budget_tokens: 12}, "thinking.budget_tokens"],
            [{type: "enabled"}, "thinking.budget_tokens"], [{type: "on"}, "thinking.type"], [{type: "adaptive", display: "summarized"}, "thinking.display"],
            [{type: "disabled", budget_tokens: 2000}, "thinking.budget_tokens"]] as const) {
            const error = await anthropic.messages.create({...anthropicRequest, max_tokens: 2048, thinking} as never).catch((caught: unknown) => caught);
            expect(error, JSON.stringify(thinking)).toBeInstanceOf(Anthropic.BadRequestError);
            expect((error as Error).message, JSON.stringify(thinking)).toContain(`\`${param}\``);
        }
    }, 300_000);

    it("Responses through the openai client: a reasoning item (its content the thinking, reasoning_tokens counted) before the message, streamed alike", async () => {
        const chat = await client.chat.completions.create(request);
        const responsesRequest = {model: "kv-tiny", input: messages[0]!.content, max_output_tokens: 12, temperature: 0};
        const whole = await client.responses.create(responsesRequest);
        expect(whole.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
        const item = whole.output[0] as OpenAI.Responses.ResponseReasoningItem;
        expect(item.summary).toEqual([]);
        expect(item.content).toEqual([{type: "reasoning_text", text: messageOf(chat).reasoning_content}]);
        // the answer never began: every generated token was thinking
        expect(whole.usage!.output_tokens_details.reasoning_tokens).toBe(12);
        expect(whole.usage!.output_tokens).toBe(12);
        const stream = client.responses.stream(responsesRequest);
        let streamed = "";
        for await (const event of stream)
            if (event.type === "response.reasoning_text.delta")
                streamed += event.delta;
        const final = await stream.finalResponse();
        expect(streamed).toBe(item.content![0]!.text);
        expect(final.output.map((output) => output.type === "reasoning" ? {...output, id: ""} : output.type))
            .toEqual(whole.output.map((output) => output.type === "reasoning" ? {...output, id: ""} : output.type));
        const off = await client.responses.create({...responsesRequest, reasoning: {effort: "none"}});
        expect(off.output.map((output) => output.type)).toEqual(["message"]);
        // the reasoning item goes back with the assistant's message it came with
        const back = await client.responses.create({...responsesRequest, input: [{role: "user", content: "What is 2 + 2?"}, {...item, id: item.id},
            {role: "assistant", content: "4"}, {role: "user", content: "And 3 + 3?"}]});
        expect(back.status).toBe("incomplete");
        for (const [fields, param] of [[{reasoning: {effort: "low"}}, "reasoning.effort"], [{reasoning: {summary: "auto"}}, "reasoning.summary"],
            [{input: [{type: "reasoning", summary: [], content: [{type: "reasoning_text", text: "x"}]}, {role: "user", content: "?"}]}, "input[0]"],
            [{input: [{type: "reasoning", summary: [], encrypted_content: "abc"}, {role: "assistant", content: "4"}, {role: "user", content: "?"}]},
                "input[0].encrypted_content"]] as const) {
            const error = await client.responses.create({...responsesRequest, ...fields} as never).catch((caught: unknown) => caught);
            expect(error, JSON.stringify(fields)).toBeInstanceOf(OpenAI.BadRequestError);
            expect((error as InstanceType<typeof OpenAI.BadRequestError>).param, JSON.stringify(fields)).toBe(param);
        }
    }, 120_000);
});
