/**
 * A grammar with no way forward, sent to the server the app runs in its engine: through the host as
 * the Server screen turns it on, the real engine child on a generated model, a real HTTP client. Before, "Unexpected
 * empty grammar stack" (llama_grammar_accept_impl) rejected node-llama-cpp's whole batch uncaught and the engine
 * process exited, taking the user's own chat with it. Now the reply ends with a clear error, the engine process is the
 * same one, and the app's chat answers. Needs the built engine (npm run build); skipped, with the reason, without it.
 */
import {existsSync} from "node:fs";
import {mkdir, mkdtemp, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {ServerState} from "../../contract/ipc.js";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";
import {isolatedCacheEnv} from "../../engine/testing/isolatedCacheEnv.js";
import {makeSyntheticModel, syntheticModelPresets} from "../../engine/writer/makeSyntheticModel.js";
import {ConversationStore} from "../conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "../engineChild/EngineClient.js";
import {HostService} from "../HostService.js";
import {hostEventRecorder} from "../testing/hostEventRecorder.js";

const missing = requiredOrSkip("app server grammar tests", existsSync(defaultEngineEntry()) ? null : "the engine is not built; run `npm run build`");

/** Two token ids of the tiny preset's vocabulary: a grammar of both, with the second banned by logit_bias, dead-ends after the first. */
const [FIRST, SECOND] = [300, 301];

describe.skipIf(missing != null)("a grammar with no way forward on the app's server (real engine, tiny model)", () => {
    let dir: string;
    let engine: EngineClient;
    let host: HostService;
    let state: ServerState;
    const {client, waitFor} = hostEventRecorder("grammar-test-client", 120_000);
    const post = (route: string, body: unknown) => fetch(`${state.url}${route}`, {
        method: "POST",
        headers: {"Content-Type": "application/json", Authorization: `Bearer ${state.apiKey}`},
        body: JSON.stringify(body)
    });

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-app-server-grammar-"));
        await mkdir(path.join(dir, "models"));
        await makeSyntheticModel(path.join(dir, "models", "tiny.gguf"), {preset: "tiny"});
        engine = new EngineClient({env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1", ...isolatedCacheEnv(path.join(dir, "cache"))}});
        host = new HostService(await ConversationStore.open(dir), engine);
        host.attach(client);
        await engine.start();
        await host.handle("model.load", {path: path.join(dir, "models", "tiny.gguf"), gpuLayers: 0, settings: {contextSize: 1024}, taskId: "t"}, client);
        state = await host.handle("server.set", {enabled: true, port: 0, parallel: 2}, client);
        expect(state.status, state.error ?? "").toBe("serving");
    }, 180_000);
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("ends the reply with grammar_dead_end, streamed or not; the engine process lives on and the app's chat answers", async () => {
        expect(syntheticModelPresets.tiny.vocab).toBeGreaterThan(SECOND);
        const pid = engine.pid;
        expect(pid).not.toBeNull();
        const request = {grammar: `root ::= <[${FIRST}]> <[${SECOND}]>`, logit_bias: {[SECOND]: -100}, max_tokens: 8, temperature: 0};

        const unstreamed = await post("/completions", {prompt: "x", ...request});
        const unstreamedText = await unstreamed.text();
        expect(unstreamed.status, unstreamedText).toBe(400);
        expect(JSON.parse(unstreamedText)).toMatchObject({error: {code: "grammar_dead_end", param: "grammar",
            message: expect.stringMatching(/^`grammar`: the reply was ended: after 1 generated token\(s\) the grammar allowed no token/)}});

        const streamed = await post("/chat/completions", {messages: [{role: "user", content: "Hi"}], stream: true, ...request});
        expect(streamed.status).toBe(200);
        const events = (await streamed.text()).trim().split("\n\n").map((event) => event.replace(/^data: /, ""));
        expect(JSON.parse(events.at(-1)!)).toMatchObject({error: {code: "grammar_dead_end", param: "grammar"}});

        // unsatisfiable up front: refused by name before anything native sees it
        const empty = await post("/chat/completions", {messages: [{role: "user", content: "Hi"}], max_tokens: 4, grammar: "root ::= [b-a]"});
        expect(empty.status).toBe(400);
        expect(await empty.json()).toMatchObject({error: {param: "grammar"}});

        // the same engine process, still running, and the user's own chat is answered by it
        expect(engine.state).toEqual({state: "running", pid});
        const {id} = await host.handle("conversations.create", {title: "after the dead end"}, client);
        await host.handle("chat.send", {conversationId: id, text: "Still there?", streamId: "after", maxTokens: 4, temperature: 0}, client);
        const done = await waitFor("chat.done", (payload) => payload.streamId === "after");
        expect(done.message.text.length).toBeGreaterThan(0);
        expect(done.message.stopped).toBeUndefined();
        expect(engine.pid).toBe(pid);
    }, 180_000);
});
