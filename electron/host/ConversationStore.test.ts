import {spawn} from "node:child_process";
import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {ConversationStore} from "./ConversationStore.js";

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

    it("loses at most the unfinished tail when the writing process is SIGKILLed mid-checkpoint", async () => {
        const root = path.resolve(import.meta.dirname, "../..");
        const child = spawn(path.join(root, "node_modules/.bin/vite-node"),
            [path.join(import.meta.dirname, "testing/checkpointForever.ts"), dataDir], {cwd: root, stdio: ["ignore", "pipe", "inherit"]});
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
