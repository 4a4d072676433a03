import {mkdtemp, readdir, readFile, rm, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import type {ModelCard} from "../../contract/ipc.js";
import {LIBRARY_FILE, MAX_RECENT_MODELS, ModelLibrary} from "./ModelLibrary.js";

function card(dir: string, name: string): ModelCard {
    return {
        path: path.join(dir, `${name}.gguf`), fileName: `${name}.gguf`, fileBytes: 1234, architecture: "llama", name,
        parameterCount: 1, layerCount: 2, contextLength: 1024, embeddingLength: 64, vocabularySize: 300, quantMix: [], tensors: []
    };
}

describe("ModelLibrary", () => {
    let dir: string;
    let file: string;
    beforeEach(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-library-"));
        file = path.join(dir, LIBRARY_FILE);
    });
    afterEach(async () => {
        await rm(dir, {recursive: true, force: true});
    });

    it("keeps a model another process added while the app runs (tensorwise pull), instead of writing over it", async () => {
        const app = new ModelLibrary(file);
        await app.opened(card(dir, "a"));
        expect((await app.list()).map((model) => model.fileName)).toEqual(["a.gguf"]);
        // the CLI, another process, adds a pulled model to the same file
        await new Promise((resolve) => setTimeout(resolve, 20));
        await new ModelLibrary(file).opened(card(dir, "pulled"));
        expect((await app.list()).map((model) => model.fileName)).toEqual(["pulled.gguf", "a.gguf"]);
        await app.opened(card(dir, "b"));
        expect((await new ModelLibrary(file).list()).map((model) => model.fileName)).toEqual(["b.gguf", "pulled.gguf", "a.gguf"]);
    });

    it("keeps opened and loaded models across a restart, newest first, with how each was last loaded", async () => {
        const library = new ModelLibrary(file);
        expect(await library.list()).toEqual([]);
        const a = card(dir, "a");
        const b = card(dir, "b");
        await writeFile(a.path, "x");
        await library.opened(a);
        await library.loaded(b, {name: "autoOffload", budget: {kind: "percent", percent: 50}, settings: {contextSize: 1024}, strategy: "oato"});
        await library.opened(a);

        const reopened = new ModelLibrary(file);
        const models = await reopened.list();
        expect(models.map((model) => model.fileName)).toEqual(["a.gguf", "b.gguf"]);
        expect(models[0]).toMatchObject({loadedAt: null, lastLoad: null, missing: false});
        // b's file was never written: the library says so instead of offering a load that cannot work
        expect(models[1]).toMatchObject({missing: true, lastLoad: {name: "autoOffload", strategy: "oato", budget: {kind: "percent", percent: 50}}});
        expect(await reopened.lastLoad(b.path)).toEqual({name: "autoOffload", budget: {kind: "percent", percent: 50}, settings: {contextSize: 1024}, strategy: "oato"});
        // opening a loaded model again keeps how it was loaded
        await reopened.opened(b);
        expect((await new ModelLibrary(file).list())[0]).toMatchObject({fileName: "b.gguf", lastLoad: {name: "autoOffload"}});

        await reopened.forget(a.path);
        expect((await new ModelLibrary(file).list()).map((model) => model.fileName)).toEqual(["b.gguf"]);
    });

    it(`keeps the ${MAX_RECENT_MODELS} most recent models`, async () => {
        const library = new ModelLibrary(file);
        for (let index = 0; index < MAX_RECENT_MODELS + 3; index++)
            await library.opened(card(dir, `m${index}`));
        const names = (await new ModelLibrary(file).list()).map((model) => model.name);
        expect(names).toHaveLength(MAX_RECENT_MODELS);
        expect(names[0]).toBe(`m${MAX_RECENT_MODELS + 2}`);
        expect(names).not.toContain("m0");
    });

    it("a corrupt library file is moved aside, not overwritten, and the library starts empty", async () => {
        await writeFile(file, "{\"version\": 1, \"models\": [{\"path\": 3}");
        const library = new ModelLibrary(file);
        expect(await library.list()).toEqual([]);
        await library.opened(card(dir, "fresh"));
        const names = await readdir(dir);
        const aside = names.filter((name) => name.startsWith("recent-models.unreadable-"));
        expect(aside).toHaveLength(1);
        expect(await readFile(path.join(dir, aside[0]!), "utf8")).toBe("{\"version\": 1, \"models\": [{\"path\": 3}");
        expect((await new ModelLibrary(file).list()).map((model) => model.name)).toEqual(["fresh"]);
        // writes are atomic: no temp file is left behind
        expect(names.filter((name) => name.endsWith(".tmp"))).toEqual([]);
    });

    it("concurrent changes all land, in order", async () => {
        const library = new ModelLibrary(file);
        await Promise.all(["x", "y", "z"].map((name) => library.opened(card(dir, name))));
        expect((await new ModelLibrary(file).list()).map((model) => model.name)).toEqual(["z", "y", "x"]);
    });
});
