import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {type AtomicWriteIo} from "../storage/writeFileAtomic.js";
import {ConversationStore, DAMAGED_DIR} from "./ConversationStore.js";

// Conversation files as input from outside: hand-edited, cut short, or written on a disk that has filled up.
let dataDir: string;
let dir: string;

beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "tensorwise-store-"));
    dir = path.join(dataDir, "conversations");
});
afterEach(async () => {
    await fs.rm(dataDir, {recursive: true, force: true});
});

/** A store with one good conversation ("Good", one message) and the file of a second one replaced by `text`. */
async function withSecondFile(text: (id: string) => string): Promise<{good: string; bad: string}> {
    const store = await ConversationStore.open(dataDir);
    const good = (await store.create("Good")).id;
    await store.append(good, {id: "m1", role: "user", text: "kept", createdAt: 1});
    const bad = (await store.create("Edited")).id;
    await store.append(bad, {id: "m2", role: "user", text: "hello", createdAt: 2});
    await store.flush();
    await fs.writeFile(path.join(dir, `${bad}.json`), text(bad));
    return {good, bad};
}

async function damagedFiles(): Promise<string[]> {
    return await fs.readdir(path.join(dir, DAMAGED_DIR)).catch(() => []);
}

/** A conversation file as the app writes it, with `change` applied to its parsed JSON. */
async function edited(id: string, change: (conversation: Record<string, unknown>) => void): Promise<string> {
    const conversation = JSON.parse(await fs.readFile(path.join(dir, `${id}.json`), "utf8")) as Record<string, unknown>;
    change(conversation);
    return JSON.stringify(conversation);
}

