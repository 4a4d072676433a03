import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {CONVERSATION_IMPORT_MAX_CHARS} from "../../contract/conversationFile.js";
import type {ChatMessage, Conversation, RequestArg, RequestName, RequestResult} from "../../contract/ipc.js";
import {TEXT_LIMITS} from "../../contract/limits.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {checkRequest} from "../checkRequest.js";
import {ConversationStore} from "./ConversationStore.js";
import type {HostContext} from "../HostContext.js";
import type {HostClient} from "../HostContext.js";
import {conversationRequests} from "./conversationRequests.js";
import {quotedMarkdown} from "./quotedMarkdown.js";

// Export, import and search through the requests' own checks and handlers, on a real store in a temp folder.
let dataDir: string;
let store: ConversationStore;

beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "tensorwise-export-"));
    store = await ConversationStore.open(dataDir);
});
afterEach(async () => {
    await fs.rm(dataDir, {recursive: true, force: true});
});

type ConversationRequest = "conversations.export" | "conversations.import" | "conversations.search" | "conversations.get" | "conversations.list";

/** A request as HostService.handle runs it: checkRequest, then the conversation handler. */
async function request<Name extends ConversationRequest>(name: Name, arg: unknown): Promise<RequestResult<Name>> {
    // the conversation handlers use only the store (and, for delete, the running replies: none here)
    const host = {store, streams: new Map(), isReplying: () => false} as unknown as HostContext;
    const client: HostClient = {id: "test", emit: () => {}};
    const handler = conversationRequests(host)[name] as (arg: RequestArg<Name>, client: HostClient) => Promise<RequestResult<Name>>;
    return await handler(checkRequest(name as RequestName, arg) as RequestArg<Name>, client);
}

/**
 * A conversation using every stored field: settings, a reply with timing, prompt, context, restore and its model, a
 * stopped reply whose prompt left out earlier messages.
 */
async function richConversation(): Promise<Conversation> {
    const conversation = await store.create("Rust lifetimes", {
        systemPrompt: "You answer in one paragraph.", temperature: 0.2, topK: 40, topP: 0.9, minP: 0.05, repeatPenalty: 1.1,
        seed: 7, maxTokens: 300, stopStrings: ["</end>", "\n\nUser:"], contextOverflow: "rollingWindow"
    });
    const messages: ChatMessage[] = [
        {id: "u1", role: "user", text: "What does 'a mean in fn f<'a>(x: &'a str)?", createdAt: 1_700_000_000_000},
        {
            id: "a1", role: "assistant", text: "It names a **lifetime**: the borrow lives at least as long as 'a.\n\n```rust\nfn f<'a>() {}\n```",
            createdAt: 1_700_000_001_000, model: "tiny-llama.Q4_K_M.gguf", stopReason: "done",
            timing: {promptTokens: 31, generatedTokens: 40, ttftMs: 120.5, tpotMs: 21.25, totalMs: 949, predicted: {ttftMs: 110, tpotMs: 20}},
            prompt: {tokens: 31, reused: 0}, context: {usedTokens: 71, size: 2048}, restore: {path: "resident", ms: 0}
        },
        {id: "u2", role: "user", text: "And with two references?", createdAt: 1_700_000_002_000},
        {id: "a2", role: "assistant", text: "Both need", createdAt: 1_700_000_003_000, model: "tiny-llama.Q4_K_M.gguf", stopped: "user", stopReason: "stopped", leftOutMessages: 2}
    ];
    for (const message of messages)
        await store.append(conversation.id, message);
    return await store.get(conversation.id);
}

/** The JSON export of `id`, parsed, so a test can change one thing in it. */
async function exportedJson(id: string): Promise<Record<string, unknown> & {conversation: Record<string, unknown> & {messages: Record<string, unknown>[]}}> {
    return JSON.parse((await request("conversations.export", {id, format: "json"})).text) as never;
}

/** Every file under the conversations folder with its content: what "nothing changed" is checked against. */
async function folderContents(): Promise<Record<string, string>> {
    const dir = path.join(dataDir, "conversations");
    const entries = await fs.readdir(dir, {recursive: true, withFileTypes: true});
    const files = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
    return Object.fromEntries(await Promise.all(files.map(async (file) => [path.relative(dir, file), await fs.readFile(file, "utf8")])));
}

