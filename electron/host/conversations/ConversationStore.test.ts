import {spawn} from "node:child_process";
import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {type AtomicWriteHandle, type AtomicWriteIo} from "../storage/writeFileAtomic.js";
import {ConversationStore} from "./ConversationStore.js";

/** One step of an atomic write, as {@link recordingIo} names it. */
type Step = "open" | "write" | "sync" | "close" | "rename" | "rm";

/** Thrown by {@link recordingIo} at the step where the simulated process dies. */
class Killed extends Error {}

/**
 * Real file system calls, recorded as "step target" lines (target: "temp", "dir" or the file's base name). With
 * `killAt`, the process "dies" at that step the `nth` time it is reached: a write is cut after half its bytes, the
 * step throws, and so does every call after it (a dead process does not clean up).
 */
function recordingIo(dir: string, killAt?: {step: Step; nth?: number}): {io: AtomicWriteIo; calls: string[]} {
    const calls: string[] = [];
    let dead = false;
    let seen = 0;
    const name = (file: string): string => file === dir ? "dir" : file.endsWith(".tmp") ? "temp" : path.basename(file);
    const step = async (kind: Step, target: string, partial?: () => Promise<void>): Promise<void> => {
        if (dead) throw new Killed("the process is dead");
        if (kind === killAt?.step && ++seen === (killAt.nth ?? 1)) {
            dead = true;
            await partial?.();
            throw new Killed(`killed at ${kind} ${target}`);
        }
        calls.push(`${kind} ${target}`);
    };
    const io: AtomicWriteIo = {
        async open(file, flags, mode) {
            await step("open", name(file));
            const handle = await fs.open(file, flags, mode);
            const wrapped: AtomicWriteHandle = {
                async writeFile(data) {
                    await step("write", name(file), () => handle.writeFile(data.slice(0, Math.floor(data.length / 2)), "utf8"));
                    await handle.writeFile(data, "utf8");
                },
                async sync() {
                    await step("sync", name(file));
                    await handle.sync();
                },
                async close() {
                    // the kernel closes a dead process's files; nothing else happens
                    if (dead) return await handle.close();
                    await step("close", name(file));
                    await handle.close();
                }
            };
            return wrapped;
        },
        async rename(from, to) {
            await step("rename", `${name(from)} → ${name(to)}`);
            await fs.rename(from, to);
        },
        async rm(file, options) {
            await step("rm", name(file));
            await fs.rm(file, options);
        }
    };
    return {io, calls};
}

let dataDir: string;

beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "tensorwise-store-"));
});
afterEach(async () => {
    await fs.rm(dataDir, {recursive: true, force: true});
});