describe("ConversationStore with files it did not write", () => {
    it("moves a file that is not JSON into damaged/, unchanged, and tells the user why and where", async () => {
        const {good, bad} = await withSecondFile(() => "{\"id\": \"cut off");
        const store = await ConversationStore.open(dataDir);
        expect(store.list().map((summary) => summary.id)).toEqual([good]);
        const [moved] = await damagedFiles();
        expect(moved).toMatch(new RegExp(`^${bad}\\..*\\.json$`));
        expect(await fs.readFile(path.join(dir, DAMAGED_DIR, moved!), "utf8")).toBe("{\"id\": \"cut off");
        const [notice] = store.notices();
        expect(notice?.code).toBe("damaged-conversation");
        expect(notice?.message).toContain(`${bad}.json could not be read (it is not valid JSON`);
        expect(notice?.message).toContain(path.join(dir, DAMAGED_DIR, moved!));
        expect(notice?.message).not.toContain("request body");
        expect((await store.get(good)).messages[0]?.text).toBe("kept");
    });

    it("moves a conversation whose message has no text aside instead of handing it to the window", async () => {
        const {good, bad} = await withSecondFile(() => "");
        await fs.writeFile(path.join(dir, `${bad}.json`), JSON.stringify({
            id: bad, title: "Edited", updatedAt: 2, messageCount: 1, messages: [{id: "m2", role: "user", createdAt: 2}]
        }));
        const store = await ConversationStore.open(dataDir);
        expect(store.list().map((summary) => summary.id)).toEqual([good]);
        expect(store.notices().map((notice) => notice.message).join("\n")).toMatch(/message 1: "text" must be a string/);
        await expect(store.get(bad)).rejects.toMatchObject({code: "not-found"});
        expect(await damagedFiles()).toHaveLength(1);
    });

    for (const [what, change, reason] of [
        ["settings naming another conversation", (c: Record<string, unknown>) => {
            c.settings = {conversationId: "00000000-0000-0000-0000-000000000000"};
        }, /"settings" has unknown fields: "conversationId"/],
        ["a temperature out of range", (c: Record<string, unknown>) => {
            c.settings = {temperature: 1e9};
        }, /"temperature"/],
        ["a role that is neither user nor assistant", (c: Record<string, unknown>) => {
            c.messages = [{id: "m", role: "system", text: "x", createdAt: 1}];
        }, /"role" must be one of user, assistant/],
        ["an id that is not its file's", (c: Record<string, unknown>) => {
            c.id = "another";
        }, /not its file's name/],
        ["messages that are not a list", (c: Record<string, unknown>) => {
            c.messages = {length: 1};
        }, /"messages" must be a list/],
        ["a timing with a string for a number", (c: Record<string, unknown>) => {
            c.messages = [{id: "m", role: "assistant", text: "x", createdAt: 1,
                timing: {promptTokens: 1, generatedTokens: 1, ttftMs: "fast", tpotMs: null, totalMs: 1}}];
        }, /timing\."ttftMs" must be a number/],
        ...([
            [{kind: "lookahead", drafted: 4, accepted: 2}, /speculative\."kind" must be one of ngram, draft, mtp/],
            [{kind: "ngram", drafted: 4, accepted: 5}, /no more accepted than drafted/],
            [{kind: "ngram", drafted: 2.5, accepted: 1}, /whole draft tokens/],
            [{kind: "ngram", drafted: -1, accepted: 0}, /speculative\."drafted" must be a number/],
            [{kind: "ngram", drafted: 4, accepted: 1, note: "x"}, /"speculative" has unknown fields/],
            ["ngram", /"speculative"/]
        ] as const).map(([speculative, reason]) => [`a reply's speculation ${JSON.stringify(speculative)}`, (c: Record<string, unknown>) => {
            c.messages = [{id: "m", role: "assistant", text: "x", createdAt: 1, speculative}];
        }, reason] as const)
    ] as const) {
        it(`checks a file read from disk like a request: ${what}`, async () => {
            const store0 = await ConversationStore.open(dataDir);
            const id = (await store0.create("Edited")).id;
            await fs.writeFile(path.join(dir, `${id}.json`), await edited(id, change));
            const store = await ConversationStore.open(dataDir);
            expect(store.list()).toEqual([]);
            expect(store.notices()[0]?.message).toMatch(reason);
            expect(await damagedFiles()).toHaveLength(1);
        });
    }

    it("a file damaged while the app runs: get answers with the reason and moves it aside", async () => {
        const store = await ConversationStore.open(dataDir);
        const {id} = await store.create("Later");
        await store.flush();
        await fs.writeFile(path.join(dir, `${id}.json`), "not json at all");
        await expect(store.get(id)).rejects.toMatchObject({code: "damaged-conversation", message: expect.stringMatching(/not valid JSON/)});
        expect(store.list()).toEqual([]);
        expect(await damagedFiles()).toHaveLength(1);
        expect(store.notices()).toHaveLength(1);
    });

    it("writes every file readable by its owner only, in a folder only its owner can open", async () => {
        const store = await ConversationStore.open(dataDir);
        const {id} = await store.create("Private");
        await store.append(id, {id: "m", role: "user", text: "secret", createdAt: 1});
        expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
        for (const name of [`${id}.json`, "index.json"])
            expect((await fs.stat(path.join(dir, name))).mode & 0o777, name).toBe(0o600);
    });
});

/** `node:fs`, except that every new file fails with `code` (a full or read-only disk). */
function failingWrites(code: string): AtomicWriteIo {
    return {
        open: async (file, flags, mode) => {
            if (flags === "w")
                throw Object.assign(new Error(`${code}: simulated`), {code});
            return await fs.open(file, flags, mode);
        },
        rename: (from, to) => fs.rename(from, to),
        rm: (file, options) => fs.rm(file, options)
    };
}

describe("ConversationStore on a disk it cannot write", () => {
    for (const [code, expected, sentence] of [
        ["ENOSPC", "disk-full", /is full \(ENOSPC\): chats can't be saved/],
        ["EROFS", "not-writable", /is read-only \(EROFS\): chats can be read but not saved/]
    ] as const)
        it(`opens with an index out of step (${code}), says why nothing is saved, and refuses writes with that sentence`, async () => {
            const store = await ConversationStore.open(dataDir);
            const {id} = await store.create("Before");
            await store.append(id, {id: "m", role: "user", text: "kept", createdAt: 1});
            await store.flush();
            await fs.rm(path.join(dir, "index.json"));

            const full = await ConversationStore.open(dataDir, failingWrites(code));
            expect(full.list().map((summary) => summary.title)).toEqual(["Before"]);
            expect((await full.get(id)).messages[0]?.text).toBe("kept");
            expect(full.notices()).toEqual([{code: expected, message: expect.stringMatching(sentence)}]);
            await expect(full.append(id, {id: "m2", role: "user", text: "lost?", createdAt: 2}))
                .rejects.toMatchObject({code: expected, message: expect.stringMatching(sentence)});
            // nothing already saved is lost
            expect((await (await ConversationStore.open(dataDir)).get(id)).messages.map((message) => message.text)).toEqual(["kept"]);
        });
});
