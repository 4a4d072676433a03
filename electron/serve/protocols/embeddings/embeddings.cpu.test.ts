/**
 * `POST /v1/embeddings` through the unmodified `openai` client on a generated model: vectors of the model's embedding
 * size, the same for the same input and different for different ones, base64 decoding to the same floats, batch order
 * kept, usage counted; then every wrong shape a client may send, refused by name.
 */
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {PlacedModel} from "../../../engine/runtime/PlacedModel.js";
import {probeEngine} from "../../../engine/testing/probeEngine.js";
import type {OpenAiServer} from "../../serveOpenAi.js";
import {rawRequest} from "../../../engine/testing/rawRequest.js";
import {loadTestModel, serveTestModel} from "../../testing/servedTestModel.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
if (probe.reason != null)
    console.warn(`[skip] embeddings tests: ${probe.reason}`);

const KEY = "tw-embeddings-test-0123456789";

describe.skipIf(probe.reason != null)("POST /v1/embeddings with the openai client (CPU, generated model)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    let client: OpenAI;
    const log: string[] = [];

    beforeAll(async () => {
        placed = await loadTestModel(probe.engine!);
        server = await serveTestModel(placed, {apiKeys: [KEY], log: (line) => log.push(line)});
        client = new OpenAI({baseURL: server.url, apiKey: KEY, maxRetries: 0});
    });
    afterAll(async () => {
        await server?.close();
        await placed?.dispose();
        await probe.engine?.llama.dispose();
    });

    it("makes the embedding context on the first request and says what it takes", async () => {
        expect(server.embeddings.memory).toBeNull();
        await client.embeddings.create({model: "kv-tiny", input: "first"});
        const memory = server.embeddings.memory!;
        expect(memory.bufferTypes.reduce((sum, entry) => sum + entry.kvCacheBytes, 0)).toBeGreaterThan(0);
        expect(log.join("\n")).toMatch(/embeddings: made an embedding context of 1024 tokens \(\d+\.\d MiB/);
    });

    it("answers vectors of the model's size, the same for the same input and different for different inputs, in batch order", async () => {
        const size = placed.model.embeddingVectorSize;
        expect(size).toBeGreaterThan(0);
        const inputs = ["The cat sat on the mat", "A quantum of solace", "The cat sat on the mat", "zebra"];
        const batch = await client.embeddings.create({model: "kv-tiny", input: inputs, user: "tester"});
        expect(batch.data.map((entry) => entry.index)).toEqual([0, 1, 2, 3]);
        for (const entry of batch.data) {
            expect(entry.embedding).toHaveLength(size);
            expect(Math.hypot(...entry.embedding)).toBeCloseTo(1, 5);
        }
        expect(batch.data[2]!.embedding).toEqual(batch.data[0]!.embedding);
        expect(batch.data[1]!.embedding).not.toEqual(batch.data[0]!.embedding);
        expect(batch.data[3]!.embedding).not.toEqual(batch.data[1]!.embedding);
        // each alone gives what it gave in the batch: order kept, nothing leaks between inputs (the client asks for
        // base64 unless told, so the batch holds float32 values: compare at that precision)
        for (const [index, input] of inputs.entries()) {
            const alone = await client.embeddings.create({model: "kv-tiny", input, encoding_format: "float"});
            expect(alone.data[0]!.embedding.map((value) => Math.fround(value))).toEqual(batch.data[index]!.embedding);
        }
        const singles = await Promise.all(inputs.map((input) => client.embeddings.create({model: "kv-tiny", input})));
        expect(batch.usage.prompt_tokens).toBe(singles.reduce((sum, single) => sum + single.usage.prompt_tokens, 0));
        expect(batch.usage.total_tokens).toBe(batch.usage.prompt_tokens);
        expect(singles[3]!.usage.prompt_tokens).toBeGreaterThan(0);
    });

    it("token-id inputs embed as the text they spell; base64 decodes to the same floats", async () => {
        const text = "hello world";
        const tokens = [...placed.model.tokenize(text, false)];
        const fromText = await client.embeddings.create({model: "kv-tiny", input: text, encoding_format: "float"});
        const fromTokens = await client.embeddings.create({model: "kv-tiny", input: tokens, encoding_format: "float"});
        const fromLists = await client.embeddings.create({model: "kv-tiny", input: [tokens, tokens.slice(0, 1)], encoding_format: "float"});
        expect(fromTokens.data[0]!.embedding).toEqual(fromText.data[0]!.embedding);
        expect(fromLists.data[0]!.embedding).toEqual(fromText.data[0]!.embedding);
        expect(fromLists.data[1]!.embedding).not.toEqual(fromText.data[0]!.embedding);
        // the raw answer (the client decodes base64 itself when it asked for floats, so ask the server directly)
        const raw = await rawRequest(server.port, {method: "POST", path: "/v1/embeddings", headers: {Authorization: `Bearer ${KEY}`, "Content-Type": "application/json"},
            body: JSON.stringify({input: text, encoding_format: "base64"})});
        const encoded = (JSON.parse(raw.text) as {data: {embedding: string}[]}).data[0]!.embedding;
        expect(typeof encoded).toBe("string");
        const bytes = Buffer.from(encoded, "base64");
        const floats = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
        expect(floats).toEqual(fromText.data[0]!.embedding.map((value) => Math.fround(value)));
        // and the client's own base64 path gives the same floats
        const viaClient = await client.embeddings.create({model: "kv-tiny", input: text, encoding_format: "base64"});
        expect(viaClient.data[0]!.embedding).toBe(encoded);
        expect(await client.embeddings.create({model: "kv-tiny", input: text, dimensions: placed.model.embeddingVectorSize})).toMatchObject({object: "list"});
    });

    it("refuses every wrong shape by name, and still answers afterwards", async () => {
        const size = placed.model.embeddingVectorSize;
        const vocabulary = (placed.model.fileInfo.metadata as unknown as {tokenizer: {ggml: {tokens: unknown[]}}}).tokenizer.ggml.tokens.length;
        const cases: [unknown, RegExp][] = [
            [{}, /`input` must be/],
            [{input: ""}, /`input` is empty/],
            [{input: []}, /`input` must be a non-empty/],
            [{input: [[]]}, /input\[0\] is an empty list of token ids/],
            [{input: ["ok", 7]}, /input\[1\] must be a string or a list of token ids/],
            [{input: [vocabulary]}, new RegExp(`\`input\`\\[0\\] must be a token id, an integer from 0 to ${vocabulary - 1}`)],
            [{input: [-1]}, /must be a token id/],
            [{input: [1.5]}, /must be a token id/],
            [{input: [["a"]]}, /input\[0\]\[0\] must be a token id/],
            [{input: [[1, 2], [1e300]]}, /input\[1\]\[0\] must be a token id/],
            [{input: Array(2049).fill("a")}, /The number of inputs must be an integer from 1 to 2048/],
            [{input: "x", dimensions: size - 1}, new RegExp(`\`dimensions\` must be ${size}`)],
            [{input: "x", dimensions: String(size)}, /`dimensions` must be/],
            [{input: "x", encoding_format: "float16"}, /`encoding_format` must be "float" or "base64"/],
            [{input: "x", user: 5}, /`user` must be a string/],
            [{input: "x", truncate: true}, /`truncate` is not a field/],
            [{input: "word ".repeat(5000)}, /is at least \d+ tokens long|is \d+ tokens long/],
            [[{input: "x"}], /body must be a JSON object/]
        ];
        for (const [body, message] of cases) {
            const answer = await rawRequest(server.port, {method: "POST", path: "/v1/embeddings", headers: {Authorization: `Bearer ${KEY}`, "Content-Type": "application/json"},
                body: JSON.stringify(body)});
            expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
            expect(JSON.parse(answer.text).error.message, JSON.stringify(body).slice(0, 80)).toMatch(message);
        }
        await expect(client.embeddings.create({model: "kv-tiny", input: "x", dimensions: 3})).rejects.toMatchObject({status: 400});
        const wrongKey = new OpenAI({baseURL: server.url, apiKey: "tw-embeddings-test-0123456780", maxRetries: 0});
        await expect(wrongKey.embeddings.create({model: "kv-tiny", input: "x"})).rejects.toMatchObject({status: 401});
        expect((await client.embeddings.create({model: "kv-tiny", input: "still here"})).data[0]!.embedding).toHaveLength(size);
    });
});
