import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {ConversationStore} from "../conversations/ConversationStore.js";
import {EngineClient} from "../engineChild/EngineClient.js";
import type {HostClient} from "../HostContext.js";
import {HostService} from "../HostService.js";

// Replies as a hostile or hasty client starts them. No model is needed: every check here comes before the engine
// (whose client is real but never started, so a request that gets that far is refused with "no-model").
let dataDir: string;
let host: HostService;
let store: ConversationStore;
const client: HostClient = {id: "c", emit: () => {}};

beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "tensorwise-chat-"));
    store = await ConversationStore.open(dataDir);
    host = new HostService(store, new EngineClient());
});
afterEach(async () => {
    await host.dispose();
    await fs.rm(dataDir, {recursive: true, force: true});
});

describe("chat requests", () => {
    it("two sends racing for one conversation: the second is refused at once, by name, and nothing interleaves", async () => {
        const {id} = await store.create();
        const results = await Promise.allSettled([
            host.handle("chat.send", {conversationId: id, text: "first", streamId: "s1"}, client),
            host.handle("chat.send", {conversationId: id, text: "second", streamId: "s2"}, client)
        ]);
        const reasons = results.map((result) => result.status === "rejected" ? result.reason as {code: string; message: string} : null);
        expect(reasons[1]).toMatchObject({code: "busy", message: expect.stringContaining("a reply is already being written in this conversation")});
        // the first went on to the engine check; without a model it stops there, and gives its slot back
        expect(reasons[0]).toMatchObject({code: "no-model"});
        await expect(host.handle("chat.send", {conversationId: id, text: "third", streamId: "s3"}, client)).rejects.toMatchObject({code: "no-model"});
        expect((await store.get(id)).messages).toEqual([]);
    });

    it("regenerate and edit racing a send for one conversation are refused the same way", async () => {
        const {id} = await store.create();
        const results = await Promise.allSettled([
            host.handle("chat.send", {conversationId: id, text: "first", streamId: "s1"}, client),
            host.handle("chat.regenerate", {conversationId: id, streamId: "s2"}, client),
            host.handle("chat.edit", {conversationId: id, messageId: "m", text: "x", streamId: "s3"}, client)
        ]);
        expect(results.slice(1).map((result) => result.status === "rejected" && (result.reason as {code: string}).code)).toEqual(["busy", "busy"]);
    });

    it("one stream id sent for two conversations at once: the second is refused", async () => {
        const a = (await store.create()).id;
        const b = (await store.create()).id;
        const results = await Promise.allSettled([
            host.handle("chat.send", {conversationId: a, text: "first", streamId: "same"}, client),
            host.handle("chat.send", {conversationId: b, text: "second", streamId: "same"}, client)
        ]);
        expect(results[1]).toMatchObject({status: "rejected", reason: {code: "bad-request", message: "stream same is already running"}});
    });

    it("hand-edited settings that name another conversation: the send is refused with the reason, neither conversation changes", async () => {
        const victim = await store.create("Victim");
        const edited = await store.create("Edited");
        await store.flush();
        const file = path.join(dataDir, "conversations", `${edited.id}.json`);
        const json = JSON.parse(await fs.readFile(file, "utf8")) as Record<string, unknown>;
        await fs.writeFile(file, JSON.stringify({...json, settings: {conversationId: victim.id, streamId: "hijack", temperature: 0}}));
        await expect(host.handle("chat.send", {conversationId: edited.id, text: "hello", streamId: "s1"}, client))
            .rejects.toMatchObject({code: "damaged-conversation", message: expect.stringContaining('"settings" has unknown fields: "conversationId", "streamId"')});
        expect((await store.get(victim.id)).messages).toEqual([]);
        expect(await host.handle("conversations.notices", null, client)).toEqual([
            {code: "damaged-conversation", message: expect.stringContaining(`${edited.id}.json could not be read`)}
        ]);
    });
});
