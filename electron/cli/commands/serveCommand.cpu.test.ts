/**
 * `tensorwise serve` as a user runs it (the built CLI, a child process) on a generated model, driven by the unmodified
 * `openai` client: stream and non-stream, four interleaved streams, cancel, 401 / 400 / 413 / 429, and the same greedy
 * reply as `tensorwise chat`.
 */
import {execFileSync, spawn, type ChildProcess} from "node:child_process";
import {existsSync} from "node:fs";
import {chmod, mkdtemp, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import OpenAI from "openai";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {main} from "../main.js";
import {makeTestModel} from "../../engine/testing/testModels.js";
import {probeEngine} from "../../engine/testing/probeEngine.js";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const cli = path.join(root, "bin", "tensorwise.mjs");
const built = path.join(root, "dist", "electron", "cli", "main.js");
const probe = await probeEngine("cpu");
await probe.engine?.llama.dispose();
const missing = probe.reason ?? requiredOrSkip("tensorwise serve tests", existsSync(built) ? null : `the CLI is not built (${built}); run \`npm run build\``);
if (missing != null)
    console.warn(`[skip] tensorwise serve tests: ${missing}`);

const API_KEY = "test-key-0123456789";
const PARALLEL = 4;
const QUEUE = 2;

/** A second client's key, given through the environment. */
const OTHER_KEY = "other-client-key-9876543210";

/** Runs the built CLI; resolves once it prints its URL. */
function startServe(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{child: ChildProcess; url: string; log: string[]}> {
    const child = spawn(process.execPath, [cli, "serve", ...args], {stdio: ["ignore", "pipe", "pipe"], env});
    const log: string[] = [];
    return new Promise((resolve, reject) => {
        let out = "";
        child.stdout!.on("data", (chunk: Buffer) => {
            out += chunk.toString();
            const url = /listening on (\S+)/.exec(out)?.[1];
            if (url != null)
                resolve({child, url, log});
        });
        child.stderr!.on("data", (chunk: Buffer) => log.push(...chunk.toString().split("\n").filter((line) => line !== "")));
        child.on("exit", (code) => reject(new Error(`tensorwise serve exited with ${code}: ${log.join("\n")}`)));
    });
}

function runChatCli(modelPath: string, prompt: string, maxTokens: number): Promise<string> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [cli, "chat", modelPath, "--gpu", "cpu", "--prompt", prompt, "--max-tokens", String(maxTokens),
            "--temperature", "0", "--context", "1024", "--threads", "1", "--json"], {stdio: ["ignore", "pipe", "pipe"]});
        let out = "";
        let err = "";
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
        child.on("exit", (code) => code === 0 ? resolve((JSON.parse(out) as {reply: string}).reply) : reject(new Error(`chat exited ${code}: ${err}`)));
    });
}

