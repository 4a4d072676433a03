/**
 * LangChain JS (`@langchain/openai`'s ChatOpenAI and OpenAIEmbeddings, `@langchain/core`'s messages and `tool`), used
 * as its documentation shows, against the server on a generated model carrying Qwen2.5's chat template: chat and
 * streaming with usage, `withStructuredOutput` by each of its methods, `bindTools` with a forced tool and the tool's
 * result sent back as LangChain builds it (`tool.invoke(toolCall)`), and embeddings. Greedy decoding of random weights
 * says nothing about quality; what is checked is that each reply has the shape the framework expects and that what
 * the grammar enforces (schemas, tool arguments) validates.
 *
 * What ChatOpenAI sends by default (checked on its request bodies): `model`, `messages`, `stream: false`, and
 * `max_tokens`/`temperature` when set; streaming adds `stream: true` and `stream_options: {include_usage: true}`;
 * structured output adds `response_format` (`json_schema` with `strict: true`, or `json_object`) or `tools` with a
 * named `tool_choice`; a tool message built by `tool.invoke` carries the function's `name`. OpenAIEmbeddings sends
 * `model`, `input` and `encoding_format: "base64"`.
 */
import {AIMessage, HumanMessage, ToolMessage, type AIMessageChunk} from "@langchain/core/messages";
import {tool} from "@langchain/core/tools";
import {ChatOpenAI, OpenAIEmbeddings} from "@langchain/openai";
import {Ajv} from "ajv";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {z} from "zod";
import type {PlacedModel} from "../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../engine/testing/probeEngine.js";
import type {OpenAiServer} from "../serveOpenAi.js";
import {BOUNDED_JSON_SCHEMA} from "../testing/boundedJsonSchema.js";
import {serveTestModel} from "../testing/servedTestModel.js";
import {chatTemplate, loadTemplatedTestModel, missingTemplates, TEMPLATE_FILES} from "../testing/templatedTestModel.js";

const QWEN = TEMPLATE_FILES.qwen25;
const probe = await probeEngine("cpu", {maxThreads: 1});
const skip = probe.reason ?? missingTemplates([QWEN]);
if (skip != null)
    console.warn(`[skip] LangChain client tests: ${skip}`);

const KEY = "tw-langchain-test-0123456789";
const TOOL_RESPONSE = "{{- '\\n<tool_response>\\n' }}";

/** Qwen2.5's template, its tool results also showing the function's `name` (as Kimi-K3.jinja in the same folder does). */
function templateShowingToolNames(): string {
    const qwen = chatTemplate(QWEN);
    if (!qwen.includes(TOOL_RESPONSE))
        throw new Error(`${QWEN} no longer opens a tool result with ${TOOL_RESPONSE}`);
    return qwen.replace(TOOL_RESPONSE, "{{- '\\n<tool_response' }}{%- if message.name %}{{- ' name=\"' + message.name + '\"' }}{%- endif %}{{- '>\\n' }}");
}

/** BOUNDED_JSON_SCHEMA as a zod schema, the way LangChain's documentation writes one. */
const SEA = z.strictObject({
    mood: z.enum(["calm", "stormy"]), ok: z.boolean(), count: z.int().min(0).max(9), name: z.string().max(3), tags: z.array(z.enum(["a", "b"])).max(2)
});

