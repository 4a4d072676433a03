/**
 * Conversations with tool calls as files: a reply's rounds with their calls (done with text and an image, denied,
 * failed, one left waiting when the app closed) survive a JSON export and import exactly, the Markdown export shows
 * each call, a file written before tools existed still imports, and hand-edited or hostile tool fields are refused in
 * one sentence with the conversations folder unchanged.
 */
import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import type {ChatMessage, Conversation, RequestArg, RequestName, RequestResult} from "../../contract/ipc.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {checkRequest} from "../checkRequest.js";
import type {HostClient, HostContext} from "../HostContext.js";
import {chatTurnOf} from "../tools/toolCallText.js";
import {ConversationStore} from "./ConversationStore.js";
import {conversationRequests} from "./conversationRequests.js";

let dataDir: string;
let store: ConversationStore;
beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "tensorwise-tool-file-"));
    store = await ConversationStore.open(dataDir);
});
afterEach(async () => {
    await fs.rm(dataDir, {recursive: true, force: true});
});

type Name = "conversations.export" | "conversations.import" | "conversations.get";
async function request<N extends Name>(name: N, arg: unknown): Promise<RequestResult<N>> {
    const host = {store, streams: new Map(), isReplying: () => false} as unknown as HostContext;
    const client: HostClient = {id: "test", emit: () => {}};
    const handler = conversationRequests(host)[name] as (arg: RequestArg<N>, client: HostClient) => Promise<RequestResult<N>>;
    return await handler(checkRequest(name as RequestName, arg) as RequestArg<N>, client);
}

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** A chat whose reply called tools in two rounds, then answered. */
async function toolChat(): Promise<Conversation> {
    const conversation = await store.create("Files", {maxTokens: 64, tools: {on: [{server: "files", tool: "list_allowed_directories"}], choice: "required"}});
    const messages: ChatMessage[] = [
        {id: "u1", role: "user", text: "Which folders can you read?", createdAt: 1},
        {id: "r1", role: "assistant", text: "", createdAt: 2, toolTokens: 312, prompt: {tokens: 400, reused: 0}, stopReason: "done", toolCalls: [
            {id: "call_1", server: "files", tool: "list_allowed_directories", arguments: "{}", state: "done", approval: "user", ms: 12,
                result: {isError: false, parts: [{type: "text", text: "Allowed directories:\n/tmp/x"}, {type: "image", mimeType: "image/png", data: PNG},
                    {type: "note", text: "A link to the resource file:///tmp/x/a.txt."}], structured: null, capped: null}},
            {id: "call_2", server: "files", tool: "list_allowed_directories", arguments: "{}", state: "denied"},
            {id: "call_3", server: "", tool: "rm_rf", arguments: "{}", state: "failed", error: "the model called \"rm_rf\", which is not one of this chat's tools."}
        ]},
        {id: "r2", role: "assistant", text: "Let me check again.", createdAt: 3, toolCalls: [
            {id: "call_4", server: "files", tool: "list_allowed_directories", arguments: "{}", state: "pending"}
        ]},
        {id: "r3", role: "assistant", text: "You may read /tmp/x.", createdAt: 4, toolTokens: 312}
    ];
    for (const message of messages)
        await store.append(conversation.id, message);
    return await store.get(conversation.id);
}

async function folderContents(): Promise<Record<string, string>> {
    const dir = path.join(dataDir, "conversations");
    const entries = await fs.readdir(dir, {recursive: true, withFileTypes: true});
    const files = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
    return Object.fromEntries(await Promise.all(files.map(async (file) => [path.relative(dir, file), await fs.readFile(file, "utf8")])));
}

