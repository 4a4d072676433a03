import {mkdir, mkdtemp, rm, symlink, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {ModelAccess} from "./ModelAccess.js";

describe("ModelAccess: which model files a client may open", () => {
    let dir: string;
    let models: string;

    beforeAll(async () => {
        dir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-access-"));
        models = path.join(dir, "models");
        await mkdir(models);
        await writeFile(path.join(models, "ok.gguf"), "GGUF");
        await writeFile(path.join(dir, "secret.gguf"), "secret");
        await symlink(path.join(dir, "secret.gguf"), path.join(models, "escape.gguf"));
    });
    afterAll(async () => {
        await rm(dir, {recursive: true, force: true});
    });

    const refusal = async (access: ModelAccess, target: string) =>
        await access.check(target).then(() => null, (error: Error & {code: string}) => ({code: error.code, message: error.message}));

    it("opens models inside its folders and refuses the rest alike, whether they exist or not", async () => {
        const access = new ModelAccess({folders: [models]});
        expect(await access.check(path.join(models, "ok.gguf"))).toBe(path.join(models, "ok.gguf"));
        const existing = await refusal(access, path.join(dir, "secret.gguf"));
        const missing = await refusal(access, path.join(dir, "missing.gguf"));
        expect(existing).toMatchObject({code: "path-not-allowed"});
        expect(missing).toEqual(existing);
        expect(await refusal(access, "/etc/passwd")).toMatchObject({code: "path-not-allowed"});
        expect(await refusal(access, `${models}/../secret.gguf`)).toMatchObject({code: "path-not-allowed"});
        // a symbolic link inside the folder must not lead out of it
        expect(await refusal(access, path.join(models, "escape.gguf"))).toMatchObject({code: "path-not-allowed"});
        expect(await refusal(access, path.join(models, "gone.gguf"))).toMatchObject({code: "not-found"});
        expect(await refusal(access, "relative.gguf")).toMatchObject({code: "bad-path"});
    });

    it("opens a file the user picked in a dialog, and anything with anyPath", async () => {
        const access = new ModelAccess({folders: [models]});
        access.approve(path.join(dir, "secret.gguf"));
        expect(await access.check(path.join(dir, "secret.gguf"))).toBe(path.join(dir, "secret.gguf"));
        const open = new ModelAccess({folders: [models], anyPath: true});
        expect(await open.check(path.join(dir, "secret.gguf"))).toBe(path.join(dir, "secret.gguf"));
    });
});
