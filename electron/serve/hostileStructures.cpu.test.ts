/**
 * What one request can no longer do (an attacker-side sweep of the API), on generated models: every grammar,
 * JSON schema and tool schema that crashed the server (SIGSEGV in llama.cpp's grammar parser, "Unexpected empty grammar
 * stack" from a grammar with no way forward) or never finished converting is refused with a 400 naming the field;
 * JSON too deep to read is a 400 with its path, not a 500; tools sent to a template that cannot call them are refused,
 * not answered with free text; a grammar that runs out of tokens mid-reply ends that reply, not the server; and while
 * a large tools request is prepared, `/health` and another client's stream keep answering.
 */
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {PlacedModel} from "../engine/runtime/PlacedModel.js";
import {probeEngine} from "../engine/testing/probeEngine.js";
import {rawRequest, type RawAnswer} from "../engine/testing/rawRequest.js";
import type {OpenAiServer} from "./serveOpenAi.js";
import {healthStallDuring} from "./testing/healthStall.js";
import {bigTools, CRASHING_CONSTRAINTS, DEEP_JSON, TOOLS_WITHOUT_SYNTAX, type HostileRequest} from "./testing/hostileRequests.js";
import {loadTestModel, serveTestModel} from "./testing/servedTestModel.js";
import {chatTemplate, loadTemplatedTestModel, missingTemplates, TEMPLATE_FILES} from "./testing/templatedTestModel.js";

const probe = await probeEngine("cpu", {maxThreads: 1});
const skip = probe.reason ?? missingTemplates([TEMPLATE_FILES.qwen25]);
if (skip != null)
    console.warn(`[skip] hostile structure tests: ${skip}`);

/** How much longer than in the control `/health` may take while a request is prepared (the budget). */
const STALL_BUDGET_MS = 100;
/**
 * Eight 4 MB bodies at once: each is parsed in its own turn (readJsonBody.ts), so a probe waits for at most one parse
 * and its garbage collection, not their sum (37 s before).
 */
const EIGHT_AT_ONCE_BUDGET_MS = 500;

const post = (server: OpenAiServer, path: string, body: string | Buffer) =>
    rawRequest(server.port, {method: "POST", path, headers: {"Content-Type": "application/json"}, body});

