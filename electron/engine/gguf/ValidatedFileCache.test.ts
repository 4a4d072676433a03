import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, beforeEach, describe, expect, it} from "vitest";
import {buildTinyGguf, kv} from "./testing/tinyGguf.js";
import {tinyModelSpec} from "./testing/tinyModelSpec.js";
import {validateGgufFile} from "./validateGguf.js";
import {ValidatedFileCache, type Validated} from "./ValidatedFileCache.js";
import {pinModelFile} from "./pinModelFile.js";

// A model swapped for a hostile one of the same size, with its mtime set back: it must be validated again.
const good = buildTinyGguf(tinyModelSpec()).bytes;
// head_count 0: llama.cpp fails a GGML_ASSERT on it (hostileModelImages.ts); a u32 like the good 4, so the same size
const hostile = buildTinyGguf(tinyModelSpec({hparams: {"attention.head_count": kv.u32("llama.attention.head_count", 0)}})).bytes;

let dir: string;
let file: string;
let validations: number;
const validate = async (modelPath: string): Promise<Validated<string>> => {
    validations++;
    const checked = await validateGgufFile(modelPath);
    return {value: `${checked.tensors.length} tensors`, headerBytes: Number(checked.dataOffset)};
};

beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "tensorwise-vcache-"));
    file = path.join(dir, "model.gguf");
    await fs.writeFile(file, good);
    validations = 0;
});
afterEach(async () => {
    await fs.rm(dir, {recursive: true, force: true});
});

/** A whole second, so the time set on a file reads back exactly (as `touch -d` sets it). */
const SET_TIME = 1_700_000_000;

describe("ValidatedFileCache", () => {
    it("the two images differ only where the validator must notice, not in size", () => {
        expect(hostile.length).toBe(good.length);
        expect(hostile.equals(good)).toBe(false);
    });

    it("validates an unchanged file once", async () => {
        const cache = new ValidatedFileCache<string>();
        expect(await cache.get(file, validate)).toBe("20 tensors");
        expect(await cache.get(file, validate)).toBe("20 tensors");
        expect(validations).toBe(1);
    });

    it("validates again a file rewritten in place with the same size and mtime", async () => {
        const cache = new ValidatedFileCache<string>();
        await fs.utimes(file, SET_TIME, SET_TIME);
        await cache.get(file, validate);
        const before = await fs.stat(file);
        await fs.writeFile(file, hostile);
        await fs.utimes(file, SET_TIME, SET_TIME);
        const after = await fs.stat(file);
        expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino]);
        await expect(cache.get(file, validate)).rejects.toMatchObject({code: "bad-hparam"});
    });

    it("validates again a file replaced by a rename with the same size and mtime", async () => {
        const cache = new ValidatedFileCache<string>();
        await fs.utimes(file, SET_TIME, SET_TIME);
        await cache.get(file, validate);
        const swap = path.join(dir, "swap.gguf");
        await fs.writeFile(swap, hostile);
        await fs.utimes(swap, SET_TIME, SET_TIME);
        await fs.rename(swap, file);
        await expect(cache.get(file, validate)).rejects.toMatchObject({code: "bad-hparam"});
    });

    it("keeps a result under the model's path when each load reads it pinned: validated once, a swap validated again", async () => {
        const cache = new ValidatedFileCache<string>();
        for (let load = 0; load < 3; load++) {
            const pinned = await pinModelFile(file);
            expect(await cache.get(pinned.path, validate, file)).toBe("20 tensors");
            await pinned.release();
        }
        expect(validations).toBe(1);
        const swap = path.join(dir, "swap.gguf");
        await fs.writeFile(swap, hostile);
        await fs.rename(swap, file);
        const pinned = await pinModelFile(file);
        await expect(cache.get(pinned.path, validate, file)).rejects.toMatchObject({code: "bad-hparam"});
        await pinned.release();
    });

    it("after a failed validation, the file made good again is validated and accepted", async () => {
        const cache = new ValidatedFileCache<string>();
        await fs.writeFile(file, hostile);
        await expect(cache.get(file, validate)).rejects.toMatchObject({code: "bad-hparam"});
        await fs.writeFile(file, good);
        expect(await cache.get(file, validate)).toBe("20 tensors");
        expect(validations).toBe(2);
    });
});
