/**
 * An error after a stream started (here the server's time limit) ends an Anthropic or Responses stream with that API's
 * own error event (Anthropic's SDK raises it; the openai client hands the Responses `error` event over as the last
 * event) — not the chat-completions error chunk, which neither would recognise.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {PlacedModel} from "../engine/runtime/PlacedModel.js";
import {probeEngine} from "../engine/testing/probeEngine.js";
import type {OpenAiServer} from "./serveOpenAi.js";
import {rawRequest} from "../engine/testing/rawRequest.js";
import {loadTestModel, serveTestModel} from "./testing/servedTestModel.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] stream error tests: ${probe.reason}`);

const KEY = "tw-stream-errors-0123456789";
const LONG = "Tell a very long story about a lighthouse keeper and the sea";
/**
 * The server's time limit: its streams open within ~30 ms here, and the greedy reply to {@link LONG} runs to 900 tokens
 * (~0.9 s on one thread of this 2-core machine), so the limit falls inside the stream.
 */
const LIMIT_MS = 400;

describe.skipIf(probe.reason != null)("errors inside Anthropic and Responses streams (CPU, generated model, a 400 ms time limit)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;

    beforeAll(async () => {
        placed = await loadTestModel(probe.engine!);
        server = await serveTestModel(placed, {apiKeys: [KEY], requestTimeoutMs: LIMIT_MS});
    });
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("ends an Anthropic stream with an error event of Anthropic's shape, which the SDK raises", async () => {
        const raw = await rawRequest(server.port, {method: "POST", path: "/v1/messages", headers: {"x-api-key": KEY, "Content-Type": "application/json"},
            body: JSON.stringify({model: "kv-tiny", max_tokens: 900, temperature: 0, stream: true, messages: [{role: "user", content: LONG}]})});
        expect(raw.status).toBe(200);
        expect(raw.text).toMatch(/^event: message_start\n/);
        expect(raw.text.trimEnd()).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"timeout_error","message":"The request ran past this server's time limit of \d+ s and was stopped\."\}\}$/);
        const client = new Anthropic({baseURL: server.url.replace(/\/v1$/, ""), apiKey: KEY, maxRetries: 0});
        const stream = client.messages.stream({model: "kv-tiny", max_tokens: 900, ...{temperature: 0}, messages: [{role: "user", content: LONG}]});
        await expect(stream.finalMessage()).rejects.toThrow(/time limit/);
    });

    it("ends a Responses stream with its error event, numbered in sequence, as the openai client reads it", async () => {
        const raw = await rawRequest(server.port, {method: "POST", path: "/v1/responses", headers: {Authorization: `Bearer ${KEY}`, "Content-Type": "application/json"},
            body: JSON.stringify({model: "kv-tiny", max_output_tokens: 900, temperature: 0, stream: true, input: LONG})});
        expect(raw.status).toBe(200);
        const events = raw.text.trim().split("\n\n").map((block) => JSON.parse(block.split("\n")[1]!.slice("data: ".length)) as {type: string; sequence_number: number; code?: string});
        expect(events[0]!.type).toBe("response.created");
        expect(events.at(-1)).toMatchObject({type: "error", code: "timeout"});
        expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
        const client = new OpenAI({baseURL: server.url, apiKey: KEY, maxRetries: 0});
        const stream = await client.responses.create({model: "kv-tiny", max_output_tokens: 900, temperature: 0, stream: true, input: LONG});
        const seen: OpenAI.Responses.ResponseStreamEvent[] = [];
        for await (const event of stream)
            seen.push(event);
        expect(seen.at(-1)).toMatchObject({type: "error", code: "timeout", message: expect.stringMatching(/time limit/)});
        expect(seen.some((event) => event.type === "response.completed" || event.type === "response.incomplete")).toBe(false);
    });
});
