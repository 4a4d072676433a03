/**
 * Structured output on OpenAI's Responses API (`text.format`), as the `openai` client and the Vercel AI SDK's OpenAI
 * provider (`generateText` with `Output.object`, which calls /v1/responses) send it: the greedy output of a random-weight
 * model parses and validates against the schema, streamed and not, because the grammar of the schema constrains the
 * sampler (the same path as chat completions' response_format); what the server cannot honour is refused by name.
 */
import {createOpenAI} from "@ai-sdk/openai";
import {generateText, jsonSchema, Output} from "ai";
import {Ajv} from "ajv";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {PlacedModel} from "../../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../../engine/testing/probeEngine.js";
import type {OpenAiServer} from "../../serveOpenAi.js";
import {BOUNDED_JSON_SCHEMA} from "../../testing/boundedJsonSchema.js";
import {rawRequest} from "../../../engine/testing/rawRequest.js";
import {loadTestModel, serveTestModel} from "../../testing/servedTestModel.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] Responses structured-output tests: ${probe.reason}`);

const KEY = "tw-responses-json-0123456789";
const FORMAT = {type: "json_schema", name: "sea", schema: BOUNDED_JSON_SCHEMA, strict: true} as const;

describe.skipIf(probe.reason != null)("text.format on POST /v1/responses (CPU, generated model)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;
    const validate = new Ajv({strict: true}).compile(BOUNDED_JSON_SCHEMA);

    beforeAll(async () => {
        placed = await loadTestModel(probe.engine!, "responses-json-tiny");
        server = await serveTestModel(placed, {apiKeys: [KEY]});
        client = new OpenAI({baseURL: server.url, apiKey: KEY, maxRetries: 0});
    }, 120_000);
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("answers a json_schema text.format with JSON that validates, streamed and not, and echoes the format", async () => {
        const request = {model: "kv-tiny", input: "Describe the sea as JSON", max_output_tokens: 120, temperature: 0, text: {format: FORMAT}};
        const response = await client.responses.create(request);
        expect(response.status).toBe("completed");
        const parsed: unknown = JSON.parse(response.output_text);
        expect(validate(parsed), JSON.stringify(validate.errors)).toBe(true);
        expect(response.text?.format).toMatchObject({type: "json_schema", name: "sea", strict: true});
        let streamed = "";
        for await (const event of await client.responses.create({...request, stream: true}))
            if (event.type === "response.output_text.delta")
                streamed += event.delta;
        expect(streamed).toBe(response.output_text);
        // json_object: one JSON object from the first character
        const object = await client.responses.create({...request, text: {format: {type: "json_object"}}});
        expect(object.output_text.trimStart().startsWith("{")).toBe(true);
        if (object.status === "completed")
            expect(typeof JSON.parse(object.output_text)).toBe("object");
    });

    it("gives the AI SDK's Output.object a valid object through its default (Responses) provider", async () => {
        const provider = createOpenAI({baseURL: server.url, apiKey: KEY});
        const result = await generateText({model: provider("kv-tiny"), prompt: "Describe the sea as JSON", maxOutputTokens: 120, temperature: 0, maxRetries: 0,
            output: Output.object({schema: jsonSchema<Record<string, unknown>>(BOUNDED_JSON_SCHEMA as unknown as Parameters<typeof jsonSchema>[0])})});
        expect(validate(result.output), JSON.stringify(validate.errors)).toBe(true);
    });

    it("refuses what it cannot honour in text.format by name, before generating", async () => {
        const cases: [unknown, string][] = [
            [{format: {type: "xml"}}, "text.format.type"],
            [{format: {type: "json_schema", name: "sea"}}, "text.format.schema"],
            [{format: {type: "json_schema", name: "has space", schema: {}}}, "text.format.name"],
            [{format: {type: "json_schema", name: "sea", schema: BOUNDED_JSON_SCHEMA, strict: "yes"}}, "text.format.strict"],
            [{format: {type: "json_object", schema: {}}}, "text.format.schema"],
            [{format: {type: "json_schema", name: "sea", schema: BOUNDED_JSON_SCHEMA, extra: 1}}, "text.format.extra"],
            [{verbosity: "low"}, "text.verbosity"],
            [{format: "json"}, "text.format"],
            [["format"], "text"],
            [{format: {type: "json_schema", name: "sea", schema: {$ref: "#/definitions/missing"}}}, "text.format"]
        ];
        for (const [text, param] of cases) {
            const answer = await rawRequest(server.port, {method: "POST", path: "/v1/responses",
                headers: {"authorization": `Bearer ${KEY}`, "content-type": "application/json"},
                body: JSON.stringify({model: "kv-tiny", input: "hi", max_output_tokens: 4, text})});
            expect(answer.status, JSON.stringify(text)).toBe(400);
            expect((JSON.parse(answer.text) as {error: {param: string}}).error.param, JSON.stringify(text)).toBe(param);
        }
    });
});