describe.skipIf(skip != null)("LangChain JS against the server (CPU, generated model with Qwen2.5's template)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    const validate = new Ajv({strict: true}).compile(BOUNDED_JSON_SCHEMA);
    const chatModel = (fields: ConstructorParameters<typeof ChatOpenAI>[0] = {}) =>
        new ChatOpenAI({model: "kv-tiny", apiKey: KEY, configuration: {baseURL: server.url}, temperature: 0, maxRetries: 0, ...fields});

    beforeAll(async () => {
        placed = await loadTemplatedTestModel(probe.engine!, "langchain-qwen", templateShowingToolNames());
        server = await serveTestModel(placed, {apiKeys: [KEY]});
    }, 120_000);
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("invoke answers an AIMessage with usage; stream hands the same text on in pieces, usage in its last chunk", async () => {
        const chat = chatModel({maxTokens: 12});
        const whole = await chat.invoke("Hello");
        expect(typeof whole.content).toBe("string");
        expect(whole.content).not.toBe("");
        expect(whole.response_metadata.finish_reason).toBe("length");
        expect(whole.usage_metadata).toMatchObject({output_tokens: 12, total_tokens: whole.usage_metadata!.input_tokens + 12});
        expect(whole.usage_metadata!.input_tokens).toBeGreaterThan(0);
        const pieces: string[] = [];
        let joined: AIMessageChunk | undefined;
        for await (const chunk of await chat.stream("Hello")) {
            pieces.push(chunk.content as string);
            joined = joined == null ? chunk : joined.concat(chunk);
        }
        expect(pieces.filter((piece) => piece !== "").length).toBeGreaterThan(3);
        expect(joined!.content).toBe(whole.content);
        // LangChain asks for usage when it streams (stream_options.include_usage): the last chunk carries it
        expect(joined!.usage_metadata).toMatchObject({input_tokens: whole.usage_metadata!.input_tokens, output_tokens: 12});
    });

    it("withStructuredOutput gives an object that validates, by its default method (json_schema), jsonSchema with a JSON schema, and functionCalling", async () => {
        const chat = chatModel({maxTokens: 1024});
        const byDefault = await chat.withStructuredOutput(SEA, {includeRaw: true}).invoke("Describe the sea.");
        expect(validate(byDefault.parsed), JSON.stringify(validate.errors)).toBe(true);
        // the object is the server's reply, parsed
        expect(JSON.parse(byDefault.raw.content as string)).toEqual(byDefault.parsed);
        const bySchema: unknown = await chat.withStructuredOutput(BOUNDED_JSON_SCHEMA, {method: "jsonSchema", name: "sea"}).invoke("Describe the sea.");
        expect(validate(bySchema), JSON.stringify(validate.errors)).toBe(true);
        // functionCalling forces a call to a tool named "sea"; LangChain leaves parallel calls allowed, and random weights
        // never end a list of calls on their own (a real model stops after its one call): one call, then the reply ends
        const oneCall = chatModel({maxTokens: 1024, modelKwargs: {parallel_tool_calls: false}});
        const byCall: unknown = await oneCall.withStructuredOutput(SEA, {method: "functionCalling", name: "sea"}).invoke("Describe the sea.");
        expect(validate(byCall), JSON.stringify(validate.errors)).toBe(true);
    });

    it("withStructuredOutput's jsonMode gives a JSON object: json_object carries no schema, so only an object is promised", async () => {
        const object = await chatModel({maxTokens: 64}).withStructuredOutput({type: "object"}, {method: "jsonMode"}).invoke("Describe the sea as JSON.");
        expect(typeof object).toBe("object");
        expect(Array.isArray(object)).toBe(false);
    });

    it("bindTools with a forced tool gives tool_calls whose args validate, streamed alike; the tool's result sent back gets a reply, its name shown to the template", async () => {
        const weather = tool(() => "Sunny, 21 degrees", {name: "get_weather", description: "The weather of a city", schema: BOUNDED_JSON_SCHEMA});
        const time = tool(() => "12:00", {name: "get_time", schema: z.object({zone: z.enum(["utc", "cet"])})});
        const question = new HumanMessage("What is the weather in Paris?");
        // one call (see the functionCalling case above for why parallel calls are turned off)
        const forced = chatModel({maxTokens: 1024}).bindTools([weather, time], {tool_choice: "get_weather", parallel_tool_calls: false});
        const reply = await forced.invoke([question]);
        expect(reply.response_metadata.finish_reason).toBe("tool_calls");
        expect(reply.tool_calls).toHaveLength(1);
        const call = reply.tool_calls![0]!;
        expect(call).toMatchObject({name: "get_weather", id: expect.stringMatching(/^call_/)});
        expect(validate(call.args), JSON.stringify(validate.errors)).toBe(true);
        let streamed: AIMessageChunk | undefined;
        let chunks = 0;
        for await (const chunk of await forced.stream([question])) {
            streamed = streamed == null ? chunk : streamed.concat(chunk);
            chunks++;
        }
        expect(chunks).toBeGreaterThan(3);
        expect(streamed!.tool_calls!.map(({name, args}) => ({name, args}))).toEqual([{name: call.name, args: call.args}]);

        // the tool's result as LangChain's documentation makes it: a ToolMessage carrying the function's name
        const result = await weather.invoke({...call, type: "tool_call"});
        expect(result).toBeInstanceOf(ToolMessage);
        expect(result).toMatchObject({name: "get_weather", tool_call_id: call.id, content: "Sunny, 21 degrees"});
        const free = chatModel({maxTokens: 8}).bindTools([weather, time]);
        const answer = await free.invoke([question, new AIMessage({content: "", tool_calls: [call]}), result]);
        expect(answer).toBeInstanceOf(AIMessage);
        expect(answer.usage_metadata!.input_tokens).toBeGreaterThan(reply.usage_metadata!.input_tokens);
        // the name reaches the chat template (this one shows it): the same turn without it is a shorter prompt
        const unnamed = await free.invoke([question, new AIMessage({content: "", tool_calls: [call]}),
            new ToolMessage({content: "Sunny, 21 degrees", tool_call_id: call.id!})]);
        expect(answer.usage_metadata!.input_tokens).toBeGreaterThan(unnamed.usage_metadata!.input_tokens);
    });

    it("the sampling options ChatOpenAI takes are honoured: a seed repeats a sampled reply, logprobs come back per token", async () => {
        const chat = chatModel({temperature: 1, topP: 0.9, frequencyPenalty: 0.5, presencePenalty: 0.2, n: 1, maxTokens: 8, logprobs: true, topLogprobs: 2,
            user: "tester", promptCacheKey: "langchain-test"});
        const first = await chat.invoke("Hello", {seed: 7});
        const again = await chat.invoke("Hello", {seed: 7});
        expect(again.content).toBe(first.content);
        const tokens = (first.response_metadata.logprobs as {content: {logprob: number; top_logprobs: unknown[]}[]}).content;
        expect(tokens).toHaveLength(first.usage_metadata!.output_tokens);
        for (const token of tokens) {
            expect(token.logprob).toBeLessThanOrEqual(0);
            expect(token.top_logprobs.length).toBeGreaterThan(0);
            expect(token.top_logprobs.length).toBeLessThanOrEqual(2);
        }
    });

    it("OpenAIEmbeddings: vectors of the model's size, equal for equal text, different for different text", async () => {
        const embeddings = new OpenAIEmbeddings({model: "kv-tiny", apiKey: KEY, configuration: {baseURL: server.url}, maxRetries: 0});
        const size = placed.model.embeddingVectorSize;
        expect(size).toBeGreaterThan(0);
        const query = await embeddings.embedQuery("The cat sat on the mat");
        const documents = await embeddings.embedDocuments(["The cat sat on the mat", "A quantum of solace", "The cat sat on the mat"]);
        expect(query).toHaveLength(size);
        expect(documents.map((vector) => vector.length)).toEqual([size, size, size]);
        expect(documents[0]).toEqual(query);
        expect(documents[2]).toEqual(documents[0]);
        expect(documents[1]).not.toEqual(documents[0]);
    });
});
