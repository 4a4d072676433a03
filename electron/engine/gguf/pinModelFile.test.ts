// pinModelFile against a rename over the pinned path: the pinned path keeps opening the file as it was when pinned,
// and after release nothing is left behind. Real files in a temp folder.
import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {pinModelFile} from "./pinModelFile.js";

let dir: string;
beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "tensorwise-pin-"));
});
afterEach(async () => {
    await fs.rm(dir, {recursive: true, force: true});
});

describe("pinModelFile", () => {
    it("opens the pinned file's bytes after the path was replaced by a rename, until released", async () => {
        const file = path.join(dir, "model.gguf");
        await fs.writeFile(file, "validated");
        const pinned = await pinModelFile(file);
        expect(pinned.pinned).toBe(true);
        await fs.writeFile(path.join(dir, "swap"), "HOSTILE!!");
        await fs.rename(path.join(dir, "swap"), file);
        expect(await fs.readFile(file, "utf8")).toBe("HOSTILE!!");
        expect(await fs.readFile(pinned.path, "utf8")).toBe("validated");
        await pinned.release();
        await pinned.release();
        expect(await fs.readdir(dir)).toEqual(["model.gguf"]);
    });

    it("opens the file no more once released", async () => {
        const file = path.join(dir, "model.gguf");
        await fs.writeFile(file, "validated");
        const pinned = await pinModelFile(file);
        await pinned.release();
        // on Linux the descriptor's number may already name another file of this process: never this one
        const now = await fs.readlink(pinned.path).catch((error: NodeJS.ErrnoException) => error.code);
        expect(now).not.toBe(file);
    });

    it("leaves a split model's part unpinned (llama.cpp opens the other parts by name) and says so", async () => {
        const part = path.join(dir, "model-00001-of-00002.gguf");
        await fs.writeFile(part, "part one");
        const pinned = await pinModelFile(part);
        expect(pinned).toMatchObject({path: part, pinned: false});
    });

    it("rejects a file that does not exist as open does", async () => {
        await expect(pinModelFile(path.join(dir, "missing.gguf"))).rejects.toMatchObject({code: "ENOENT"});
    });
});
