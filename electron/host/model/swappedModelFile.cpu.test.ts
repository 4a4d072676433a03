/**
 * The swap race, as it was sent: twenty loads of a model file that is atomically replaced (a rename) every
 * few milliseconds by a hostile file of the same size (head count 0, which llama.cpp aborts the process on), through
 * the host on the real engine child. Before, the engine validated the path and then handed llama.cpp the same path,
 * by then naming the other file: the engine process died. Now what was validated is what llama.cpp opens
 * (electron/engine/gguf/pinModelFile.ts): each load either loads the good file or is refused by the validator, and the
 * engine process is the same one throughout. Needs the built engine (npm run build); skipped, with the reason, without it.
 */
import {existsSync} from "node:fs";
import {mkdir, mkdtemp, readFile, rename, rm, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";
import {isolatedCacheEnv} from "../../engine/testing/isolatedCacheEnv.js";
import {makeSyntheticModel} from "../../engine/writer/makeSyntheticModel.js";
import {ConversationStore} from "../conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "../engineChild/EngineClient.js";
import {HostService} from "../HostService.js";
import {hostEventRecorder} from "../testing/hostEventRecorder.js";

const missing = requiredOrSkip("swapped model file tests", existsSync(defaultEngineEntry()) ? null : "the engine is not built; run `npm run build`");

const LOADS = 20;

/** `good` with `llama.attention.head_count` set to 0: the same size, a u32 as before. */
function withHeadCountZero(good: Buffer): Buffer {
    const key = Buffer.from("llama.attention.head_count");
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(key.length));
    const at = good.indexOf(Buffer.concat([length, key]));
    expect(at).toBeGreaterThan(0);
    const typeAt = at + 8 + key.length;
    // GGUF_TYPE_UINT32 is 4 (ggml/include/gguf.h)
    expect(good.readUInt32LE(typeAt)).toBe(4);
    const hostile = Buffer.from(good);
    hostile.writeUInt32LE(0, typeAt + 4);
    return hostile;
}

describe.skipIf(missing != null)("a model file swapped for a hostile one while it loads (real engine, tiny model)", () => {
    let dir: string;
    let engine: EngineClient;
    let host: HostService;
    const {client, waitFor} = hostEventRecorder("swap-test-client", 120_000);

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-swap-"));
        await mkdir(path.join(dir, "models"));
        engine = new EngineClient({env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "1", ...isolatedCacheEnv(path.join(dir, "cache"))}});
        host = new HostService(await ConversationStore.open(dir), engine);
        host.attach(client);
        await engine.start();
    }, 180_000);
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("loads the good file or refuses the hostile one, twenty times, and the engine process never dies", async () => {
        const target = path.join(dir, "models", "model.gguf");
        await makeSyntheticModel(target, {preset: "tiny"});
        const good = await readFile(target);
        const hostile = withHeadCountZero(good);
        expect(hostile.length).toBe(good.length);
        // the hostile file alone is refused by the validator, without the engine dying
        await writeFile(target, hostile);
        await expect(host.handle("model.load", {path: target, gpuLayers: 0, settings: {contextSize: 256}, taskId: "hostile"}, client))
            .rejects.toThrow(/head_count|head count/i);
        const pid = engine.pid;
        expect(pid).not.toBeNull();

        let swapping = true;
        let swaps = 0;
        const swapper = (async () => {
            for (let i = 0; swapping; i++) {
                // written beside the models folder (the same filesystem), then renamed over the model: atomic
                const next = path.join(dir, `next-${i % 2}.gguf`);
                await writeFile(next, i % 2 === 0 ? good : hostile);
                await rename(next, target);
                swaps++;
                await new Promise((resolve) => setTimeout(resolve, 2));
            }
        })();
        const outcomes: string[] = [];
        try {
            for (let i = 0; i < LOADS; i++) {
                outcomes.push(await host.handle("model.load", {path: target, gpuLayers: 0, settings: {contextSize: 256}, taskId: `swap-${i}`}, client)
                    .then(() => "loaded", (error: Error & {code?: string}) => `${error.code ?? "error"}: ${error.message}`));
            }
        } finally {
            swapping = false;
            await swapper;
        }
        expect(swaps).toBeGreaterThan(LOADS);
        expect(engine.state).toEqual({state: "running", pid});
        // each load read one file throughout: the good one loaded, or the hostile one refused by the validator
        for (const outcome of outcomes)
            expect(outcome).toMatch(/^loaded$|head_count|head count/i);
        // the race was run: the good file did load while the swaps went on (half the opens find it)
        expect(outcomes).toContain("loaded");
        console.log(`${swaps} swaps; ${outcomes.filter((outcome) => outcome === "loaded").length} of ${LOADS} loads loaded the good file, the rest were refused`);

        // and the engine still loads the good file and answers with it
        await writeFile(target, good);
        await host.handle("model.load", {path: target, gpuLayers: 0, settings: {contextSize: 256}, taskId: "after"}, client);
        const {id} = await host.handle("conversations.create", {title: "after the swaps"}, client);
        await host.handle("chat.send", {conversationId: id, text: "Hello", streamId: "after", maxTokens: 4, temperature: 0}, client);
        const done = await waitFor("chat.done", (payload) => payload.streamId === "after");
        expect(done.message.text.length).toBeGreaterThan(0);
        expect(engine.pid).toBe(pid);
    }, 300_000);
});
