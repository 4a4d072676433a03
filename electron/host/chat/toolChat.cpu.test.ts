/**
 * Tools in the app's chat, through the host with the real engine child (a random-weight model carrying Qwen2.5's chat
 * template, whose tool-call syntax llama.cpp's chat layer parses) and real MCP server processes: a call forced by
 * `required` waits for the user, runs when approved, its result is saved with the round and fed back, and the next
 * round streams as its own message; Deny, Always for this tool, a hanging server, a server that cannot start, Stop at
 * each step, and a regenerate that replaces every round.
 */
import {existsSync, readFileSync} from "node:fs";
import {mkdir, mkdtemp, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {ChatMessage, Events} from "../../contract/ipc.js";
import type {McpServerConfig} from "../../contract/tools.js";
import {isolatedCacheEnv} from "../../engine/testing/isolatedCacheEnv.js";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";
import {makeSyntheticModel} from "../../engine/writer/makeSyntheticModel.js";
import {ConversationStore} from "../conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "../engineChild/EngineClient.js";
import {HostService} from "../HostService.js";
import {hostEventRecorder} from "../testing/hostEventRecorder.js";

const LYING = path.resolve("electron/host/tools/testing/lyingMcpServer.mjs");
/** Qwen2.5's chat template, as `npm ci` unpacks llama.cpp's source (electron/serve/testing/templatedTestModel.ts reads the same). */
const QWEN_TEMPLATE = path.resolve("build/native/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja");
const missing = requiredOrSkip("the host's tool chat tests", !existsSync(defaultEngineEntry()) ? "the engine is not built; run `npm run build`"
    : !existsSync(QWEN_TEMPLATE) ? `${QWEN_TEMPLATE} is missing (npm ci unpacks llama.cpp's source: native/install.mjs)` : null);

const liar = (name: string, callTimeoutSeconds: number, args: string[] = []): McpServerConfig => ({
    name, enabled: true, launch: {transport: "stdio", command: process.execPath, args: [LYING, ...args], env: {}, cwd: null}, callTimeoutSeconds, alwaysAllow: []
});

describe.skipIf(missing != null)("tools in the app's chat (host, real engine child, real MCP servers)", () => {
    let dir: string;
    let engine: EngineClient;
    let host: HostService;
    const {events, client, waitFor} = hostEventRecorder("tool-client", 90_000);
    let streams = 0;

    /** A new conversation with `tool` of `server` on and the tool choice required. */
    const conversationWith = async (server: string, tool: string, maxTokens = 48): Promise<string> => {
        const {id} = await host.handle("conversations.create", {settings: {maxTokens, temperature: 0, tools: {on: [{server, tool}], choice: "required"}}}, client);
        return id;
    };
    /** Sends `text`; resolves with the stream id and the first round's message once its call waits (or runs). */
    const send = async (conversationId: string, text = "Do it"): Promise<string> => {
        const streamId = `tool-stream-${++streams}`;
        await host.handle("chat.send", {conversationId, text, streamId}, client);
        return streamId;
    };
    const roundWith = (streamId: string, state: string) => waitFor("chat.message", (payload) => payload.streamId === streamId &&
        payload.message.toolCalls?.some((call) => call.state === state) === true);
    const done = (streamId: string) => waitFor("chat.done", (payload) => payload.streamId === streamId, 120_000);

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-tool-chat-"));
        await mkdir(path.join(dir, "models"));
        await makeSyntheticModel(path.join(dir, "models", "qwen-tools.gguf"), {preset: "tiny", chatTemplate: readFileSync(QWEN_TEMPLATE, "utf8"), addSpacePrefix: false});
        engine = new EngineClient({env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1", ...isolatedCacheEnv(path.join(dir, "cache"))}});
        host = new HostService(await ConversationStore.open(dir), engine);
        host.attach(client);
        await engine.start();
        await host.handle("model.load", {path: path.join(dir, "models", "qwen-tools.gguf"), gpuLayers: 0, settings: {contextSize: 2048}, taskId: "load"}, client);
        await host.handle("tools.save", {config: liar("liar", 30)}, client);
        await host.handle("tools.save", {config: liar("quick", 1)}, client);
    }, 180_000);
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("a required call waits for approval, runs, is saved with its result, and the model's next round streams as its own message", async () => {
        const conversationId = await conversationWith("liar", "images");
        const streamId = await send(conversationId);
        const waiting = await roundWith(streamId, "pending");
        const call = waiting.message.toolCalls![0]!;
        expect(call).toMatchObject({server: "liar", tool: "images", arguments: expect.stringMatching(/^\{\s*\}$/), state: "pending"});
        expect(waiting.message.toolTokens).toBeGreaterThan(50);
        // nothing ran before the user said so: no running state was pushed
        expect(events.some((event) => event.name === "chat.message" && event.payload.streamId === streamId &&
            event.payload.message.toolCalls!.some((sent) => sent.state === "running"))).toBe(false);
        await host.handle("chat.decideTool", {streamId, callId: call.id, decision: "approve"}, client);
        const ran = await roundWith(streamId, "done");
        expect(ran.message.toolCalls![0]).toMatchObject({state: "done", approval: "user", result: {parts: [{type: "image", mimeType: "image/png"}, {type: "note"}]}});
        const end = await done(streamId);
        // the next round is another message, streamed with its own id, and its prompt holds the call and its result
        expect(end.message.id).not.toBe(waiting.message.id);
        const deltas = events.filter((event) => event.name === "chat.delta" && event.payload.streamId === streamId).map((event) => event.payload as Events["chat.delta"]);
        expect(deltas.filter((delta) => delta.messageId === end.message.id).map((delta) => delta.text).join("")).toBe(end.message.text);
        expect(end.message.prompt!.tokens).toBeGreaterThan(waiting.message.prompt!.tokens);
        const saved = await host.handle("conversations.get", {id: conversationId}, client);
        expect(saved.messages.map((message) => message.role)).toEqual(["user", "assistant", "assistant"]);
        expect(saved.messages[1]!.toolCalls![0]!.state).toBe("done");
        expect(saved.messages[2]).toEqual(end.message);
    }, 180_000);

    it("Deny: the call never runs, the model is told and goes on; Always: later calls of that tool run without asking", async () => {
        const denied = await conversationWith("liar", "failing");
        const streamId = await send(denied);
        const waiting = await roundWith(streamId, "pending");
        await host.handle("chat.decideTool", {streamId, callId: waiting.message.toolCalls![0]!.id, decision: "deny"}, client);
        await roundWith(streamId, "denied");
        await done(streamId);

        const always = await conversationWith("liar", "html");
        const first = await send(always);
        const asked = await roundWith(first, "pending");
        await host.handle("chat.decideTool", {streamId: first, callId: asked.message.toolCalls![0]!.id, decision: "always"}, client);
        const result = await roundWith(first, "done");
        // tool output stays text: markup is kept as characters, for the renderer to show as text
        expect(result.message.toolCalls![0]!.result!.parts[0]).toMatchObject({type: "text", text: expect.stringContaining("<script>")});
        await done(first);
        expect((await host.handle("tools.list", undefined, client)).servers.find((server) => server.config.name === "liar")!.config.alwaysAllow).toEqual(["html"]);
        const second = await send(always, "Again");
        await roundWith(second, "done");
        await done(second);
        expect(events.some((event) => event.name === "chat.message" && event.payload.streamId === second &&
            event.payload.message.toolCalls!.some((call) => call.state === "pending"))).toBe(false);
    }, 240_000);

    it("a hanging server fails the call at its time limit, inline, and the reply goes on", async () => {
        const conversationId = await conversationWith("quick", "hang");
        const streamId = await send(conversationId);
        const waiting = await roundWith(streamId, "pending");
        await host.handle("chat.decideTool", {streamId, callId: waiting.message.toolCalls![0]!.id, decision: "approve"}, client);
        const failed = await roundWith(streamId, "failed");
        expect(failed.message.toolCalls![0]!.error).toBe("the server did not answer within 1 s (the call's time limit, set on the Tools screen).");
        const end = await done(streamId);
        expect(end.message.stopped).toBeUndefined();
    }, 180_000);

    it("Stop while a call waits, and while it runs: it never runs, or is cancelled at once; the chat is free again", async () => {
        const conversationId = await conversationWith("liar", "hang");
        const waitingStream = await send(conversationId);
        await roundWith(waitingStream, "pending");
        await host.handle("chat.stop", {streamId: waitingStream}, client);
        const stopped = await done(waitingStream);
        expect(stopped.message).toMatchObject({stopped: "user", toolCalls: [{state: "stopped"}]});

        const runningStream = await send(conversationId, "Once more");
        const asked = await roundWith(runningStream, "pending");
        await host.handle("chat.decideTool", {streamId: runningStream, callId: asked.message.toolCalls![0]!.id, decision: "approve"}, client);
        await roundWith(runningStream, "running");
        const stopAt = performance.now();
        await host.handle("chat.stop", {streamId: runningStream}, client);
        const cancelled = await done(runningStream);
        expect(performance.now() - stopAt).toBeLessThan(3_000);
        expect(cancelled.message.toolCalls![0]!.state).toBe("stopped");
        // a decision for a reply that ended is refused, not silently dropped
        await expect(host.handle("chat.decideTool", {streamId: runningStream, callId: asked.message.toolCalls![0]!.id, decision: "approve"}, client))
            .rejects.toThrow(/no reply of this window is waiting/);
        const saved = await host.handle("conversations.get", {id: conversationId}, client);
        expect(saved.messages.map((message: ChatMessage) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);

        // regenerate replaces the whole last reply, every round of it
        const again = `tool-stream-${++streams}`;
        await host.handle("chat.regenerate", {conversationId, streamId: again}, client);
        await host.handle("chat.stop", {streamId: again}, client);
        await done(again);
        const regenerated = (await host.handle("conversations.get", {id: conversationId}, client)).messages;
        expect(regenerated.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
        expect(regenerated.at(-1)!.id).not.toBe(saved.messages.at(-1)!.id);
    }, 240_000);

    it("an imported conversation with tools on and a call left waiting starts no server and runs nothing", async () => {
        await host.handle("tools.save", {config: liar("untouched", 5)}, client);
        const since = events.length;
        const file = {format: "tensorwise.conversation", version: 1, conversation: {
            id: "x", title: "Imported", updatedAt: 1, messageCount: 2,
            settings: {tools: {on: [{server: "untouched", tool: "echo"}], choice: "required"}},
            messages: [{id: "u", role: "user", text: "Echo", createdAt: 1},
                {id: "a", role: "assistant", text: "", createdAt: 2, toolCalls: [{id: "call_x", server: "untouched", tool: "echo", arguments: "{\"text\": \"hi\"}", state: "pending"}]}]
        }};
        const imported = await host.handle("conversations.import", {text: JSON.stringify(file)}, client);
        await host.handle("conversations.get", {id: imported.id}, client);
        await new Promise((resolve) => setTimeout(resolve, 500));
        const state = await host.handle("tools.list", undefined, client);
        expect(state.servers.find((server) => server.config.name === "untouched")).toMatchObject({status: "stopped", pid: null, log: []});
        expect(events.slice(since).filter((event) => event.name.startsWith("chat."))).toEqual([]);
        // its waiting call has no reply to answer it: a decision is refused
        await expect(host.handle("chat.decideTool", {streamId: "none", callId: "call_x", decision: "approve"}, client)).rejects.toThrow(/no reply of this window/);
    }, 30_000);

    it("Stop while a chat's server is still starting refuses the send at once; nothing is saved, and the chat is free again", async () => {
        // a program that never answers MCP's initialize: its start would wait MCP_START_TIMEOUT_MS (60 s), longer than this test may run
        await host.handle("tools.save", {config: {...liar("mute", 5), launch: {transport: "stdio", command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"], env: {}, cwd: null}}}, client);
        const conversationId = await conversationWith("mute", "echo");
        const since = events.length;
        const streamId = `tool-stream-${++streams}`;
        const sending = host.handle("chat.send", {conversationId, text: "Do it", streamId}, client);
        await expect.poll(async () => (await host.handle("tools.list", undefined, client)).servers.find((server) => server.config.name === "mute")?.status, {timeout: 20_000}).toBe("starting");
        await host.handle("chat.stop", {streamId}, client);
        await expect(sending).rejects.toThrow(/^Stopped while the MCP server "mute" was starting: nothing was sent\.$/);
        expect((await host.handle("conversations.get", {id: conversationId}, client)).messages).toEqual([]);
        expect(events.slice(since).filter((event) => event.name.startsWith("chat."))).toEqual([]);
        // the conversation's reply slot is free: turned to a server that works, the next send goes through
        await host.handle("conversations.setSettings", {id: conversationId, settings: {maxTokens: 8, temperature: 0, tools: {on: [], choice: "auto"}}}, client);
        const next = `tool-stream-${++streams}`;
        await host.handle("chat.send", {conversationId, text: "Hello", streamId: next}, client);
        await done(next);
        await host.handle("tools.stop", {name: "mute"}, client);
    }, 40_000);

    it("a server that cannot start refuses the send in a sentence, and nothing is saved", async () => {
        await host.handle("tools.save", {config: liar("broken", 5, ["--fail-start"])}, client);
        const conversationId = await conversationWith("broken", "echo");
        await expect(send(conversationId)).rejects.toMatchObject({code: "tool-server-failed", message: expect.stringMatching(/"broken" could not start.*cannot open its database/)});
        expect((await host.handle("conversations.get", {id: conversationId}, client)).messages).toEqual([]);
        const state = await host.handle("tools.list", undefined, client);
        expect(state.servers.find((server) => server.config.name === "broken")).toMatchObject({status: "failed", error: expect.stringMatching(/cannot open its database/)});
    }, 60_000);
});