describe("conversation export and import", () => {
    it("imports its own JSON export as a new conversation equal to the original in every stored field", async () => {
        const original = await richConversation();
        const exported = await request("conversations.export", {id: original.id, format: "json"});
        expect(exported.fileName).toBe("Rust lifetimes.json");
        expect(exported.mimeType).toBe("application/json");
        const file = JSON.parse(exported.text) as {format: string; version: number; conversation: Conversation};
        expect(file.format).toBe("tensorwise.conversation");
        expect(file.version).toBe(1);
        expect(file.conversation).toEqual(original);

        const imported = await request("conversations.import", {text: exported.text});
        expect(imported.id).not.toBe(original.id);
        const reread = await request("conversations.get", {id: imported.id});
        const {id: _newId, updatedAt: _newTime, ...restored} = reread;
        const {id: _oldId, updatedAt: _oldTime, ...expected} = original;
        expect(restored).toEqual(expected);
        // the original stays as it was, and the import is listed first
        expect(await request("conversations.get", {id: original.id})).toEqual(original);
        expect((await request("conversations.list", null)).map((summary) => summary.id)).toEqual([imported.id, original.id]);
        // and it survives a restart (read back through the disk check)
        const reopened = await ConversationStore.open(dataDir);
        expect((await reopened.get(imported.id)).messages).toEqual(original.messages);
    });

    it("exports Markdown a person can read: title, model, system prompt, each turn under its role, a stopped reply said so", async () => {
        const original = await richConversation();
        const exported = await request("conversations.export", {id: original.id, format: "markdown"});
        expect(exported.fileName).toBe("Rust lifetimes.md");
        expect(exported.mimeType).toMatch(/^text\/markdown/);
        const text = exported.text;
        expect(text.startsWith("# Rust lifetimes\n")).toBe(true);
        expect(text).toContain("- Model: tiny-llama.Q4_K_M.gguf\n");
        expect(text).toContain("## System prompt\n\nYou answer in one paragraph.\n");
        const headings = text.split("\n").filter((line) => line.startsWith("## "));
        expect(headings).toEqual([
            "## System prompt", "## User", "## Assistant (tiny-llama.Q4_K_M.gguf)", "## User",
            "## Assistant (tiny-llama.Q4_K_M.gguf, stopped by the user)"
        ]);
        // each turn as written, escaped so it cannot run HTML or forge a heading (quotedMarkdown.test.ts renders it)
        for (const message of original.messages)
            expect(text).toContain(`\n\n${quotedMarkdown(message.text)}\n`);
        expect(text).toContain("fn f&lt;'a>(x: &amp;'a str)?");
    });

    it("names the file from the title without path separators or control characters", async () => {
        const conversation = await store.create("../../etc/passwd\u0000\u202e?*:<>|");
        const {fileName} = await request("conversations.export", {id: conversation.id, format: "markdown"});
        expect(fileName).toBe("etc-passwd.md");
        const untitled = await store.create("///");
        expect((await request("conversations.export", {id: untitled.id, format: "json"})).fileName).toBe("conversation.json");
        await expect(request("conversations.export", {id: conversation.id, format: "pdf"})).rejects.toThrow('"format" must be one of markdown, json');
    });

    /** Hostile or hand-edited files: each refused with one sentence, and the conversations folder byte-for-byte unchanged. */
    const hostile: {name: string; make: (file: Awaited<ReturnType<typeof exportedJson>>) => string; message: string | RegExp}[] = [
        {name: "not JSON", make: () => "{\"format\": \"tensorwise.conversation\", ", message: /^This file cannot be imported: it is not JSON \(/},
        {name: "the Markdown export", make: () => "# Rust lifetimes\n\n## User\n\nhi\n", message: "This file cannot be imported: it is a Markdown export, which is for reading; import the JSON export of the conversation."},
        {name: "a JSON list", make: () => "[]", message: 'This file cannot be imported: it is JSON but not a conversation export (an object with "format", "version" and "conversation").'},
        {name: "another program's JSON", make: (file) => JSON.stringify({...file, format: "chatgpt"}), message: /it is not a tensorwise conversation export/},
        {name: "a newer version", make: (file) => JSON.stringify({...file, version: 2}), message: "This file cannot be imported: it is version 2 of the conversation file, and this app reads version 1."},
        {name: "the version as text", make: (file) => JSON.stringify({...file, version: "1"}), message: /it is version "1" of the conversation file/},
        {name: "no version", make: ({version: _v, ...file}) => JSON.stringify(file), message: /it is version \(none\)/},
        {name: "an unknown top-level field", make: (file) => JSON.stringify({...file, attachments: []}), message: /the file has unknown fields: "attachments"/},
        {name: "a __proto__ key", make: (file) => JSON.stringify(file).replace("{", "{\"__proto__\": {\"polluted\": true}, "), message: /unknown fields: "__proto__"/},
        {name: "no conversation", make: (file) => JSON.stringify({...file, conversation: null}), message: /"conversation" must be an object/},
        {name: "an unknown message field", make: (file) => { file.conversation.messages[0]!.html = "<script>"; return JSON.stringify(file); }, message: /message 1 has unknown fields: "html"/},
        {name: "a message text that is a number", make: (file) => { file.conversation.messages[0]!.text = 42; return JSON.stringify(file); }, message: /message 1: "text" must be a string/},
        {name: "a system role", make: (file) => { file.conversation.messages[0]!.role = "system"; return JSON.stringify(file); }, message: /message 1: "role" must be one of user, assistant/},
        {name: "a negative time", make: (file) => { file.conversation.messages[1]!.createdAt = -1; return JSON.stringify(file); }, message: /message 2: "createdAt" must be a number of at least 0/},
        {name: "a timing given as text", make: (file) => { (file.conversation.messages[1]!.timing as Record<string, unknown>).ttftMs = "120"; return JSON.stringify(file); }, message: /timing\."ttftMs" must be a number/},
        {name: "a user message one character over the limit", make: (file) => { file.conversation.messages[0]!.text = "x".repeat(TEXT_LIMITS.message + 1); return JSON.stringify(file); }, message: new RegExp(`"text" must be a string of at most ${TEXT_LIMITS.message} characters`)},
        {name: "a title one character over the limit", make: (file) => { file.conversation.title = "t".repeat(TEXT_LIMITS.title + 1); return JSON.stringify(file); }, message: /"title" is longer than 200 characters/},
        {name: "two messages with one id", make: (file) => { file.conversation.messages[2]!.id = "u1"; return JSON.stringify(file); }, message: /message 3: "id" "u1" is used by an earlier message/},
        {name: "messages that are not a list", make: (file) => { file.conversation.messages = {0: file.conversation.messages[0]} as never; return JSON.stringify(file); }, message: /"messages" must be a list/},
        {name: "a temperature out of range", make: (file) => { (file.conversation.settings as Record<string, unknown>).temperature = 11; return JSON.stringify(file); }, message: /"temperature": The temperature must be a number from 0 to 10; got 11/},
        {name: "too many stop strings", make: (file) => { (file.conversation.settings as Record<string, unknown>).stopStrings = Array.from({length: 17}, (_, i) => `s${i}`); return JSON.stringify(file); }, message: /"stopStrings" must be a list of at most 16 strings/},
        {name: "a settings field this app does not know", make: (file) => { (file.conversation.settings as Record<string, unknown>).contextShift = true; return JSON.stringify(file); }, message: /"settings" has unknown fields: "contextShift"/},
        ...["drop", "Stop", "truncate_middle", 1, ["stop"]].map((policy) => ({
            name: `a context overflow policy ${JSON.stringify(policy)}`,
            make: (file: Awaited<ReturnType<typeof exportedJson>>) => { (file.conversation.settings as Record<string, unknown>).contextOverflow = policy; return JSON.stringify(file); },
            message: /"contextOverflow" must be one of truncateMiddle, rollingWindow, stop\.$/
        })),
        // the last reply (message 4) had 2 earlier messages that could be left out: its question is never left out
        ...[0, -1, 2.5, "2", 3, 1e300, Number.MAX_SAFE_INTEGER + 2].map((count) => ({
            name: `a left-out count of ${JSON.stringify(count)}`,
            make: (file: Awaited<ReturnType<typeof exportedJson>>) => { file.conversation.messages[3]!.leftOutMessages = count; return JSON.stringify(file); },
            message: /message 4: "leftOutMessages" must be a whole number from 1 to the number of messages before its question/
        })),
        {name: "a left-out count on a user message", make: (file) => { file.conversation.messages[2]!.leftOutMessages = 1; return JSON.stringify(file); }, message: /message 3: "leftOutMessages" belongs to replies only/},
        {name: "a model name that is not a string", make: (file) => { file.conversation.messages[1]!.model = {path: "/etc"}; return JSON.stringify(file); }, message: /"model" must be a non-empty string/}
    ];
    for (const {name, make, message} of hostile)
        it(`refuses ${name} in one sentence and changes nothing`, async () => {
            const original = await richConversation();
            const text = make(await exportedJson(original.id));
            await store.flush();
            const before = await folderContents();
            const listed = store.list();
            const refusal = await request("conversations.import", {text}).then(() => null, (error: unknown) => error);
            expect(refusal).toBeInstanceOf(TensorwiseError);
            expect((refusal as TensorwiseError).code).toBe("bad-request");
            const sentence = (refusal as TensorwiseError).message;
            if (typeof message === "string")
                expect(sentence).toBe(message);
            else
                expect(sentence).toMatch(message);
            expect(sentence).toMatch(/^This file cannot be imported: [^\n]+\.$/);
            await store.flush();
            expect(await folderContents()).toEqual(before);
            expect(store.list()).toEqual(listed);
            expect(store.notices()).toEqual([]);
            expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        });

    it("refuses a file longer than the import limit before reading it, and the right length at the limit is read", async () => {
        await expect(request("conversations.import", {text: " ".repeat(CONVERSATION_IMPORT_MAX_CHARS + 1)}))
            .rejects.toThrow(`"text" is longer than ${CONVERSATION_IMPORT_MAX_CHARS} characters`);
        const original = await richConversation();
        const text = JSON.stringify(await exportedJson(original.id));
        const padded = text + " ".repeat(CONVERSATION_IMPORT_MAX_CHARS - text.length);
        expect(padded.length).toBe(CONVERSATION_IMPORT_MAX_CHARS);
        expect((await request("conversations.import", {text: padded})).messages).toEqual(original.messages);
    });
});

describe("conversation search", () => {
    async function chat(title: string, texts: string[]): Promise<string> {
        const {id} = await store.create(title);
        for (const [index, text] of texts.entries())
            await store.append(id, {id: `m${index}`, role: index % 2 === 0 ? "user" : "assistant", text, createdAt: index});
        return id;
    }

    it("finds conversations by title or message text, ignoring case, newest first, with the match in its context", async () => {
        const borrow = await chat("Borrow checker", ["why does this not compile", "Because the BORROW of x outlives the loop."]);
        const recipes = await chat("Recipes", ["pancakes for four", "Mix flour, eggs and milk; rest the batter."]);
        const loops = await chat("Loops", ["a for loop in bash", "Use for f in *.txt; do …; done — the borrowed idea from C."]);
        const hits = await request("conversations.search", {query: "BoRRoW"});
        expect(hits.map((hit) => hit.id)).toEqual([loops, borrow]);
        expect(hits[0]!.match).toEqual({
            in: "message", messageId: "m1", role: "assistant", before: "…do …; done — the ", match: "borrow", after: "ed idea from C."
        });
        expect(hits[1]!.match).toEqual({in: "title"});
        expect((await request("conversations.search", {query: "batter"})).map((hit) => hit.id)).toEqual([recipes]);
        expect(await request("conversations.search", {query: "nothing like this"})).toEqual([]);
    });

    it("matches the query as text, not as a pattern", async () => {
        await chat("Dots", ["abc"]);
        const literal = await chat("Literal", ["the file *.txt"]);
        expect(await request("conversations.search", {query: "a.c"})).toEqual([]);
        expect((await request("conversations.search", {query: "*.TXT"})).map((hit) => hit.id)).toEqual([literal]);
    });

    it("follows every change: new messages, renames, deletes, imports, and a restart", async () => {
        const id = await chat("First", ["hello"]);
        await store.append(id, {id: "later", role: "assistant", text: "a zebra appears", createdAt: 9});
        expect((await request("conversations.search", {query: "zebra"})).map((hit) => hit.id)).toEqual([id]);
        await store.rename(id, "Giraffe notes");
        expect((await request("conversations.search", {query: "giraffe"}))[0]?.match).toEqual({in: "title"});
        const {text} = await request("conversations.export", {id, format: "json"});
        const imported = await request("conversations.import", {text});
        expect((await request("conversations.search", {query: "zebra"})).map((hit) => hit.id)).toEqual([imported.id, id]);
        await store.delete(id);
        expect((await request("conversations.search", {query: "zebra"})).map((hit) => hit.id)).toEqual([imported.id]);
        const reopened = await ConversationStore.open(dataDir);
        expect(reopened.search("ZEBRA").map((hit) => hit.id)).toEqual([imported.id]);
    });

    it("refuses an empty search and one longer than 200 characters", async () => {
        await expect(request("conversations.search", {query: "  "})).rejects.toThrow("the search is empty");
        await expect(request("conversations.search", {query: "q".repeat(201)})).rejects.toThrow('"query" is longer than 200 characters');
        await expect(request("conversations.search", {query: 5})).rejects.toThrow('"query" must be a non-empty string');
    });
});