describe("tensorwise serve flags (no model needed)", () => {
    it("refuses a non-loopback host without an API key, in one sentence, before loading anything", async () => {
        const err: string[] = [];
        const code = await main(["serve", "missing.gguf", "--host", "0.0.0.0"], {out: () => {}, err: (line) => err.push(line)});
        expect(code).toBe(2);
        expect(err.join("\n")).toMatch(/Binding to 0\.0\.0\.0 lets other machines use this model: give API keys that clients must send \(--api-key-file or TENSORWISE_API_KEY\)/);
    });

    it("takes API keys from a file and TENSORWISE_API_KEY, refuses bad ones in a sentence, and warns that --api-key shows in ps", async () => {
        const dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-keys-"));
        const run = async (args: string[], env: Record<string, string> = {}) => {
            const err: string[] = [];
            const saved = process.env.TENSORWISE_API_KEY;
            Object.assign(process.env, env);
            try {
                const code = await main(["serve", path.join(dir, "missing.gguf"), ...args], {out: () => {}, err: (line) => err.push(line)});
                return {code, err: err.join("\n")};
            } finally {
                if (saved == null)
                    delete process.env.TENSORWISE_API_KEY;
                else
                    process.env.TENSORWISE_API_KEY = saved;
            }
        };
        const file = async (name: string, text: string) => {
            await writeFile(path.join(dir, name), text, {mode: 0o600});
            return path.join(dir, name);
        };
        expect(await run(["--api-key-file", await file("empty", "# nothing here\n\n")])).toMatchObject({code: 2, err: expect.stringMatching(/holds no API key/)});
        expect(await run(["--api-key-file", await file("twice", "k1\nk1\n")])).toMatchObject({code: 2, err: expect.stringMatching(/line 2: this API key is listed twice/)});
        expect(await run(["--api-key-file", await file("latin", "caf\u00e9\n")])).toMatchObject({code: 2, err: expect.stringMatching(/line 1: an API key must be 1 to 512 visible ASCII/)});
        expect(await run(["--api-key-file", path.join(dir, "absent")])).toMatchObject({code: 2, err: expect.stringMatching(/cannot be read: ENOENT/)});
        expect(await run([], {TENSORWISE_API_KEY: "   "})).toMatchObject({code: 2, err: expect.stringMatching(/TENSORWISE_API_KEY holds no API key/)});
        expect(await run(["--api-key", "same"], {TENSORWISE_API_KEY: "same"})).toMatchObject({code: 2, err: expect.stringMatching(/--api-key repeats an API key/)});
        // keys given: another address is allowed (the load then fails on the missing file, exit 1)
        expect(await run(["--host", "0.0.0.0"], {TENSORWISE_API_KEY: "k1 k2"})).toMatchObject({code: 1});
        const open = await file("open", "k3\n");
        await chmod(open, 0o644);
        expect((await run(["--api-key-file", open])).err).toMatch(/warning: .*open can be read by other users of this machine; chmod 600 it/);
        expect((await run(["--api-key", "k4"])).err).toMatch(/warning: --api-key is visible to every user of this machine \(ps shows/);
        expect(await run(["--kv-disk-budget", "95%"])).toMatchObject({code: 2, err: expect.stringMatching(/--kv-disk-budget must be MiB .* or a share of the free space/)});
        expect(await run(["--kv-disk-budget", "lots"])).toMatchObject({code: 2, err: expect.stringMatching(/--kv-disk-budget must be/)});
    });

    it("refuses out-of-range numbers with the bounds table's sentences", async () => {
        const err: string[] = [];
        const io = {out: () => {}, err: (line: string) => err.push(line)};
        expect(await main(["serve", "m.gguf", "--parallel", "0"], io)).toBe(2);
        expect(await main(["serve", "m.gguf", "--port", "70000"], io)).toBe(2);
        expect(await main(["serve", "m.gguf", "--policy", "lifo"], io)).toBe(2);
        expect(err.join("\n")).toMatch(/--parallel: The parallel sequence count must be an integer from 1 to 64[\s\S]*--port: The port must be[\s\S]*--policy must be fair or fifo/);
    });
});

describe.skipIf(missing != null)("tensorwise serve with the openai client (CPU, generated model)", () => {
    let modelPath: string;
    let server: Awaited<ReturnType<typeof startServe>>;
    let client: OpenAI;

    beforeAll(async () => {
        modelPath = await makeTestModel("serve-small", {preset: "small", type: "q8_0"});
        const keyFile = path.join(await mkdtemp(path.join(os.tmpdir(), "tensorwise-keys-")), "keys.txt");
        await writeFile(keyFile, `# one key a line\n${API_KEY}\n`, {mode: 0o600});
        server = await startServe([modelPath, "--gpu", "cpu", "--port", "0", "--parallel", String(PARALLEL), "--queue", String(QUEUE),
            "--context", "1024", "--threads", "1", "--api-key-file", keyFile, "--timeout", "60"], {...process.env, TENSORWISE_API_KEY: OTHER_KEY});
        client = new OpenAI({baseURL: server.url, apiKey: API_KEY, maxRetries: 0});
    });
    afterAll(async () => {
        if (server?.child.exitCode == null) {
            const exited = new Promise((resolve) => server.child.once("exit", resolve));
            server?.child.kill("SIGINT");
            await exited;
        }
    });

    // First in this server's life, on four empty sequences; interleavedAfterEviction.cpu.test.ts covers four streams on
    // sequences that each still hold an earlier conversation.
    it("streams four requests at once, interleaved, each on its own sequence", async () => {
        const events: {request: number; at: number}[] = [];
        const sequences = new Set<number>();
        await Promise.all(Array.from({length: PARALLEL}, async (_unused, request) => {
            const stream = await client.chat.completions.create({
                model: "serve-small", messages: [{role: "user", content: `Tell story number ${request}`}], max_tokens: 64, temperature: 0, stream: true
            });
            for await (const chunk of stream) {
                if ((chunk.choices[0]?.delta.content ?? "") !== "")
                    events.push({request, at: events.length});
                const timings = (chunk as unknown as {timings?: {sequence: number}}).timings;
                if (timings != null)
                    sequences.add(timings.sequence);
            }
        }));
        expect(sequences.size).toBe(PARALLEL);
        // interleaved: every stream got its first token before any stream got its last one
        const firsts = Array.from({length: PARALLEL}, (_unused, request) => events.find((event) => event.request === request)!.at);
        const lasts = Array.from({length: PARALLEL}, (_unused, request) => events.findLast((event) => event.request === request)!.at);
        expect(Math.max(...firsts), server.log.filter((line) => line.includes(" 200 seq ")).join("\n")).toBeLessThan(Math.min(...lasts));
    });

    it("lists the loaded model, and answers it by id (404 for any other id, 401 without the key)", async () => {
        const models = await client.models.list();
        expect(models.data.map((model) => model.id)).toEqual(["serve-small.gguf"]);
        expect(await client.models.retrieve("serve-small.gguf")).toMatchObject({id: "serve-small.gguf", object: "model", owned_by: "tensorwise"});
        for (const id of ["serve-small", "serve-small.ggufx", "SERVE-SMALL.GGUF", "x".repeat(16), "serve-small.gguf/extra"])
            await expect(client.models.retrieve(id), id).rejects.toMatchObject({status: 404, code: "model_not_found"});
        const get = (target: string, key: string | null = API_KEY) => fetch(`${server.url}${target}`, {headers: key == null ? {} : {Authorization: `Bearer ${key}`}});
        expect((await get("/models/serve-small%2Egguf")).status).toBe(200);
        expect((await get("/models/%E0%A4%A")).status).toBe(400);
        expect((await get("/models/serve-small.gguf", null)).status).toBe(401);
        expect((await get("/models/serve-small.gguf", "x".repeat(API_KEY.length))).status).toBe(401);
    });

    it("answers GET /health without a key, saying nothing but that it is up; other methods get 405", async () => {
        const root = server.url.replace(/\/v1$/, "");
        const health = await fetch(`${root}/health`);
        expect(health.status).toBe(200);
        expect(await health.json()).toEqual({status: "ok"});
        expect((await fetch(`${root}/health`, {method: "POST"})).status).toBe(405);
        // a path beside it is not public
        expect((await fetch(`${root}/healthz`)).status).toBe(401);
    });

    it("answers a chat non-streamed and streamed alike at temperature 0, with usage and engine timings, as `tensorwise chat` does", async () => {
        const prompt = "Hello there";
        const whole = await client.chat.completions.create({model: "serve-small", messages: [{role: "user", content: prompt}], max_tokens: 8, temperature: 0});
        const text = whole.choices[0]!.message.content!;
        expect(whole.usage!.completion_tokens).toBeGreaterThan(0);
        expect(whole.usage!.completion_tokens).toBeLessThanOrEqual(8);
        expect(whole.usage!.prompt_tokens).toBeGreaterThan(2);
        const timings = (whole as unknown as {timings: {ttft_ms: number; tpot_ms: number | null; queue_ms: number}}).timings;
        expect(timings.ttft_ms).toBeGreaterThan(0);
        expect(timings.queue_ms).toBeGreaterThanOrEqual(0);

        const stream = await client.chat.completions.create({
            model: "serve-small", messages: [{role: "user", content: prompt}], max_tokens: 8, temperature: 0, stream: true,
            stream_options: {include_usage: true}
        });
        let streamed = "";
        let usage: OpenAI.CompletionUsage | null | undefined;
        let finish: string | null = null;
        for await (const chunk of stream) {
            streamed += chunk.choices[0]?.delta.content ?? "";
            finish = chunk.choices[0]?.finish_reason ?? finish;
            usage = chunk.usage ?? usage;
        }
        expect(streamed).toBe(text);
        expect(finish).toMatch(/^(stop|length)$/);
        expect(usage?.completion_tokens).toBe(whole.usage!.completion_tokens);

        expect(await runChatCli(modelPath, prompt, 8)).toBe(text);
    });

    it("answers /v1/completions, streamed and not", async () => {
        const whole = await client.completions.create({model: "serve-small", prompt: "Once upon a time", max_tokens: 6, temperature: 0});
        expect(whole.choices[0]!.text.length).toBeGreaterThan(0);
        expect(whole.usage!.completion_tokens).toBeGreaterThan(0);
        let streamed = "";
        for await (const chunk of await client.completions.create({model: "serve-small", prompt: "Once upon a time", max_tokens: 6, temperature: 0, stream: true}))
            streamed += chunk.choices[0]?.text ?? "";
        expect(streamed).toBe(whole.choices[0]!.text);
    });

    it("stops a sequence when its client disconnects mid-stream, and keeps serving", async () => {
        const controller = new AbortController();
        const stream = await client.chat.completions.create({
            model: "serve-small", messages: [{role: "user", content: "A long story please"}], max_tokens: 800, temperature: 0, stream: true
        }, {signal: controller.signal});
        let chunks = 0;
        try {
            for await (const _chunk of stream) {
                if (++chunks === 3)
                    controller.abort();
            }
        } catch {
            // the client may end the iteration either way once aborted
        }
        expect(chunks).toBeLessThan(10);
        await expect.poll(() => server.log.some((line) => line.includes("client disconnected")), {timeout: 10_000}).toBe(true);
        const after = await client.chat.completions.create({model: "serve-small", messages: [{role: "user", content: "hi"}], max_tokens: 2});
        expect(after.choices[0]!.finish_reason).toMatch(/^(stop|length)$/);
    });

    it("answers a wrong API key with 401 in OpenAI's error shape, serves the key from the environment too, and shows no key in ps", async () => {
        const wrong = new OpenAI({baseURL: server.url, apiKey: "not-the-key", maxRetries: 0});
        await expect(wrong.models.list()).rejects.toMatchObject({status: 401, code: "invalid_api_key"});
        const other = new OpenAI({baseURL: server.url, apiKey: OTHER_KEY, maxRetries: 0});
        expect((await other.models.list()).data).toHaveLength(1);
        const args = execFileSync("ps", ["-o", "args=", "-p", String(server.child.pid)], {encoding: "utf8"});
        expect(args).toContain("serve");
        expect(args).not.toContain(API_KEY);
        expect(args).not.toContain(OTHER_KEY);
    });

    it("answers malformed and invalid bodies with 400 and an oversized one with 413, naming the field", async () => {
        const post = (body: string, type = "application/json") => fetch(`${server.url}/chat/completions`, {
            method: "POST", headers: {"Content-Type": type, Authorization: `Bearer ${API_KEY}`}, body
        });
        const broken = await post("{\"messages\": [");
        expect(broken.status).toBe(400);
        expect(await broken.json()).toEqual({error: {message: "The request body is not valid JSON.", type: "invalid_request_error", param: null, code: null}});
        await expect(client.chat.completions.create({model: "m", messages: []})).rejects.toMatchObject({status: 400, param: "messages"});
        await expect(client.chat.completions.create({model: "m", messages: [{role: "user", content: "x"}], temperature: 99}))
            .rejects.toMatchObject({status: 400, param: "temperature", message: expect.stringMatching(/temperature must be a number from 0 to 10/)});
        const huge = await post(JSON.stringify({messages: [{role: "user", content: "x".repeat(5 * 1024 * 1024)}]}));
        expect(huge.status).toBe(413);
        expect(((await huge.json()) as {error: {code: string}}).error.code).toBe("request_too_large");
    });

    it("answers 429 with Retry-After when every sequence is busy and the queue is full", async () => {
        const controllers: AbortController[] = [];
        const busy = Array.from({length: PARALLEL + QUEUE}, async (_unused, index) => {
            const controller = new AbortController();
            controllers.push(controller);
            try {
                const stream = await client.chat.completions.create({
                    model: "m", messages: [{role: "user", content: `busy ${index}`}], max_tokens: 800, stream: true
                }, {signal: controller.signal});
                for await (const _chunk of stream) { /* drain */ }
            } catch {
                // aborted below
            }
        });
        // the first PARALLEL run, QUEUE wait: wait until the queued ones are in (their HTTP request is sent)
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const refused = await client.chat.completions.create({model: "m", messages: [{role: "user", content: "one more"}], max_tokens: 2})
            .then(() => null, (error: unknown) => error as {status: number; headers: Headers; code: string});
        for (const controller of controllers)
            controller.abort();
        await Promise.all(busy);
        expect(refused?.status).toBe(429);
        expect(refused?.code).toBe("queue_full");
        expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    });
});

describe.skipIf(missing != null)("tensorwise serve's per-request time limit", () => {
    it("stops a request that runs past --timeout with a 504, waiting time included, and keeps serving", async () => {
        const modelPath = await makeTestModel("serve-small", {preset: "small", type: "q8_0"});
        const server = await startServe([modelPath, "--gpu", "cpu", "--port", "0", "--parallel", "1", "--context", "1024", "--threads", "1", "--timeout", "1"]);
        try {
            const client = new OpenAI({baseURL: server.url, apiKey: "unused", maxRetries: 0});
            const long = client.chat.completions.create({model: "m", messages: [{role: "user", content: "a long one"}], max_tokens: 1000})
                .then(() => null, (error: unknown) => error);
            // waits in the queue behind the first, and its second of time runs out there
            const queued = client.chat.completions.create({model: "m", messages: [{role: "user", content: "queued"}], max_tokens: 2})
                .then(() => null, (error: unknown) => error);
            expect(await long).toMatchObject({status: 504, code: "timeout", message: expect.stringMatching(/time limit of 1 s/)});
            expect(await queued).toMatchObject({status: 504, code: "timeout"});
            expect((await client.models.list()).data).toHaveLength(1);
        } finally {
            const exited = new Promise((resolve) => server.child.once("exit", resolve));
            server.child.kill("SIGINT");
            await exited;
        }
    });
});