/** The refusal `answer` must be: its status, and its code and field (OpenAI's shape) or the field its message names (Anthropic's). */
function expectRefused(answer: RawAnswer, request: HostileRequest): void {
    expect(answer.status, answer.text.slice(0, 300)).toBe(request.expected.status);
    const body = JSON.parse(answer.text) as {error: {code?: string; param?: string; message: string}};
    if (request.path.startsWith("/v1/messages")) {
        const named = /^`([^`]+)`/.exec(body.error.message)?.[1] ?? "";
        expect(named).toMatch(request.expected.param);
        return;
    }
    expect(body.error.code).toBe(request.expected.code);
    expect(body.error.param).toMatch(request.expected.param);
}

async function expectAnswering(server: OpenAiServer): Promise<void> {
    const answer = await post(server, "/v1/chat/completions", JSON.stringify({messages: [{role: "user", content: "Still there?"}], max_tokens: 4, temperature: 0}));
    expect(answer.status, answer.text.slice(0, 200)).toBe(200);
}

describe.skipIf(skip != null)("requests that crashed, hung or were ignored (CPU, generated models)", () => {
    let placed: PlacedModel;
    let server: OpenAiServer;
    let plain: PlacedModel;
    let plainServer: OpenAiServer;

    beforeAll(async () => {
        // Qwen2.5's template calls tools; the writer's default template cannot
        placed = await loadTemplatedTestModel(probe.engine!, "hostile-qwen25", chatTemplate(TEMPLATE_FILES.qwen25));
        server = await serveTestModel(placed, {modelId: "hostile"});
        plain = await loadTestModel(probe.engine!, "hostile-plain", 2);
        plainServer = await serveTestModel(plain, {modelId: "plain"});
    }, 120_000);
    afterAll(async () => {
        await server?.close();
        await plainServer?.close();
        await placed?.dispose();
        await plain?.dispose();
        await probe.engine?.llama.dispose();
    });

    it.each(CRASHING_CONSTRAINTS.map((request) => [request.name, request] as const))("refuses %s with a 400 naming the field, and keeps serving", async (_name, request) => {
        expectRefused(await post(server, request.path, request.body), request);
        await expectAnswering(server);
    }, 60_000);

    it.each(DEEP_JSON.map((request) => [request.name, request] as const))("refuses %s with a 400 naming its path, not a 500", async (_name, request) => {
        const answer = await post(server, request.path, request.body);
        expectRefused(answer, request);
        expect(answer.text).toMatch(/deeper than the 128 levels this server reads/);
    });

    it.each(TOOLS_WITHOUT_SYNTAX.map((request) => [request.name, request] as const))("refuses tools a template cannot call (%s) by name", async (_name, request) => {
        const answer = await post(plainServer, request.path, request.body);
        expectRefused(answer, request);
        expect(answer.text).toMatch(/this model's chat template cannot call tools/);
    });

    it("answers tools with tool_choice \"none\" on that template: the client asked for no call", async () => {
        const answer = await post(plainServer, "/v1/chat/completions", JSON.stringify({messages: [{role: "user", content: "Hello"}], max_tokens: 4, temperature: 0,
            tools: [{type: "function", function: {name: "f", parameters: {type: "object", properties: {}}}}], tool_choice: "none"}));
        expect(answer.status, answer.text).toBe(200);
        expect((JSON.parse(answer.text) as {choices: {message: {tool_calls?: unknown}}[]}).choices[0]!.message.tool_calls).toBeUndefined();
    });

    it("ends only the reply whose grammar allows no token any more (logit_bias bans the one it needs), streamed or not", async () => {
        const vocabulary = (placed.model.fileInfo.metadata as {tokenizer: {ggml: {tokens: readonly string[]}}}).tokenizer.ggml.tokens;
        // a grammar of two token ids: after the first, only the second may follow, and logit_bias bans it
        const [first, second] = [300, 301];
        expect(vocabulary.length).toBeGreaterThan(second);
        const request = {grammar: `root ::= <[${first}]> <[${second}]>`, logit_bias: {[second]: -100}, max_tokens: 8, temperature: 0};
        const unstreamed = await post(server, "/v1/completions", JSON.stringify({prompt: "x", ...request}));
        expect(unstreamed.status, unstreamed.text).toBe(400);
        expect(JSON.parse(unstreamed.text)).toMatchObject({error: {code: "grammar_dead_end", param: "grammar",
            message: expect.stringMatching(/^`grammar`: the reply was ended: after 1 generated token\(s\) the grammar allowed no token/)}});
        const streamed = await post(server, "/v1/chat/completions", JSON.stringify({messages: [{role: "user", content: "Hi"}], stream: true, ...request}));
        expect(streamed.status).toBe(200);
        const events = streamed.text.trim().split("\n\n").map((event) => event.replace(/^data: /, ""));
        expect(JSON.parse(events.at(-1)!)).toMatchObject({error: {code: "grammar_dead_end", param: "grammar"}});
        await expectAnswering(server);
    }, 60_000);

    describe("while 128 tools of 30 KB schemas are prepared and refused", () => {
        // the bodies are made before anything is measured: this test's client shares the server's thread
        const tools = bigTools(128, 30_000);
        const body = Buffer.from(JSON.stringify({messages: [{role: "user", content: "Hello"}], max_tokens: 8, tools}));
        const countBody = Buffer.from(JSON.stringify({model: "m", messages: [{role: "user", content: "Hello"}],
            tools: tools.map((tool) => ({name: tool.function.name, input_schema: tool.function.parameters}))}));
        const REFUSED = /grammars of the first \d+ tools' schemas already take more than 262144 characters together/;
        let control: number;

        beforeAll(async () => {
            expect(body.length).toBeGreaterThan(3_500_000);
            // the prompt worker started (under vitest its TypeScript is transpiled on this thread first, which dist/ never does)
            expect((await post(server, "/v1/chat/completions", JSON.stringify({messages: [{role: "user", content: "Hello"}], max_tokens: 2,
                response_format: {type: "json_object"}}))).status).toBe(200);
            // the control: the same probes while a short request is answered
            control = (await healthStallDuring(server.port, () => post(server, "/v1/chat/completions",
                JSON.stringify({messages: [{role: "user", content: "Hello"}], max_tokens: 16, temperature: 0})))).worstMs;
        }, 60_000);

        it("one such request: /health answers within 100 ms of the control, and the request is refused by name", async () => {
            const attack = await healthStallDuring(server.port, () => post(server, "/v1/chat/completions", body));
            expect(attack.result.text).toMatch(REFUSED);
            console.log(`one request: /health worst ${attack.worstMs.toFixed(0)} ms over ${attack.probes} probes (control ${control.toFixed(0)} ms)`);
            expect(attack.worstMs).toBeLessThan(control + STALL_BUDGET_MS);
            const counted = await healthStallDuring(server.port, () => post(server, "/v1/messages/count_tokens", countBody));
            expect(counted.result.text).toMatch(REFUSED);
            console.log(`count_tokens: /health worst ${counted.worstMs.toFixed(0)} ms over ${counted.probes} probes`);
            expect(counted.worstMs).toBeLessThan(control + STALL_BUDGET_MS);
        }, 60_000);

        it("eight at once beside another client's stream: each body parsed in a turn of its own, the stream goes on", async () => {
            let gaps: number[] = [];
            const attack = await healthStallDuring(server.port, async () => {
                const stream = (async () => {
                    const answer = await fetch(`${server.url}/chat/completions`, {method: "POST", headers: {"Content-Type": "application/json"},
                        body: JSON.stringify({messages: [{role: "user", content: "Tell a long story"}], max_tokens: 300, temperature: 0, stream: true})});
                    const reader = answer.body!.getReader();
                    let last = performance.now();
                    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
                        gaps.push(performance.now() - last);
                        last = performance.now();
                    }
                })();
                const answers = await Promise.all(Array.from({length: 8}, () => post(server, "/v1/chat/completions", body)));
                await stream;
                return answers;
            });
            for (const answer of attack.result)
                expect(answer.text).toMatch(REFUSED);
            gaps = gaps.slice(2);
            console.log(`eight at once: /health worst ${attack.worstMs.toFixed(0)} ms over ${attack.probes} probes (control ${control.toFixed(0)} ms); ` +
                `stream worst gap ${Math.max(...gaps).toFixed(0)} ms over ${gaps.length} chunks`);
            // each 4 MB body's parse (and the collection of its garbage) is one turn of the server's thread: ~100-200 ms on this VM
            expect(attack.worstMs).toBeLessThan(control + EIGHT_AT_ONCE_BUDGET_MS);
            expect(Math.max(...gaps)).toBeLessThan(control + EIGHT_AT_ONCE_BUDGET_MS);
        }, 120_000);
    });
});
