import {mkdir, mkdtemp, rm, writeFile} from "node:fs/promises";
import {existsSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {EventName, Events, TaskProgress} from "../contract/ipc.js";
import {makeSyntheticModel} from "../engine/writer/makeSyntheticModel.js";
import {ConversationStore} from "./conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "./engineChild/EngineClient.js";
import type {HostClient} from "./HostContext.js";
import {HostService} from "./HostService.js";
import {requiredOrSkip} from "../engine/testing/requiredOrSkip.js";
import {isolatedCacheEnv} from "../engine/testing/isolatedCacheEnv.js";

const missing = requiredOrSkip("HostService tests", existsSync(defaultEngineEntry()) ? null : "the engine is not built; run `npm run build`");

type Received = {[Name in EventName]: {name: Name; payload: Events[Name]}}[EventName];

// Needs-a-model tier: the real engine child, a synthetic tiny model, the real store.
describe.skipIf(missing != null)("HostService with the real engine and a tiny model", () => {
    let dir: string;
    let engine: EngineClient;
    let host: HostService;
    const events: Received[] = [];
    /** Called with every event as the host sends it (a test that must act before the engine's next step). */
    let onEvent: ((event: Received) => void) | null = null;
    const client: HostClient = {id: "test-client", emit: (name, payload) => {
        const event = {name, payload} as Received;
        events.push(event);
        onEvent?.(event);
    }};
    const waitFor = async <Name extends EventName>(name: Name, match: (payload: Events[Name]) => boolean = () => true, since = 0, timeout = 90_000) => {
        const started = Date.now();
        for (;;) {
            const found = events.slice(since).find((event) => event.name === name && match(event.payload as Events[Name]));
            if (found != null)
                return found.payload as Events[Name];
            if (Date.now() - started > timeout)
                throw new Error(`no ${name} event within ${timeout} ms`);
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
    };

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-host-"));
        await mkdir(path.join(dir, "models"));
        await makeSyntheticModel(path.join(dir, "models", "tiny.gguf"), {preset: "tiny"});
        // a profile cache of this run's own: the first auto-offload measures this machine, later ones reuse it
        engine = new EngineClient({env: {...process.env, TENSORWISE_THREADS: "2", ...isolatedCacheEnv(path.join(dir, "cache"))}});
        host = new HostService(await ConversationStore.open(dir), engine);
        host.attach(client);
        await engine.start();
        await host.handle("model.autoOffload", {path: path.join(dir, "models", "tiny.gguf"), budget: {kind: "auto"}, settings: {contextSize: 1024}, taskId: "t"}, client);
    });
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("streams a reply as batched deltas that add up to the saved message with engine timing", async () => {
        const {id} = await host.handle("conversations.create", {}, client);
        await host.handle("chat.send", {conversationId: id, text: "Hello", streamId: "s1", maxTokens: 48, temperature: 0}, client);
        const done = await waitFor("chat.done", (payload) => payload.streamId === "s1");
        const deltas = events.filter((event) => event.name === "chat.delta" && event.payload.streamId === "s1")
            .map((event) => event.payload as Events["chat.delta"]);
        expect(deltas.map((delta) => delta.text).join("")).toBe(done.message.text);
        // never more events than tokens: each event carries everything since the last frame
        expect(deltas.length).toBeLessThanOrEqual(done.message.timing!.generatedTokens);
        expect(done.message.timing!.ttftMs).toBeGreaterThan(0);
        const saved = await host.handle("conversations.get", {id}, client);
        expect(saved.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
        expect(saved.messages[1]).toEqual(done.message);
        expect(done.message.model, "the reply names the model that wrote it (an export shows it)").toBe("tiny.gguf");
        expect(saved.title).toBe("Hello");
    });

    it("a conversation is free for the next send as soon as its reply's end is reported, finished or stopped", async () => {
        const {id} = await host.handle("conversations.create", {}, client);
        const followUps: Promise<unknown>[] = [];
        const ended: string[] = [];
        // a client that sends again the moment it hears a reply ended, as the app's composer lets the user do
        const eager: HostClient = {
            id: "eager-client",
            emit: (name, payload) => {
                const end = payload as {streamId?: string};
                if ((name === "chat.done" || name === "chat.error") && end.streamId != null && !ended.includes(end.streamId)) {
                    ended.push(end.streamId);
                    if (ended.length < 3)
                        followUps.push(host.handle("chat.send", {conversationId: id, text: "again", streamId: `eager-${ended.length}`, maxTokens: 200, temperature: 0}, eager));
                }
            }
        };
        host.attach(eager);
        await host.handle("chat.send", {conversationId: id, text: "Hello", streamId: "eager-0", maxTokens: 4, temperature: 0}, eager);
        while (ended.length < 1)
            await new Promise((resolve) => setTimeout(resolve, 10));
        // the second reply (200 tokens) is stopped mid-way; its end starts the third
        await followUps[0];
        await new Promise((resolve) => setTimeout(resolve, 50));
        await host.handle("chat.stop", {streamId: "eager-1"}, eager);
        while (ended.length < 3)
            await new Promise((resolve) => setTimeout(resolve, 10));
        // both follow-ups accepted (not refused as "a reply is already being written"), each answered with its user message as saved
        const saved = {status: "fulfilled", value: expect.objectContaining({role: "user", text: "again"})};
        expect(await Promise.allSettled(followUps)).toEqual([saved, saved]);
    });

    it("Auto-offload again reuses the machine profile, sends the explained plan before loading it, and predicts the same", async () => {
        const tiny = path.join(dir, "models", "tiny.gguf");
        const press = async (taskId: string) => {
            const since = events.length;
            // the load of beforeAll again, so the tests after this one chat with the same plan
            const state = await host.handle("model.autoOffload", {path: tiny, budget: {kind: "auto"}, settings: {contextSize: 1024}, taskId}, client);
            const progress = events.slice(since).filter((event) => event.name === "task.progress" && event.payload.taskId === taskId)
                .map((event) => event.payload as TaskProgress);
            return {state, progress};
        };
        const first = await press("again-1");
        const second = await press("again-2");
        for (const {state, progress} of [first, second]) {
            // nothing measured: the profile the first load of this file made is read back
            expect(progress.some((p) => p.step === "profile" && (p.detail ?? "").includes("reusing this machine's profile"))).toBe(true);
            expect(progress.some((p) => (p.detail ?? "").startsWith("timing "))).toBe(false);
            expect(state.prediction!.explanation!.profileReused).toBe(true);
            expect(state.prediction!.explanation!.profile).toContain("reused from the cache");
            expect(state.prediction!.explanation!.budget).toMatch(/^Auto budget: [\d.]+ MiB/);
            // the plan and its memory per device arrive before the weights load
            const planAt = progress.findIndex((p) => p.plan != null);
            expect(planAt).toBeGreaterThanOrEqual(0);
            expect(planAt).toBeLessThan(progress.findIndex((p) => p.step === "load"));
            expect(progress[planAt]!.plan!.prediction.memory).toEqual(state.prediction!.memory);
        }
        // the same plan from the same profile: the prediction does not jump between presses
        expect(second.state.prediction!.ttftMs).toBe(first.state.prediction!.ttftMs);
        expect(second.state.prediction!.tpotMs).toBe(first.state.prediction!.tpotMs);

        // each reply is predicted for its own prompt: a longer prompt is predicted a longer TTFT
        const {id} = await host.handle("conversations.create", {settings: {maxTokens: 4, temperature: 0}}, client);
        await host.handle("chat.send", {conversationId: id, text: "Hi", streamId: "p1"}, client);
        const short = (await waitFor("chat.done", (payload) => payload.streamId === "p1")).message.timing!;
        const {id: other} = await host.handle("conversations.create", {settings: {maxTokens: 4, temperature: 0}}, client);
        // both prompts stay short: prefill on llvmpipe takes minutes on a loaded machine
        await host.handle("chat.send", {conversationId: other, text: "Tell me more, ok?", streamId: "p2"}, client);
        const long = (await waitFor("chat.done", (payload) => payload.streamId === "p2")).message.timing!;
        expect(long.promptTokens).toBeGreaterThan(short.promptTokens);
        expect(short.predicted!.ttftMs).toBeGreaterThan(0);
        expect(long.predicted!.ttftMs).toBeGreaterThan(short.predicted!.ttftMs);
        // and it is kept with the message
        const saved = await host.handle("conversations.get", {id: other}, client);
        expect(saved.messages.at(-1)!.timing!.predicted).toEqual(long.predicted);
    }, 240_000);

    it("Cancel stops a re-profile before anything is unloaded: the model stays loaded and replies still work", async () => {
        const since = events.length;
        const job = host.handle("model.autoOffload", {
            path: path.join(dir, "models", "tiny.gguf"), budget: {kind: "auto"}, settings: {contextSize: 1024}, taskId: "cancel-me", refreshProfile: true
        }, client);
        const caught = job.catch((error: unknown) => error);
        // measuring, with its progress against the profile's time bound
        await waitFor("task.progress", (p) => p.taskId === "cancel-me" && p.step === "profile" && (p.progress ?? 0) > 0, since);
        await host.handle("task.cancel", {taskId: "cancel-me"}, client);
        expect(await caught).toMatchObject({code: "aborted"});
        expect(events.slice(since).some((event) => event.name === "task.progress" && event.payload.taskId === "cancel-me" && event.payload.step === "load")).toBe(false);
        expect(host.engineState.state).toBe("ready");
        const {id} = await host.handle("conversations.create", {settings: {maxTokens: 2, temperature: 0}}, client);
        await host.handle("chat.send", {conversationId: id, text: "Still here?", streamId: "after-cancel"}, client);
        const done = await waitFor("chat.done", (payload) => payload.streamId === "after-cancel");
        expect(done.message.timing!.generatedTokens).toBeGreaterThan(0);
    }, 240_000);

    it("a stop that lands at once (before the first token) ends the reply as stopped, not as an error", async () => {
        const {id} = await host.handle("conversations.create", {}, client);
        await host.handle("chat.send", {conversationId: id, text: "Stop me at once", streamId: "early", maxTokens: 64, temperature: 0}, client);
        await host.handle("chat.stop", {streamId: "early"}, client);
        const done = await waitFor("chat.done", (payload) => payload.streamId === "early");
        expect(done.message.stopped).toBe("user");
        expect(done.message.stopReason).toBe("stopped");
        expect(events.some((event) => event.name === "chat.error" && event.payload.streamId === "early")).toBe(false);
    });

    it("replies with the conversation's settings, reports why it stopped and the context used, edits and deletes messages", async () => {
        const {id} = await host.handle("conversations.create", {settings: {maxTokens: 5, temperature: 0}}, client);
        const sent = await host.handle("chat.send", {conversationId: id, text: "Count", streamId: "set1"}, client);
        const first = (await waitFor("chat.done", (payload) => payload.streamId === "set1")).message;
        // the send answers with the message as saved: the id an edit or delete then names
        expect((await host.handle("conversations.get", {id}, client)).messages[0]).toEqual(sent);
        // 5 tokens from the conversation's own settings, and the reply says it was cut there
        expect(first.timing!.generatedTokens).toBeLessThanOrEqual(5);
        expect(first.stopReason).toBe("max-tokens");
        expect(first.prompt!.tokens).toBeGreaterThan(1);
        expect(first.context).toMatchObject({size: 1024});
        expect(first.context!.usedTokens).toBeGreaterThanOrEqual(first.prompt!.tokens);
        const promptEvents = events.filter((event) => event.name === "chat.prompt" && event.payload.streamId === "set1");
        expect(promptEvents.length).toBeGreaterThan(0);

        // a system prompt changes the prompt the model sees; the next reply uses it
        await host.handle("conversations.setSettings", {id, settings: {maxTokens: 3, temperature: 0, systemPrompt: "You are terse. ".repeat(20)}}, client);
        const edited = await host.handle("chat.edit", {conversationId: id, messageId: sent.id, text: "Count again", streamId: "set2"}, client);
        const second = (await waitFor("chat.done", (payload) => payload.streamId === "set2")).message;
        expect((await host.handle("conversations.get", {id}, client)).messages[0]).toEqual(edited);
        expect(second.timing!.generatedTokens).toBeLessThanOrEqual(3);
        expect(second.stopReason).toBe("max-tokens");
        expect(second.prompt!.tokens).toBeGreaterThan(first.prompt!.tokens + 20);
        let saved = await host.handle("conversations.get", {id}, client);
        expect(saved.messages.map((message) => message.role === "user" ? message.text : message.id)).toEqual(["Count again", second.id]);

        saved = await host.handle("conversations.deleteMessage", {id, messageId: second.id}, client);
        expect(saved.messages.map((message) => message.text)).toEqual(["Count again"]);
        expect(saved.settings?.maxTokens).toBe(3);
    });

    it("a chat longer than the context: truncateMiddle replies with its left-out count saved on the reply, stop refuses with its code", async () => {
        // 60 exchanges of about 40 tokens each: several times the 1024-token context
        const words = (index: number) => Array.from({length: 12}, (_, word) => `m${index}w${word}`).join(" ");
        const messages = Array.from({length: 120}, (_, index) => ({
            id: `m${index}`, role: index % 2 === 0 ? "user" : "assistant", text: words(index), createdAt: 1_700_000_000_000 + index
        }));
        const file = (contextOverflow?: string) => JSON.stringify({format: "tensorwise.conversation", version: 1, conversation: {
            id: "x", title: "long", updatedAt: 1_700_000_000_000, messageCount: messages.length, messages,
            settings: {maxTokens: 8, temperature: 0, ...(contextOverflow != null && {contextOverflow})}
        }});
        // a conversation saved before the setting existed takes the default, which keeps the chat going
        const {id} = await host.handle("conversations.import", {text: file()}, client);
        await host.handle("chat.send", {conversationId: id, text: "and now?", streamId: "long1"}, client);
        const reply = (await waitFor("chat.done", (payload) => payload.streamId === "long1")).message;
        expect(reply.stopped).toBeUndefined();
        expect(reply.leftOutMessages).toBeGreaterThan(0);
        expect(reply.leftOutMessages! % 2).toBe(0);
        expect(reply.leftOutMessages).toBeLessThan(120);
        expect(reply.prompt!.tokens + 8).toBeLessThanOrEqual(1024);
        expect((await host.handle("conversations.get", {id}, client)).messages.at(-1)).toEqual(reply);

        // a rolling window leaves out at least as many: it does not keep the first exchange
        await host.handle("conversations.setSettings", {id, settings: {maxTokens: 8, temperature: 0, contextOverflow: "rollingWindow"}}, client);
        await host.handle("chat.regenerate", {conversationId: id, streamId: "long2"}, client);
        const rolled = (await waitFor("chat.done", (payload) => payload.streamId === "long2")).message;
        expect(rolled.leftOutMessages).toBeGreaterThanOrEqual(reply.leftOutMessages!);

        const stopping = await host.handle("conversations.import", {text: file("stop")}, client);
        await host.handle("chat.send", {conversationId: stopping.id, text: "and now?", streamId: "long3"}, client);
        const refused = await waitFor("chat.error", (payload) => payload.streamId === "long3");
        expect(refused.code).toBe("conversation-too-long");
        expect(refused.error).toMatch(/^The conversation \(\d+ tokens\) does not fit in the context \(1024 tokens\)/);
        // the refusal stands alone: the user's message is kept and no empty reply is saved after it
        const afterRefusal = await host.handle("conversations.get", {id: stopping.id}, client);
        expect(afterRefusal.messages.length).toBe(121);
        expect(afterRefusal.messages.at(-1)).toMatchObject({role: "user", text: "and now?"});
        expect(afterRefusal.messages.filter((message) => message.role === "assistant" && message.text === "")).toEqual([]);
        // asked again once the chat may be shortened, the same message gets its reply
        await host.handle("conversations.setSettings", {id: stopping.id, settings: {maxTokens: 8, temperature: 0, contextOverflow: "truncateMiddle"}}, client);
        await host.handle("chat.regenerate", {conversationId: stopping.id, streamId: "long4"}, client);
        const retried = (await waitFor("chat.done", (payload) => payload.streamId === "long4")).message;
        expect((await host.handle("conversations.get", {id: stopping.id}, client)).messages.slice(-2).map((message) => message.role === "user" ? message.text : message.id))
            .toEqual(["and now?", retried.id]);
    });

    it("refuses a second send to a conversation that is still replying, so messages never interleave", async () => {
        const {id} = await host.handle("conversations.create", {}, client);
        await host.handle("chat.send", {conversationId: id, text: "First", streamId: "c1", maxTokens: 64, temperature: 0}, client);
        await expect(host.handle("chat.send", {conversationId: id, text: "Second", streamId: "c2"}, client)).rejects.toMatchObject({code: "busy"});
        await expect(host.handle("chat.regenerate", {conversationId: id, streamId: "c3"}, client)).rejects.toMatchObject({code: "busy"});
        await waitFor("chat.done", (payload) => payload.streamId === "c1");
        const saved = await host.handle("conversations.get", {id}, client);
        expect(saved.messages.map((message) => [message.role, message.role === "user" ? message.text : ""])).toEqual([["user", "First"], ["assistant", ""]]);
        // a path outside the models folder is refused whether or not it exists: no probing the file system
        await writeFile(path.join(dir, "outside.gguf"), "secret");
        for (const outside of [path.join(dir, "outside.gguf"), path.join(dir, "missing.gguf"), "/etc/passwd"]) {
            const refused = await host.handle("model.inspect", {path: outside}, client).catch((error: Error & {code: string}) => error);
            expect(refused).toMatchObject({code: "path-not-allowed"});
            expect((refused as Error).message).not.toContain("secret");
        }
        // a bad argument never reaches the engine
        await expect(host.handle("chat.send", {conversationId: id, text: "x", streamId: "c4", maxTokens: -1}, client)).rejects.toMatchObject({code: "bad-request"});
        await expect(host.handle("model.autoOffload", {path: path.join(dir, "models", "tiny.gguf"), budget: {kind: "auto"}, settings: {contextSize: 2 ** 31}, taskId: "t"}, client))
            .rejects.toMatchObject({code: "bad-request"});
    });

    it("keeps the partial reply marked as cut off when the engine dies mid-reply, then restarts with the same model", async () => {
        const {id} = await host.handle("conversations.create", {}, client);
        await host.handle("chat.send", {conversationId: id, text: "Go on", streamId: "s2", maxTokens: 2000, temperature: 0}, client);
        await waitFor("chat.delta", (payload) => payload.streamId === "s2" && payload.tokens >= 3);
        process.kill(engine.pid!, "SIGKILL");
        const error = await waitFor("chat.error", (payload) => payload.streamId === "s2");
        expect(error.error).toMatch(/engine stopped/);
        expect(host.engineState.state).toBe("crashed");
        const saved = await host.handle("conversations.get", {id}, client);
        expect(saved.messages.at(-1)).toMatchObject({role: "assistant", stopped: "crash"});
        expect(saved.messages.at(-1)!.text.length).toBeGreaterThan(0);
        await expect(host.handle("chat.send", {conversationId: id, text: "again", streamId: "s3"}, client)).rejects.toMatchObject({code: "engine-crashed"});

        const since = events.length;
        await host.handle("engine.restart", undefined, client);
        await waitFor("engine.state", (state) => state.state === "ready", since);
        expect(await host.handle("model.current", undefined, client)).not.toBeNull();
    });

    it("an engine that dies before the reply's first token leaves the error and no empty reply", async () => {
        const {id} = await host.handle("conversations.create", {}, client);
        // killed at the first word of the prompt's processing, hundreds of tokens before the reply could begin
        onEvent = (event) => {
            if (event.name === "chat.prompt" && event.payload.streamId === "early-crash") {
                onEvent = null;
                process.kill(engine.pid!, "SIGKILL");
            }
        };
        const long = Array.from({length: 150}, (_, index) => `w${index}`).join(" ");
        await host.handle("chat.send", {conversationId: id, text: long, streamId: "early-crash", maxTokens: 8, temperature: 0}, client);
        const error = await waitFor("chat.error", (payload) => payload.streamId === "early-crash");
        expect(error.error).toMatch(/^The engine stopped before the reply began\./);
        expect(events.some((event) => event.name === "chat.delta" && event.payload.streamId === "early-crash")).toBe(false);
        const saved = await host.handle("conversations.get", {id}, client);
        expect(saved.messages.map((message) => message.role)).toEqual(["user"]);

        const since = events.length;
        await host.handle("engine.restart", undefined, client);
        await waitFor("engine.state", (state) => state.state === "ready", since);
    });
});