describe("conversations with tool calls as files", () => {
    it("a JSON export imports as the same rounds, calls, results and tool settings", async () => {
        const original = await toolChat();
        const {text} = await request("conversations.export", {id: original.id, format: "json"});
        const imported = await request("conversations.import", {text});
        const {id: _a, updatedAt: _b, ...restored} = await request("conversations.get", {id: imported.id});
        const {id: _c, updatedAt: _d, ...expected} = original;
        expect(restored).toEqual(expected);
        // the model reads the same words of every call after the import: a call left waiting was not run
        expect(restored.messages.map(chatTurnOf)).toEqual(original.messages.map(chatTurnOf));
        expect(chatTurnOf(restored.messages[2]!).toolCalls![0]!.result).toBe("This call was not run: the reply ended before it did.");
        expect(chatTurnOf(restored.messages[1]!).toolCalls!.map((call) => call.result)).toEqual([
            "Allowed directories:\n/tmp/x\n[An image (image/png, 70 bytes) the user can see; this model reads no images.]\n[A link to the resource file:///tmp/x/a.txt.]",
            "The user denied this call: it did not run.",
            "The call failed: the model called \"rm_rf\", which is not one of this chat's tools."
        ]);
    });

    it("the Markdown export shows each call with its arguments and what it returned", async () => {
        const original = await toolChat();
        const {text} = await request("conversations.export", {id: original.id, format: "markdown"});
        expect(text).toContain("### Tool call: list_allowed_directories (files), done\n\n```\n{}\n```\n\n```\nAllowed directories:\n/tmp/x");
        expect(text).toContain("### Tool call: list_allowed_directories (files), denied");
        expect(text).toContain("### Tool call: rm_rf, failed");
    });

    it("a conversation file written before tools existed still imports", async () => {
        const old = {format: "tensorwise.conversation", version: 1, exportedAt: 1, conversation: {
            id: "old", title: "Before tools", updatedAt: 1, messageCount: 2, settings: {temperature: 0.5},
            messages: [{id: "u", role: "user", text: "hi", createdAt: 1}, {id: "a", role: "assistant", text: "hello", createdAt: 2, stopReason: "done"}]
        }};
        const imported = await request("conversations.import", {text: JSON.stringify(old)});
        expect(imported.messages).toEqual(old.conversation.messages);
        expect(imported.settings).toEqual({temperature: 0.5});
    });

    type File = {conversation: {messages: Record<string, unknown>[]; settings: Record<string, unknown>}};
    const call = (file: File, message = 1, index = 0) => (file.conversation.messages[message]!.toolCalls as Record<string, unknown>[])[index]!;
    const result = (file: File) => call(file).result as Record<string, unknown> & {parts: Record<string, unknown>[]};
    const hostile: {name: string; change: (file: File) => void; message: RegExp}[] = [
        {name: "an image as HTML", change: (file) => { result(file).parts[1]!.mimeType = "text/html"; }, message: /part 2: "mimeType" must be one of image\/png, image\/jpeg/},
        {name: "an SVG image", change: (file) => { result(file).parts[1]!.mimeType = "image/svg+xml"; }, message: /"mimeType" must be one of/},
        {name: "image data that is a URL", change: (file) => { result(file).parts[1]!.data = "javascript:alert(1)"; }, message: /"data" must be base64/},
        {name: "a part of another kind", change: (file) => { result(file).parts[0]!.type = "html"; }, message: /"type" must be text, image or note/},
        {name: "text over the kept limit", change: (file) => { result(file).parts[0]!.text = "x".repeat(65_537); }, message: /"text" is longer than 65536 characters/},
        {name: "a result on a denied call", change: (file) => { call(file, 1, 1).result = result(file); }, message: /only a call that is "done" has a "result"/},
        {name: "an unknown call state", change: (file) => { call(file).state = "approved"; }, message: /"state" must be one of pending, running, done, failed, denied, stopped/},
        {name: "an unknown call field", change: (file) => { call(file).autoRun = true; }, message: /tool call 1 has unknown fields: "autoRun"/},
        {name: "two calls with one id", change: (file) => { call(file, 1, 1).id = "call_1"; }, message: /two tool calls have one id/},
        {name: "tool calls on a user message", change: (file) => { file.conversation.messages[0]!.toolCalls = []; }, message: /message 1: tool calls belong to replies only/},
        {name: "a server name with a slash", change: (file) => { call(file).server = "../files"; }, message: /"server" is not a server's name/},
        {name: "129 calls", change: (file) => { file.conversation.messages[1]!.toolCalls = Array.from({length: 129}, (_, i) => ({...call(file, 1, 1), id: `c${i}`})); },
            message: /"toolCalls" must be a list of at most 128 calls/},
        {name: "five images", change: (file) => { result(file).parts = Array.from({length: 5}, () => ({...result(file).parts[1]!})); }, message: /more than 4 images/},
        {name: "a tool choice that is not one", change: (file) => { (file.conversation.settings.tools as Record<string, unknown>).choice = "always"; },
            message: /"settings\.tools\.choice" must be one of auto, required, none/},
        {name: "negative tool tokens", change: (file) => { file.conversation.messages[1]!.toolTokens = -5; }, message: /"toolTokens" must be a number of at least 0/}
    ];
    for (const {name, change, message} of hostile)
        it(`refuses ${name} in one sentence and changes nothing`, async () => {
            const original = await toolChat();
            const file = JSON.parse((await request("conversations.export", {id: original.id, format: "json"})).text) as File;
            change(file);
            await store.flush();
            const before = await folderContents();
            const refusal = await request("conversations.import", {text: JSON.stringify(file)}).then(() => null, (error: unknown) => error);
            expect(refusal).toBeInstanceOf(TensorwiseError);
            expect((refusal as TensorwiseError).message).toMatch(/^This file cannot be imported: [^\n]+\.$/);
            expect((refusal as TensorwiseError).message).toMatch(message);
            await store.flush();
            expect(await folderContents()).toEqual(before);
        });
});
