/**
 * The OpenAI-compatible server toggled from the app, through the host as the Server screen drives it: the real engine
 * child on a generated model, a real HTTP client. Off by default; no key off loopback is refused; a bad key gets 401;
 * a streamed reply arrives; the app's chat shares the server's sequences (its conversations come back by swap or
 * recompute, and the TTFT it shows includes that); turning it off closes the port and the chat goes on without it.
 */
import {existsSync} from "node:fs";
import {mkdir, mkdtemp, readdir, rm, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {ServerState} from "../../contract/ipc.js";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";
import {makeSyntheticModel} from "../../engine/writer/makeSyntheticModel.js";
import {ConversationStore} from "../conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "../engineChild/EngineClient.js";
import {HostService} from "../HostService.js";
import {hostEventRecorder} from "../testing/hostEventRecorder.js";
import {SERVER_SETTINGS_FILE} from "./ServerControl.js";
import {rawRequest} from "../../engine/testing/rawRequest.js";
import {isolatedCacheEnv} from "../../engine/testing/isolatedCacheEnv.js";

const missing = requiredOrSkip("app server tests", existsSync(defaultEngineEntry()) ? null : "the engine is not built; run `npm run build`");
if (missing != null)
    console.warn(`[skip] app server tests: ${missing}`);

describe.skipIf(missing != null)("the app's OpenAI-compatible server through the host (real engine, tiny model)", () => {
    let dir: string;
    let engine: EngineClient;
    let host: HostService;
    const {events, client, waitFor} = hostEventRecorder("test-client", 120_000);
    const send = async (conversationId: string, text: string, streamId: string) => {
        await host.handle("chat.send", {conversationId, text, streamId, maxTokens: 6, temperature: 0}, client);
        return (await waitFor("chat.done", (payload) => payload.streamId === streamId)).message;
    };

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-app-server-"));
        await mkdir(path.join(dir, "models"));
        await makeSyntheticModel(path.join(dir, "models", "tiny.gguf"), {preset: "tiny"});
        engine = new EngineClient({env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1", ...isolatedCacheEnv(path.join(dir, "cache"))}});
        host = new HostService(await ConversationStore.open(dir), engine);
        host.attach(client);
        await engine.start();
        await host.handle("model.load", {path: path.join(dir, "models", "tiny.gguf"), gpuLayers: 0, settings: {contextSize: 1024}, taskId: "t"}, client);
    }, 180_000);
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("is off by default, with a generated key and a loopback address", async () => {
        const state = await host.handle("server.get", undefined, client);
        expect(state).toMatchObject({enabled: false, status: "off", bindAddress: "127.0.0.1", requireKey: true, url: null});
        expect(state.apiKey).toMatch(/^tw-[A-Za-z0-9_-]{32}$/);
    });

    it("refuses another address without a key in one sentence, and keeps the settings it had", async () => {
        await expect(host.handle("server.set", {bindAddress: "0.0.0.0", requireKey: false}, client))
            .rejects.toThrow(/^Binding to 0\.0\.0\.0 lets other machines use this model: keep "Require API key" on, or bind to 127\.0\.0\.1\.$/);
        await expect(host.handle("server.set", {bindAddress: "my laptop"}, client)).rejects.toThrow(/"bindAddress" must be an IP address/);
        expect(await host.handle("server.get", undefined, client)).toMatchObject({bindAddress: "127.0.0.1", requireKey: true, enabled: false});
    });

    let state: ServerState;
    it("serves the loaded model once on: 401 with a bad key, a streamed reply with the key", async () => {
        state = await host.handle("server.set", {enabled: true, port: 0, parallel: 2}, client);
        expect(state.status, state.error ?? "").toBe("serving");
        expect(state.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
        expect(state.modelId).toBe("tiny.gguf");
        expect(events.some((event) => event.name === "server.state" && event.payload.status === "serving")).toBe(true);

        const bad = await fetch(`${state.url}/models`, {headers: {Authorization: "Bearer wrong-key"}});
        expect(bad.status).toBe(401);
        expect((await bad.json() as {error: {code: string}}).error.code).toBe("invalid_api_key");

        const response = await fetch(`${state.url}/chat/completions`, {
            method: "POST",
            headers: {"Content-Type": "application/json", Authorization: `Bearer ${state.apiKey}`},
            body: JSON.stringify({messages: [{role: "user", content: "Hello"}], max_tokens: 6, temperature: 0, stream: true})
        });
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
        const body = await response.text();
        const chunks = body.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6));
        expect(chunks.at(-1)).toBe("[DONE]");
        const text = chunks.slice(0, -1).map((chunk) => (JSON.parse(chunk) as {choices: {delta?: {content?: string}}[]}).choices[0]?.delta?.content ?? "").join("");
        expect(text.length).toBeGreaterThan(0);

        // the Server screen's list: newest first, the completion with its tokens and timings, then the refused key
        const listed = await waitFor("server.state", (payload) => payload.served >= 2);
        expect(listed.recent.map((entry) => [entry.status, entry.path, entry.outcome])).toEqual([
            [200, "/v1/chat/completions", expect.stringMatching(/^(stop|length)$/)], [401, "/v1/models", "invalid_api_key"]
        ]);
        const [completion] = listed.recent;
        expect(completion!.generatedTokens).toBeGreaterThan(0);
        expect(completion!.ttftMs).toBeGreaterThan(0);
        expect(completion!.sequence).not.toBeNull();
        expect(completion!.kv).toBe("new");
    }, 180_000);

    it("runs the app's chat on the server's sequences: a conversation pushed out comes back by swap or recompute, inside its TTFT", async () => {
        const ids = [];
        for (const title of ["a", "b", "c"])
            ids.push((await host.handle("conversations.create", {title}, client)).id);
        // three conversations on two sequences: the third takes the sequence of the least recently used, the first
        const first = await send(ids[0]!, "Tell me about rivers", "a1");
        expect(first.restore?.path).toBe("new");
        await send(ids[1]!, "Count the bridges", "b1");
        await send(ids[2]!, "Name the boats", "c1");
        const back = await send(ids[0]!, "And then?", "a2");
        expect(back.restore?.path).toMatch(/^(swap|recompute)$/);
        expect(back.timing!.ttftMs).toBeGreaterThanOrEqual(back.restore!.ms);
        // the conversation that kept its sequence is still there
        const resident = await send(ids[2]!, "More boats", "c2");
        expect(resident.restore?.path).toBe("resident");
    }, 180_000);

    it("takes a key per client program from the Server screen: each works, a revoked one gets 401, names are checked, and they are kept", async () => {
        const chat = (url: string, key: string, conversation: string) => fetch(`${url}/chat/completions`, {
            method: "POST",
            headers: {"Content-Type": "application/json", "Authorization": `Bearer ${key}`, "X-Conversation-Id": conversation},
            body: JSON.stringify({messages: [{role: "user", content: "Tell me about the harbour"}], max_tokens: 4, temperature: 0})
        });
        await host.handle("server.set", {addClientKey: "editor"}, client);
        const withKeys = await host.handle("server.set", {addClientKey: "agent 2"}, client);
        expect(withKeys.status, withKeys.error ?? "").toBe("serving");
        expect(withKeys.clientKeys.map((entry) => entry.name)).toEqual(["editor", "agent 2"]);
        // keys change without a restart: the same port, nothing calibrated again
        expect(withKeys.url).toBe(state.url);
        const [editor, agent] = withKeys.clientKeys;
        for (const entry of withKeys.clientKeys) {
            expect(entry.key).toMatch(/^tw-[A-Za-z0-9_-]{32}$/);
            expect(entry.key).not.toBe(withKeys.apiKey);
        }
        expect(editor!.key).not.toBe(agent!.key);
        await expect(host.handle("server.set", {addClientKey: "editor"}, client)).rejects.toThrow(/^A client key named "editor" exists already/);
        await expect(host.handle("server.set", {revokeClientKey: "nobody"}, client)).rejects.toThrow(/^There is no client key named "nobody"/);
        for (const name of ["", " editor", "a".repeat(41), "x/y", "tab\tname", "\u202eeditor", 7])
            await expect(host.handle("server.set", {addClientKey: name}, client)).rejects.toThrow(/addClientKey/);
        // the same conversation id under two keys is two conversations: the second evaluates its whole prompt again
        const first = await chat(withKeys.url!, editor!.key, "shared-id");
        expect(first.status).toBe(200);
        const own = await chat(withKeys.url!, editor!.key, "shared-id");
        const other = await chat(withKeys.url!, agent!.key, "shared-id");
        expect([own.status, other.status]).toEqual([200, 200]);
        type Timed = {usage: {prompt_tokens: number}; timings: {prompt_tokens_evaluated: number}};
        const [firstBody, ownBody, otherBody] = [await first.json() as Timed, await own.json() as Timed, await other.json() as Timed];
        // the editor's second request found its own prompt cached; the agent's, the same text, evaluated what a new one does
        expect(ownBody.timings.prompt_tokens_evaluated).toBeLessThan(firstBody.timings.prompt_tokens_evaluated);
        expect(otherBody.timings.prompt_tokens_evaluated).toBe(firstBody.timings.prompt_tokens_evaluated);

        const revoked = await host.handle("server.set", {revokeClientKey: "agent 2"}, client);
        expect(revoked.clientKeys.map((entry) => entry.name)).toEqual(["editor"]);
        expect(revoked.url).toBe(state.url);
        expect((await chat(revoked.url!, agent!.key, "after-revoke")).status).toBe(401);
        expect((await chat(revoked.url!, editor!.key, "after-revoke")).status).toBe(200);
        const again = new HostService(await ConversationStore.open(dir), engine);
        try {
            expect((await again.handle("server.get", undefined, client)).clientKeys).toEqual([editor]);
        } finally {
            await again.dispose();
        }
    }, 240_000);

    it("closes the port when turned off, and the app's chat goes on without the scheduler", async () => {
        const off = await host.handle("server.set", {enabled: false}, client);
        expect(off).toMatchObject({enabled: false, status: "off", url: null});
        await expect(fetch(`${state.url}/models`, {headers: {Authorization: `Bearer ${state.apiKey}`}})).rejects.toThrow();
        const {id} = await host.handle("conversations.create", {}, client);
        const reply = await send(id, "Hello again", "after");
        expect(reply.text.length).toBeGreaterThan(0);
        expect(reply.restore).toBeUndefined();
    }, 180_000);

    it("keeps its settings and key for the next start of the app; a settings file it cannot read is moved aside", async () => {
        const kept = await host.handle("server.set", {regenerateKey: true, parallel: 3}, client);
        const again = new HostService(await ConversationStore.open(dir), engine);
        try {
            expect(await again.handle("server.get", undefined, client)).toMatchObject({
                enabled: false, port: kept.port, parallel: 3, bindAddress: "127.0.0.1", requireKey: true, apiKey: kept.apiKey
            });
        } finally {
            await again.dispose();
        }
        await writeFile(path.join(dir, SERVER_SETTINGS_FILE), "{\"version\": 1, \"settings\": {\"port\": -5}}");
        const fresh = new HostService(await ConversationStore.open(dir), engine);
        try {
            const state = await fresh.handle("server.get", undefined, client);
            expect(state).toMatchObject({enabled: false, port: 8080, parallel: 4});
            expect(state.apiKey).not.toBe(kept.apiKey);
            expect((await readdir(dir)).filter((name) => name.startsWith("server.unreadable-"))).toHaveLength(1);
        } finally {
            await fresh.dispose();
        }
    });
    it("lets pages on the allowed web origins call it: kept with the settings, answered by the engine's server, refused by name when malformed", async () => {
        await expect(host.handle("server.set", {corsOrigins: ["http://localhost:5173", "*"]}, client)).rejects.toThrow(/"corsOrigins": "\*" is not a web origin to allow: wildcards/);
        const on = await host.handle("server.set", {enabled: true, port: 0, parallel: 2, corsOrigins: ["HTTP://LocalHost:5173"]}, client);
        try {
            expect(on.status, on.error ?? "").toBe("serving");
            expect(on.corsOrigins).toEqual(["http://localhost:5173"]);
            const port = Number(new URL(on.url!).port);
            const preflight = (origin: string) => rawRequest(port, {method: "OPTIONS", path: "/v1/chat/completions",
                headers: {Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}});
            const allowed = await preflight("http://localhost:5173");
            expect(allowed.status).toBe(204);
            expect(allowed.headers["access-control-allow-origin"]).toBe("http://localhost:5173");
            const other = await preflight("http://localhost:5174");
            expect(other.status).toBe(403);
            expect(other.headers["access-control-allow-origin"]).toBeUndefined();
            const again = new HostService(await ConversationStore.open(dir), engine);
            try {
                expect((await again.handle("server.get", undefined, client)).corsOrigins).toEqual(["http://localhost:5173"]);
            } finally {
                await again.dispose();
            }
        } finally {
            await host.handle("server.set", {enabled: false, corsOrigins: []}, client);
        }
    }, 180_000);
});
