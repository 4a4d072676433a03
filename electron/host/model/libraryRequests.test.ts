import {existsSync} from "node:fs";
import {mkdir, mkdtemp, rm, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";
import {makeSyntheticModel} from "../../engine/writer/makeSyntheticModel.js";
import {ConversationStore} from "../conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "../engineChild/EngineClient.js";
import type {HostClient} from "../HostContext.js";
import {HostService} from "../HostService.js";

const missing = requiredOrSkip("model library tests", existsSync(defaultEngineEntry()) ? null : "the engine is not built; run `npm run build`");

async function rejection(promise: Promise<unknown>): Promise<TensorwiseError> {
    const error = await promise.then(() => null, (reason: unknown) => reason);
    expect(error).toBeInstanceOf(TensorwiseError);
    return error as TensorwiseError;
}

// Needs-a-model tier: the real engine child and a synthetic tiny model.
describe.skipIf(missing != null)("the model library and rejected files, with the real engine", () => {
    let dir: string;
    let models: string;
    let engine: EngineClient;
    let host: HostService;
    const client: HostClient = {id: "library-test", emit: () => {}};

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-library-host-"));
        models = path.join(dir, "models");
        await mkdir(models);
        await makeSyntheticModel(path.join(models, "tiny.gguf"), {preset: "tiny", name: "tiny"});
        engine = new EngineClient({env: {...process.env, TENSORWISE_THREADS: "2"}});
        host = new HostService(await ConversationStore.open(dir), engine);
        host.attach(client);
        await engine.start();
        await host.handle("model.inspect", {path: path.join(models, "tiny.gguf")}, client);
        await host.handle("model.autoOffload", {
            path: path.join(models, "tiny.gguf"), budget: {kind: "auto"}, settings: {contextSize: 1024}, strategy: "cpu", taskId: "first"
        }, client);
    });
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("a malformed upload is deleted from the models folder; the model that was loaded stays loaded", async () => {
        const upload = path.join(models, "broken.gguf");
        await writeFile(upload, Buffer.concat([Buffer.from("hell"), Buffer.alloc(60)]));
        host.noteUpload(upload);
        const error = await rejection(host.handle("model.inspect", {path: upload}, client));
        expect(error.code).toBe("bad-magic");
        expect(error.message).toContain("The uploaded copy was deleted");
        expect(existsSync(upload)).toBe(false);
        expect(host.engineState).toEqual({state: "ready"});
        expect((await host.handle("model.current", undefined, client))?.card.fileName).toBe("tiny.gguf");
    });

    it("a malformed file the user put there is kept; a load refused for it leaves the loaded model in place", async () => {
        const own = path.join(models, "own-broken.gguf");
        await writeFile(own, Buffer.concat([Buffer.from("GGUF"), Buffer.from([3, 0, 0, 0]), Buffer.alloc(24, 0xff)]));
        const error = await rejection(host.handle("model.autoOffload", {path: own, budget: {kind: "auto"}, settings: {}, taskId: "bad"}, client));
        expect(error.message).not.toContain("deleted");
        expect(existsSync(own)).toBe(true);
        // the host still knows the engine's model, so chat and the cards keep working
        expect(host.engineState).toEqual({state: "ready"});
        expect((await host.handle("library.list", undefined, client)).map((model) => model.fileName)).not.toContain("own-broken.gguf");
    });

    it("lists the loaded model with how it was loaded; Unload then Load from the library brings it back the same way", async () => {
        const before = await host.handle("library.list", undefined, client);
        expect(before[0]).toMatchObject({fileName: "tiny.gguf", name: "tiny", lastLoad: {name: "autoOffload", strategy: "cpu", settings: {contextSize: 1024}}});
        await host.handle("model.unload", undefined, client);
        expect(host.engineState).toEqual({state: "idle"});
        const loaded = await host.handle("library.load", {path: path.join(models, "tiny.gguf"), taskId: "again"}, client);
        expect(loaded.placement.strategy).toBe("cpu");
        expect(loaded.settings.contextSize).toBe(1024);
        expect(host.engineState).toEqual({state: "ready"});
        // the library survives a new host over the same data folder
        const reopened = new HostService(await ConversationStore.open(dir), engine);
        expect((await reopened.handle("library.list", undefined, client))[0]?.loadedAt).toBeGreaterThan(0);
        await reopened.dispose();
        expect((await host.handle("library.forget", {path: path.join(models, "tiny.gguf")}, client))).toEqual([]);
    });
});
