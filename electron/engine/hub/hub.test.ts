import {createHash} from "node:crypto";
import {mkdtemp, readFile, rm, stat, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {makeSyntheticModel} from "../writer/makeSyntheticModel.js";
import {downloadFile} from "./downloadFile.js";
import {fetchRemoteHeader} from "./fetchRemoteHeader.js";
import {groupGgufQuants, pickQuant, quantName} from "./ggufQuants.js";
import {parseTreePage, resolveUrl, type RepoFile} from "./listRepoFiles.js";
import {startLocalHub, type LocalHub} from "./testing/startLocalHub.js";

const sha = "a".repeat(64);
const entry = (over: Record<string, unknown>): Record<string, unknown> => ({type: "file", path: "m-Q4_K_M.gguf", size: 10, lfs: {oid: sha, size: 10}, ...over});

describe("the tree API's answer, from the attacker's side", () => {
    it("accepts the hub's shape and skips directories", () => {
        expect(parseTreePage(JSON.stringify([{type: "directory", path: "sub"}, entry({}), entry({path: "README.md", lfs: undefined})]), "x"))
            .toEqual([{path: "m-Q4_K_M.gguf", bytes: 10, sha256: sha}, {path: "README.md", bytes: 10, sha256: null}]);
    });

    it("refuses every malformed field with a sentence naming the entry", () => {
        const refused: [unknown, RegExp][] = [
            ["not json", /is not JSON/],
            [{files: []}, /not a list of files/],
            [[null], /entry 0 .* is not an object/],
            [[entry({type: "symlink"})], /neither a file nor a directory/],
            [[entry({path: "../escape.gguf"})], /not a plain relative path/],
            [[entry({path: "a/./b.gguf"})], /not a plain relative path/],
            [[entry({path: "/etc/passwd"})], /not a plain relative path/],
            [[entry({path: "a\\..\\b.gguf"})], /not a plain relative path/],
            [[entry({path: "x\u202Efuug.gguf"})], /not a plain relative path/],
            [[entry({path: 7})], /not a plain relative path/],
            [[entry({size: -1})], /no valid size/],
            [[entry({size: 1.5})], /no valid size/],
            [[entry({size: "10"})], /no valid size/],
            [[entry({size: 2 ** 60})], /no valid size/],
            // right length, wrong alphabet; right alphabet, wrong length; upper case
            [[entry({lfs: {oid: "g".repeat(64), size: 10}})], /not a sha256/],
            [[entry({lfs: {oid: "a".repeat(63), size: 10}})], /not a sha256/],
            [[entry({lfs: {oid: "A".repeat(64), size: 10}})], /not a sha256/],
            [[entry({lfs: {oid: sha, size: 11}})], /LFS size that differs/]
        ];
        for (const [body, message] of refused)
            expect(() => parseTreePage(typeof body === "string" ? body : JSON.stringify(body), "the list"), JSON.stringify(body)).toThrow(message);
    });
});

describe("quants of a repository", () => {
    const file = (p: string, bytes = 100): RepoFile => ({path: p, bytes, sha256: null});

    it("names quants from llama-quantize's file names and groups split parts as one model", () => {
        expect(quantName("Llama-3.2-3B-Instruct-Q4_K_M.gguf")).toBe("Q4_K_M");
        expect(quantName("sub/qwen2.5-7b-instruct-q5_k_m-00001-of-00002.gguf")).toBe("Q5_K_M");
        expect(quantName("model.IQ2_XXS.gguf")).toBe("IQ2_XXS");
        expect(quantName("gpt-oss-20b-MXFP4.gguf")).toBe("MXFP4");
        expect(quantName("mystery.gguf")).toBe("mystery");
        const quants = groupGgufQuants([
            file("m-Q8_0-00002-of-00002.gguf", 50), file("m-Q8_0-00001-of-00002.gguf", 60), file("m-Q4_K_M.gguf", 70),
            file("m-F16-00001-of-00003.gguf"), file("m-F16-00003-of-00003.gguf"), // part 2 missing: not loadable, left out
            file("mmproj-m-F16.gguf"), file("README.md")
        ]);
        expect(quants.map((q) => [q.name, q.files.map((f) => f.path), q.bytes])).toEqual([
            ["Q4_K_M", ["m-Q4_K_M.gguf"], 70],
            ["Q8_0", ["m-Q8_0-00001-of-00002.gguf", "m-Q8_0-00002-of-00002.gguf"], 110]
        ]);
        expect(pickQuant(quants, "q8_0", "o/m").name).toBe("Q8_0");
        expect(() => pickQuant(quants, null, "o/m")).toThrow(/has 2 quants; name one as o\/m:QUANT: Q4_K_M \(m-Q4_K_M.gguf\), Q8_0 \(m-Q8_0-00001-of-00002.gguf \+1 parts\)/);
        const twice = groupGgufQuants([file("a/m-Q4_0.gguf"), file("b/m-Q4_0.gguf")]);
        expect(() => pickQuant(twice, "Q4_0", "o/m")).toThrow(/has 2 models named Q4_0; name the file by its URL instead/);
        expect(() => pickQuant([], null, "o/m")).toThrow(/o\/m has no GGUF model files/);
    });
});

describe("against a local hub", () => {
    let work: string;
    let model: Buffer;
    let hub: LocalHub;
    const access = (): {endpoint: string; token: null} => ({endpoint: hub.endpoint, token: null});

    beforeAll(async () => {
        work = await mkdtemp(path.join(os.tmpdir(), "tensorwise-hub-"));
        await makeSyntheticModel(path.join(work, "m.gguf"), {preset: "tiny"});
        model = await readFile(path.join(work, "m.gguf"));
        hub = await startLocalHub({"o/m": [{path: "m.gguf", content: model}, {path: "short.gguf", content: model, listedBytes: 1000}]});
    });
    afterAll(async () => {
        await hub.close();
        await rm(work, {recursive: true, force: true});
    });

    it("grows the header's byte range until the validator accepts it, within its bounds, into a sparse file", async () => {
        const out = path.join(work, "header.gguf");
        const url = resolveUrl(hub.endpoint, "o/m", "main", "m.gguf");
        const before = hub.requests.length;
        const header = await fetchRemoteHeader({url, access: access(), what: "o/m: m.gguf", bytes: model.length, outPath: out, firstBytes: 4096});
        expect(hub.requests.slice(before).map((r) => r.range)).toEqual(["bytes=0-4095", "bytes=4096-8191", "bytes=8192-16383", "bytes=16384-32767"]);
        expect(header.requests).toBe(4);
        expect(Number(header.gguf.dataOffset)).toBeLessThanOrEqual(32768);
        expect((await stat(out)).size).toBe(model.length);
        // a sparse file: the weights are a hole on disk
        expect((await stat(out)).blocks * 512).toBeLessThan(model.length / 4);
        await expect(fetchRemoteHeader({url, access: access(), what: "o/m: m.gguf", bytes: model.length, outPath: out, firstBytes: 4096, maxHeaderBytes: 8192}))
            .rejects.toThrow(/o\/m: m.gguf: its header is longer than 8.00 KiB, more than is read before a download/);
        // a server that ignores Range: only the prefix asked for is kept
        hub.behaviour = {ignoreRange: true};
        const whole = await fetchRemoteHeader({url, access: access(), what: "o/m: m.gguf", bytes: model.length, outPath: out, firstBytes: 65536});
        expect(whole.fetchedBytes).toBe(65536);
        hub.behaviour = {};
    });

    it("refuses a server that sends more bytes than the repository lists, keeping nothing", async () => {
        const partial = path.join(work, "dl", "short.partial");
        await expect(downloadFile({url: resolveUrl(hub.endpoint, "o/m", "main", "short.gguf"), access: access(), what: "o/m: short.gguf",
            partialPath: partial, bytes: 1000, sha256: null, freeBytes: async () => 2 ** 40}))
            .rejects.toThrow(`o/m: short.gguf: the server sends ${model.length} bytes where the repository lists 1000 more; nothing was kept from this answer.`);
        await expect(stat(partial)).rejects.toThrow(/ENOENT/);
    });

    it("starts over when a resumed download's server ignores the Range, and still verifies the whole", async () => {
        const partial = path.join(work, "dl", "m.partial");
        const sha256 = createHash("sha256").update(model).digest("hex");
        await writeFile(partial, Buffer.alloc(5000, 7)); // wrong bytes: had they been kept, the sha256 would fail
        hub.behaviour = {ignoreRange: true};
        const result = await downloadFile({url: resolveUrl(hub.endpoint, "o/m", "main", "m.gguf"), access: access(), what: "o/m: m.gguf",
            partialPath: partial, bytes: model.length, sha256, freeBytes: async () => 2 ** 40});
        hub.behaviour = {};
        expect(result.fetchedBytes).toBe(model.length);
        expect((await readFile(partial)).equals(model)).toBe(true);
    });
});
