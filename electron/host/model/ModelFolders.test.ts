// The library's view of the models folders through the host: the app's own models folder and a --model-dir, listed,
// kept current while the app runs, and opened in place. Opening needs the built engine child.
import {existsSync} from "node:fs";
import {copyFile, mkdir, mkdtemp, readdir, rename, rm, symlink, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {FolderModels} from "../../contract/ipc.js";
import {makeSyntheticModel} from "../../engine/writer/makeSyntheticModel.js";
import {requiredOrSkip} from "../../engine/testing/requiredOrSkip.js";
import {ConversationStore} from "../conversations/ConversationStore.js";
import {defaultEngineEntry, EngineClient} from "../engineChild/EngineClient.js";
import type {HostClient} from "../HostContext.js";
import {HostService} from "../HostService.js";
import {isolatedCacheEnv} from "../../engine/testing/isolatedCacheEnv.js";

const missing = requiredOrSkip("the models folders through the host", existsSync(defaultEngineEntry()) ? null : "the engine is not built; run `npm run build`");

describe.skipIf(missing != null)("the library lists the models folders", () => {
    let dir: string;
    let engine: EngineClient;
    let host: HostService;
    const pushed: FolderModels[] = [];
    const client: HostClient = {id: "test-client", emit: (name, payload) => name === "library.files" && pushed.push(payload as FolderModels)};
    const own = (): string => path.join(dir, "data", "models");
    const extra = (): string => path.join(dir, "extra");
    const outside = (): string => path.join(dir, "outside");
    const tiny = (): string => path.join(dir, "tiny.gguf");
    const names = (models: FolderModels): string[] => models.models.map((model) => model.fileName);

    /** Waits until the host pushed a listing that `accept`s (fs.watch, then the settle delay). */
    async function pushedUntil(accept: (models: FolderModels) => boolean): Promise<FolderModels> {
        const deadline = Date.now() + 10_000;
        while (Date.now() < deadline) {
            const latest = pushed.at(-1);
            if (latest != null && accept(latest))
                return latest;
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`no matching library.files event; last: ${JSON.stringify(pushed.at(-1))}`);
    }

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-folders-"));
        await mkdir(extra());
        await mkdir(outside());
        await makeSyntheticModel(tiny(), {preset: "tiny", layers: 2, embd: 64, ff: 128, type: "f16"});
        engine = new EngineClient({env: {...process.env, TENSORWISE_GPU: "cpu", TENSORWISE_THREADS: "2", ...isolatedCacheEnv(path.join(dir, "cache"))}});
        await mkdir(path.join(dir, "data"));
        host = new HostService(await ConversationStore.open(path.join(dir, "data", "conversations")), engine, {}, {
            modelAccess: {folders: [own(), extra()]}
        });
        host.attach(client);
        await engine.start();
    }, 120_000);
    afterAll(async () => {
        await host?.dispose();
        await engine?.stop();
        await rm(dir, {recursive: true, force: true});
    });

    it("lists each .gguf with its size, leaves out partial downloads, and shows later additions and removals", async () => {
        await mkdir(own(), {recursive: true});
        await copyFile(tiny(), path.join(own(), "a.gguf"));
        await copyFile(tiny(), path.join(extra(), "b.GGUF"));
        await writeFile(path.join(extra(), "notes.txt"), "not a model");
        await mkdir(path.join(own(), ".pull"), {recursive: true});
        await writeFile(path.join(own(), ".pull", "half.gguf"), "partial");
        const first = await host.handle("library.files", undefined, client);
        expect(first.notices).toEqual([]);
        expect(first.models).toEqual([
            {path: path.join(own(), "a.gguf"), fileName: "a.gguf", folder: own(), fileBytes: expect.any(Number), lastUsedAt: null},
            {path: path.join(extra(), "b.GGUF"), fileName: "b.GGUF", folder: extra(), fileBytes: expect.any(Number), lastUsedAt: null}
        ]);
        expect(first.models[0]!.fileBytes).toBeGreaterThan(1000);

        // added while the app runs, in either folder
        await copyFile(tiny(), path.join(extra(), "c.gguf"));
        expect(names(await pushedUntil((models) => names(models).includes("c.gguf")))).toEqual(["a.gguf", "b.GGUF", "c.gguf"]);
        // removed, and renamed
        await rm(path.join(own(), "a.gguf"));
        await rename(path.join(extra(), "b.GGUF"), path.join(extra(), "renamed.gguf"));
        expect(names(await pushedUntil((models) => !names(models).includes("a.gguf") && names(models).includes("renamed.gguf"))))
            .toEqual(["c.gguf", "renamed.gguf"]);
    });

    it("opens a listed model in place (no copy), and then shows when it was last used", async () => {
        const listed = (await host.handle("library.files", undefined, client)).models.find((model) => model.fileName === "c.gguf")!;
        const before = {own: await readdir(own()), extra: await readdir(extra())};
        const card = await host.handle("model.inspect", {path: listed.path}, client);
        expect(card.path).toBe(listed.path);
        expect({own: await readdir(own()), extra: await readdir(extra())}).toEqual(before);
        const after = (await host.handle("library.files", undefined, client)).models.find((model) => model.fileName === "c.gguf")!;
        expect(after.lastUsedAt).toEqual(expect.any(Number));
        expect(Math.abs(after.lastUsedAt! - Date.now())).toBeLessThan(60_000);
    });

    it("does not offer a symbolic link that leads outside the models folders, nor an unreadable or non-model file", async () => {
        await copyFile(tiny(), path.join(outside(), "secret.gguf"));
        await symlink(path.join(outside(), "secret.gguf"), path.join(extra(), "link-out.gguf"));
        // right name, right place, but a folder; and one a link to a file inside (allowed: it stays inside)
        await mkdir(path.join(extra(), "folder.gguf"));
        await symlink(path.join(extra(), "c.gguf"), path.join(extra(), "link-in.gguf"));
        const listing = await host.handle("library.files", undefined, client);
        expect(names(listing)).not.toContain("link-out.gguf");
        expect(names(listing)).not.toContain("folder.gguf");
        expect(names(listing)).toContain("link-in.gguf");
        await expect(host.handle("model.inspect", {path: path.join(extra(), "link-out.gguf")}, client)).rejects.toMatchObject({code: "path-not-allowed"});
        if (process.getuid?.() !== 0) {
            await copyFile(tiny(), path.join(extra(), "locked.gguf"), 0);
            const {chmod} = await import("node:fs/promises");
            await chmod(path.join(extra(), "locked.gguf"), 0o000);
            expect(names(await host.handle("library.files", undefined, client))).not.toContain("locked.gguf");
            await rm(path.join(extra(), "locked.gguf"));
        }
        await rm(path.join(extra(), "link-out.gguf"));
        await rm(path.join(extra(), "link-in.gguf"));
        await rm(path.join(extra(), "folder.gguf"), {recursive: true});
    });

    it("lists names with odd characters exactly as they are, and they open", async () => {
        const odd = ["<img src=x onerror=alert(1)>.gguf", "line\nbreak.gguf", "ünï cödé 模型.gguf", " leading space.gguf"];
        for (const name of odd)
            await copyFile(tiny(), path.join(extra(), name));
        const listing = await host.handle("library.files", undefined, client);
        for (const name of odd) {
            const model = listing.models.find((entry) => entry.fileName === name);
            expect(model?.path).toBe(path.join(extra(), name));
            expect((await host.handle("model.inspect", {path: model!.path}, client)).fileName).toBe(name);
            await rm(model!.path);
        }
    });

    it("says so in a sentence when a --model-dir disappears, and lists it again once it is back", async () => {
        await rm(extra(), {recursive: true, force: true});
        const gone = await pushedUntil((models) => models.notices.length > 0);
        expect(gone.notices).toEqual([expect.stringMatching(new RegExp(`^The models folder ${extra().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is not there`))]);
        expect(gone.models.every((model) => model.folder === own())).toBe(true);
        await mkdir(extra());
        await copyFile(tiny(), path.join(extra(), "back.gguf"));
        const back = await pushedUntil((models) => names(models).includes("back.gguf"));
        expect(back.notices).toEqual([]);
    });
});