describe("ConversationStore", () => {
    it("creates, appends, renames, lists newest first and survives a reopen", async () => {
        const store = await ConversationStore.open(dataDir);
        const first = await store.create();
        const second = await store.create("Second");
        await store.append(first.id, {id: "m1", role: "user", text: "What is   a KV cache?\nExplain.", createdAt: 1});
        await store.append(first.id, {id: "m2", role: "assistant", text: "It stores keys and values.", createdAt: 2});
        await store.rename(second.id, "Renamed");

        const reopened = await ConversationStore.open(dataDir);
        const list = reopened.list();
        expect(list.map((entry) => entry.title)).toEqual(["Renamed", "What is a KV cache? Explain."]);
        const loaded = await reopened.get(first.id);
        expect(loaded.messages.map((message) => message.text)).toEqual(["What is   a KV cache?\nExplain.", "It stores keys and values."]);
        expect(loaded.messageCount).toBe(2);
    });

    it("replaces a checkpointed reply in place and drops the last assistant message for a regenerate", async () => {
        const store = await ConversationStore.open(dataDir);
        const {id} = await store.create();
        await store.append(id, {id: "u", role: "user", text: "hi", createdAt: 1});
        await store.upsert(id, {id: "a", role: "assistant", text: "Hel", createdAt: 2, stopped: "crash"});
        await store.upsert(id, {id: "a", role: "assistant", text: "Hello there", createdAt: 2});
        expect((await store.get(id)).messages).toEqual([
            {id: "u", role: "user", text: "hi", createdAt: 1},
            {id: "a", role: "assistant", text: "Hello there", createdAt: 2}
        ]);
        await store.dropLastAssistant(id);
        expect((await store.get(id)).messages.map((message) => message.id)).toEqual(["u"]);
    });

    it("keeps each conversation's settings with it, deletes one message, and cuts before an edited message", async () => {
        const store = await ConversationStore.open(dataDir);
        const {id} = await store.create(undefined, {systemPrompt: "Be brief.", temperature: 0});
        for (const [n, role] of (["user", "assistant", "user", "assistant"] as const).entries())
            await store.append(id, {id: `m${n}`, role, text: `t${n}`, createdAt: n});
        await store.setSettings(id, {systemPrompt: "Answer in French.", topK: 20, stopStrings: ["###"]});
        await store.deleteMessage(id, "m1");

        const reopened = await ConversationStore.open(dataDir);
        const saved = await reopened.get(id);
        expect(saved.settings).toEqual({systemPrompt: "Answer in French.", topK: 20, stopStrings: ["###"]});
        expect(saved.messages.map((message) => message.id)).toEqual(["m0", "m2", "m3"]);
        expect(reopened.list()[0]!.messageCount).toBe(3);

        await expect(reopened.deleteMessage(id, "m1")).rejects.toMatchObject({code: "not-found"});
        // an edit cuts at a user message only; the settings stay
        await expect(reopened.truncateBefore(id, "m3")).rejects.toMatchObject({code: "not-found"});
        const cut = await reopened.truncateBefore(id, "m2");
        expect(cut.messages.map((message) => message.id)).toEqual(["m0"]);
        expect(cut.settings?.systemPrompt).toBe("Answer in French.");
    });

    it("keeps concurrent checkpoints of one conversation in order", async () => {
        const store = await ConversationStore.open(dataDir);
        const {id} = await store.create();
        const writes = [];
        for (let i = 1; i <= 20; i++)
            writes.push(store.upsert(id, {id: "a", role: "assistant", text: "x".repeat(i), createdAt: 1}));
        await Promise.all(writes);
        expect((await store.get(id)).messages[0]?.text).toBe("x".repeat(20));
    });

    it("ignores and removes a temp file left by a crash mid-write, and rebuilds a torn index", async () => {
        const store = await ConversationStore.open(dataDir);
        const {id} = await store.create("Kept");
        await store.append(id, {id: "u", role: "user", text: "before the crash", createdAt: 1});
        const dir = path.join(dataDir, "conversations");
        // what a kill between write and rename leaves: a half-written temp file next to the intact original
        await fs.writeFile(path.join(dir, `${id}.json.123.abcd.tmp`), '{"id":"' + id + '","title":"Ke');
        // and an index cut short (cannot happen with atomic writes, but the store must not trust it)
        await fs.writeFile(path.join(dir, "index.json"), '{"version":1,"conversations":[{"id"');

        const reopened = await ConversationStore.open(dataDir);
        expect(reopened.list().map((entry) => entry.title)).toEqual(["Kept"]);
        expect((await reopened.get(id)).messages[0]?.text).toBe("before the crash");
        expect((await fs.readdir(dir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
        expect(JSON.parse(await fs.readFile(path.join(dir, "index.json"), "utf8")).conversations).toHaveLength(1);
    });

    it("writes the temp file, fsyncs it, renames it over the file, then fsyncs the directory", async () => {
        const store = await ConversationStore.open(dataDir);
        const {id} = await store.create();
        const dir = path.join(dataDir, "conversations");
        const {io, calls} = recordingIo(dir);
        const recorded = await ConversationStore.open(dataDir, io);
        calls.length = 0;
        await recorded.append(id, {id: "u", role: "user", text: "hi", createdAt: 1});
        const atomic = (file: string): string[] =>
            ["open temp", "write temp", "sync temp", "close temp", `rename temp → ${file}`, "open dir", "sync dir", "close dir"];
        // the conversation, then the index: each durable before the call returns
        expect(calls).toEqual([...atomic(`${id}.json`), ...atomic("index.json")]);
    });

    for (const [step, nth, kept] of [
        ["write", 1, "old"], ["sync", 1, "old"], ["rename", 1, "old"],
        // the directory fsync (the second sync): the rename has happened, so the new content is what is on disk
        ["sync", 2, "new"]
    ] as const) {
        it(`a kill at ${step} #${nth} of a write leaves the ${kept} conversation whole, and the store opens cleanly`, async () => {
            const store = await ConversationStore.open(dataDir);
            const {id} = await store.create("Kept");
            await store.append(id, {id: "u1", role: "user", text: "before the kill", createdAt: 1});
            const dir = path.join(dataDir, "conversations");

            const dying = await ConversationStore.open(dataDir, recordingIo(dir, {step, nth}).io);
            await expect(dying.append(id, {id: "u2", role: "user", text: "during the kill", createdAt: 2})).rejects.toThrow(Killed);

            const reopened = await ConversationStore.open(dataDir);
            expect(reopened.list().map((entry) => [entry.title, entry.messageCount]))
                .toEqual([["Kept", kept === "old" ? 1 : 2]]);
            expect((await reopened.get(id)).messages.map((message) => message.text))
                .toEqual(kept === "old" ? ["before the kill"] : ["before the kill", "during the kill"]);
            expect((await fs.readdir(dir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
        });
    }

    it("loses at most the unfinished tail when the writing process is SIGKILLed mid-checkpoint", async () => {
        const root = path.resolve(import.meta.dirname, "../../..");
        const child = spawn(path.join(root, "node_modules/.bin/vite-node"),
            [path.join(import.meta.dirname, "../testing/checkpointForever.ts"), dataDir], {cwd: root, stdio: ["ignore", "pipe", "inherit"]});
        await new Promise<void>((resolve, reject) => {
            child.stdout.on("data", (chunk: Buffer) => {
                if (chunk.toString().includes("writing"))
                    resolve();
            });
            child.on("exit", (code) => reject(new Error(`helper exited early with ${code}`)));
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        child.kill("SIGKILL");
        await new Promise((resolve) => child.once("exit", resolve));

        const store = await ConversationStore.open(dataDir);
        const [summary] = store.list();
        expect(summary?.title).toBe("hello");
        const conversation = await store.get(summary!.id);
        expect(conversation.messages[0]).toMatchObject({role: "user", text: "hello"});
        const reply = conversation.messages[1];
        expect(reply).toMatchObject({role: "assistant", stopped: "crash"});
        expect(reply!.text).toMatch(/^(token\d+ )+$/);
        expect(reply!.text.split(" ").length).toBeGreaterThan(5);
    }, 60_000);

    it("rejects ids that could escape its directory", async () => {
        const store = await ConversationStore.open(dataDir);
        await expect(store.get("../../etc/passwd")).rejects.toMatchObject({code: "bad-request"});
    });
});
