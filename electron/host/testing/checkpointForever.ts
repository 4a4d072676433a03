/**
 * Test helper process: appends to one conversation and checkpoints a growing assistant reply as fast as it can,
 * forever, printing "writing" once started. ConversationStore.test.ts SIGKILLs it mid-write and reopens the store.
 */
import {ConversationStore} from "../conversations/ConversationStore.js";

const dataDir = process.argv[2];
if (dataDir == null)
    throw new Error("usage: checkpointForever <dataDir>");
const store = await ConversationStore.open(dataDir);
const conversation = await store.create();
await store.append(conversation.id, {id: "u1", role: "user", text: "hello", createdAt: Date.now()});
let text = "";
for (let i = 0; ; i++) {
    text += `token${i} `;
    await store.upsert(conversation.id, {id: "a1", role: "assistant", text, createdAt: Date.now(), stopped: "crash"});
    if (i === 5)
        process.stdout.write("writing\n");
}
