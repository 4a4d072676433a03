import {closeSync, openSync, writeFileSync} from "node:fs";
import {mkdtemp, rm, writeFile} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {readGgufFileInfo} from "node-llama-cpp";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {GgufValidationError} from "./errors/GgufValidationError.js";
import {writeMalformedGgufCorpus} from "./testing/malformedGgufCorpus.js";
import type {MalformedGgufCase} from "./testing/malformedGgufCorpus.js";
import {buildTinyGguf, GgmlTypeId, GgufType, kv, tinyLlamaSpec} from "./testing/tinyGguf.js";
import type {TinyGgufSpec} from "./testing/tinyGguf.js";
import {validateGgufFd, validateGgufFile, validateGgufFileSync} from "./validateGguf.js";

let dir: string;
let corpus: MalformedGgufCase[];
let fileCount = 0;

async function writeGguf(spec: TinyGgufSpec | Buffer): Promise<string> {
    const path = join(dir, `file-${fileCount++}.gguf`);
    await writeFile(path, Buffer.isBuffer(spec) ? spec : buildTinyGguf(spec).bytes);
    return path;
}

function writeGgufSync(spec: TinyGgufSpec): string {
    const path = join(dir, `file-${fileCount++}.gguf`);
    writeFileSync(path, buildTinyGguf(spec).bytes);
    return path;
}

function rejectionOf(run: () => unknown): GgufValidationError {
    try {
        run();
    } catch (error) {
        if (error instanceof GgufValidationError)
            return error;
        throw error;
    }
    throw new Error("expected a GgufValidationError, but the file was accepted");
}

beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "validate-gguf-"));
    corpus = await writeMalformedGgufCorpus(dir);
});

afterAll(async () => {
    await rm(dir, {recursive: true, force: true});
});

describe("validateGgufFile on a well-formed file", () => {
    it("returns header, typed metadata and tensors laid out in the data section", async () => {
        const built = buildTinyGguf(tinyLlamaSpec());
        const path = await writeGguf(built.bytes);
        const gguf = await validateGgufFile(path);

        expect(gguf.version).toBe(3);
        expect(gguf.alignment).toBe(32);
        expect(gguf.fileSize).toBe(BigInt(built.bytes.length));
        expect(gguf.dataOffset).toBe(BigInt(built.dataStart));
        expect(gguf.metadata.get("general.architecture")).toEqual({type: "string", value: "llama"});
        expect(gguf.metadata.get("llama.block_count")).toEqual({type: "uint32", value: 2});
        const tokens = gguf.metadata.get("tokenizer.ggml.tokens");
        expect(tokens?.type === "array" && tokens.elementType === "string" ? tokens.value : null)
            .toEqual(["<unk>", "<s>", "</s>", "a", "b", "ab"]);
        const scores = gguf.metadata.get("tokenizer.ggml.scores");
        expect(scores?.type === "array" && scores.value).toBeInstanceOf(Float32Array);

        expect(gguf.tensors).toHaveLength(21);
        const embd = gguf.tensors[0];
        expect(embd).toMatchObject({name: "token_embd.weight", shape: [32n, 6n], offset: 0n, bytes: 384n, elements: 192n});
        expect(embd?.type.name).toBe("f16");
        const q = gguf.tensors.find((tensor) => tensor.name === "blk.0.attn_q.weight");
        expect(q?.type.name).toBe("q8_0");
        expect(q?.bytes).toBe(32n * 34n);
        gguf.tensors.forEach((tensor, i) =>
            expect(gguf.dataOffset + tensor.offset).toBe(BigInt(built.tensorDataStarts[i] ?? -1)));
    });

    it("agrees with node-llama-cpp's readGgufFileInfo", async () => {
        const path = await writeGguf(tinyLlamaSpec());
        const ours = validateGgufFileSync(path);
        const theirs = await readGgufFileInfo(path, {logWarnings: false});

        expect(theirs.version).toBe(ours.version);
        expect(theirs.metadata.general.architecture).toBe("llama");
        expect(theirs.tensorInfo?.map((tensor) => ({
            name: tensor.name,
            shape: tensor.dimensions.map(BigInt),
            type: tensor.ggmlType as number,
            fileOffset: BigInt(tensor.fileOffset)
        }))).toEqual(ours.tensors.map((tensor) => ({
            name: tensor.name,
            shape: tensor.shape,
            type: tensor.type.id,
            fileOffset: ours.dataOffset + tensor.offset
        })));
    });

    it("accepts version 2, 64-byte alignment and a file without tensors", async () => {
        const v2 = validateGgufFileSync(await writeGguf({...tinyLlamaSpec(), version: 2}));
        expect(v2.version).toBe(2);

        const spec = tinyLlamaSpec();
        const kvs = (spec.kvs ?? []).map((entry) =>
            entry.key === "general.alignment" ? kv.u32("general.alignment", 64) : entry);
        const aligned = validateGgufFileSync(await writeGguf({...spec, kvs, alignment: 64}));
        expect(aligned.alignment).toBe(64);
        expect(aligned.dataOffset % 64n).toBe(0n);
        expect(aligned.tensors.every((tensor) => tensor.offset % 64n === 0n)).toBe(true);

        // Not a model (no general.architecture), so no hyper-parameters are required.
        const empty = validateGgufFileSync(await writeGguf({kvs: [kv.str("general.name", "metadata only")]}));
        expect(empty.tensors).toEqual([]);
        expect(empty.metadata.size).toBe(1);
    });

    it("compares tokens byte-wise: distinct invalid UTF-8 tokens are not duplicates, equal ones are", async () => {
        const invalid = (byte: number): Uint8Array => new Uint8Array([0x61, byte]);
        const distinct = await writeGguf({kvs: [kv.strings("tokenizer.ggml.tokens", [invalid(0xff), invalid(0xfe), "a\uFFFD"])]});
        expect(validateGgufFileSync(distinct).metadata.get("tokenizer.ggml.tokens")?.value).toHaveLength(3);
        const same = await writeGguf({kvs: [kv.strings("tokenizer.ggml.tokens", [invalid(0xff), "b", invalid(0xff)])]});
        expect(rejectionOf(() => validateGgufFileSync(same)).code).toBe("duplicate-token");
    });

    it("allows nested arrays up to maxArrayDepth", async () => {
        const nested = kv.raw("x.nested", (w) => {
            w.u32(GgufType.array).u32(GgufType.array).u64(2);
            w.u32(GgufType.uint16).u64(2).raw(Buffer.from([1, 0, 2, 0]));
            w.u32(GgufType.string).u64(1).str("z");
        });
        const path = await writeGguf(tinyLlamaSpec({extraKvs: [nested]}));
        expect(rejectionOf(() => validateGgufFileSync(path)).code).toBe("array-too-deep");
        expect(validateGgufFileSync(path, {maxArrayDepth: 2}).metadata.get("x.nested")).toEqual({
            type: "array",
            elementType: "array",
            value: [
                {type: "array", elementType: "uint16", value: new Uint16Array([1, 2])},
                {type: "array", elementType: "string", value: ["z"]}
            ]
        });

        const deep = kv.raw("x.deep", (w) => {
            w.u32(GgufType.array);
            for (let level = 1; level < 100_000; level++)
                w.u32(GgufType.array).u64(1);
            w.u32(GgufType.uint8).u64(0);
        });
        const deepPath = await writeGguf({kvs: [deep]});
        expect(rejectionOf(() => validateGgufFileSync(deepPath, {maxArrayDepth: 1e9})).message)
            .toContain("nests arrays 17 deep; the limit is 16");
    });
});

describe("validateGgufFile limits", () => {
    it("caps the metadata's estimated memory", async () => {
        const tokens = Array.from({length: 2000}, (_, i) => `token-${i}`);
        const path = await writeGguf({kvs: [kv.strings("tokenizer.ggml.tokens", tokens)]});
        expect(validateGgufFileSync(path).metadata.size).toBe(1);
        const error = rejectionOf(() => validateGgufFileSync(path, {maxMetadataBytes: 50_000}));
        expect(error.code).toBe("metadata-too-large");
    });

    it("caps string length and tensor count", async () => {
        const path = await writeGguf(tinyLlamaSpec({extraKvs: [kv.str("x.long", "y".repeat(1000))]}));
        expect(rejectionOf(() => validateGgufFileSync(path, {maxStringBytes: 999})).code).toBe("string-too-long");
        expect(rejectionOf(() => validateGgufFileSync(path, {maxTensorCount: 20})).code).toBe("count-too-large");
    });

    it("reports I/O problems as io-error", async () => {
        expect(rejectionOf(() => validateGgufFileSync(join(dir, "missing.gguf"))).code).toBe("io-error");
        expect(rejectionOf(() => validateGgufFileSync(dir)).code).toBe("io-error");
    });
});

describe("validateGgufFile on the malformed corpus", () => {
    it("covers every listed kind of damage", () => {
        expect(corpus.length).toBeGreaterThanOrEqual(50);
    });

    it("rejects each file with the expected code, quickly", () => {
        for (const testCase of corpus) {
            const started = performance.now();
            const error = rejectionOf(() => validateGgufFileSync(testCase.path));
            const elapsed = performance.now() - started;
            expect({name: testCase.name, code: error.code}).toEqual({name: testCase.name, code: testCase.expectedCode});
            expect(error.message.length).toBeGreaterThan(10);
            expect(elapsed).toBeLessThan(500);
        }
    });

    it("says where: file-format errors carry the byte offset in the message", () => {
        for (const testCase of corpus) {
            const error = rejectionOf(() => validateGgufFileSync(testCase.path));
            if (error.offset !== undefined)
                expect(error.message).toContain(`(at byte ${error.offset})`);
        }
        const hugeKey = corpus.find((testCase) => testCase.name === "3 GiB key");
        const error = rejectionOf(() => validateGgufFileSync(hugeKey?.path ?? ""));
        expect(error.message).toBe("key of metadata entry 0 declares 3221225472 bytes; the limit is 67108864 (at byte 24)");
    });
});

describe("validateGgufFile messages", () => {
    /** C0/C1 controls, bidi and zero-width formatting, line separators. */
    const unprintable = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

    it("says what is wrong in one printable line, with no stack, for every corpus file", () => {
        for (const testCase of corpus) {
            const {message} = rejectionOf(() => validateGgufFileSync(testCase.path));
            expect({name: testCase.name, unprintable: unprintable.test(message), long: message.length > 300})
                .toEqual({name: testCase.name, unprintable: false, long: false});
            expect(message).not.toMatch(/\bat .*\.(ts|js):\d+/);
        }
    });

    it("does not reveal the first bytes of a file that is not GGUF", async () => {
        const shadow = await writeGguf(Buffer.from("root:$6$saltsalt$hashhashhash:19000:0:99999:7:::\n"));
        const error = rejectionOf(() => validateGgufFileSync(shadow));
        expect(error.code).toBe("bad-magic");
        expect(error.message).toBe("this file is not a GGUF model (it does not start with the GGUF signature)");
        const shortPath = await writeGguf(Buffer.from("ro"));
        const short = rejectionOf(() => validateGgufFileSync(shortPath));
        expect(short.message).toBe("this file is not a GGUF model (it is too short to hold the GGUF signature)");
    });

    it("caps keys and tensor names read from the file and replaces control characters", () => {
        const hostileKey = "x.\u001b]0;pwned\u0007\u202e" + "k".repeat(5000);
        const keyError = rejectionOf(() => validateGgufFileSync(
            writeGgufSync(tinyLlamaSpec({extraKvs: [kv.u32(hostileKey, 1), kv.u32(hostileKey, 2)]}))
        ));
        expect(keyError.code).toBe("duplicate-key");
        expect(keyError.message).not.toMatch(unprintable);
        expect(keyError.message).toContain("x.\ufffd]0;pwned\ufffd\ufffdkkk");
        expect(keyError.message.length).toBeLessThan(160);

        const name = "blk.0.\u001b[2J\n" + "n".repeat(40);
        const tensorError = rejectionOf(() => validateGgufFileSync(writeGgufSync(tinyLlamaSpec({tensors: [
            {name, shape: [8], typeId: GgmlTypeId.f32}, {name, shape: [8], typeId: GgmlTypeId.f32}
        ]}))));
        expect(tensorError.code).toBe("duplicate-tensor");
        expect(tensorError.message).not.toMatch(unprintable);
        expect(tensorError.message).toContain("…");
    });

    it("does not quote vocabulary tokens", async () => {
        const secret = "hunter2-\u001b[31m";
        const path = await writeGguf({kvs: [kv.strings("tokenizer.ggml.tokens", ["a", secret, secret])]});
        const error = rejectionOf(() => validateGgufFileSync(path));
        expect(error.code).toBe("duplicate-token");
        expect(error.message).toMatch(/^vocabulary token 2 is the same text as token 1, and llama\.cpp aborts on duplicate tokens \(at byte \d+\)$/);
    });
});

describe("validateGgufFile robustness", () => {
    it("rejects every truncation of a valid file with a GgufValidationError", async () => {
        const built = buildTinyGguf(tinyLlamaSpec());
        const lastTensorEnd = (built.tensorDataStarts.at(-1) ?? 0) + 32 * 6 / 32 * 34;
        const fd = openSync(await writeGguf(built.bytes), "r");
        try {
            // A file descriptor with a smaller declared size is the same file cut there: reads never go past it.
            expect(validateGgufFd(fd, lastTensorEnd).tensors).toHaveLength(21);
            const ends = [...Array.from({length: built.dataStart + 2}, (_, end) => end), lastTensorEnd - 1];
            for (const end of ends)
                expect(rejectionOf(() => validateGgufFd(fd, end)).code, `cut at ${end}`).toBe("truncated");
        } finally {
            closeSync(fd);
        }
    });

    it("never throws anything but GgufValidationError on randomly corrupted headers", async () => {
        const built = buildTinyGguf(tinyLlamaSpec({tensors: [
            {name: "token_embd.weight", shape: [32, 6], typeId: GgmlTypeId.f16},
            {name: "output.weight", shape: [32, 6], typeId: GgmlTypeId.q8_0}
        ]}));
        const path = join(dir, "fuzz.gguf");
        let seed = 12345;
        const random = (): number => {
            seed = (seed * 1103515245 + 12345) % 2 ** 31;
            return seed / 2 ** 31;
        };
        const codes = new Set<string>();
        for (let round = 0; round < 400; round++) {
            const bytes = Buffer.from(built.bytes);
            const flips = 1 + Math.floor(random() * 4);
            for (let i = 0; i < flips; i++)
                bytes[Math.floor(random() * built.dataStart)] = Math.floor(random() * 256);
            writeFileSync(path, bytes);
            try {
                validateGgufFileSync(path);
                codes.add("accepted");
            } catch (error) {
                expect(error).toBeInstanceOf(GgufValidationError);
                if (error instanceof GgufValidationError)
                    codes.add(error.code);
            }
        }
        expect(codes.size).toBeGreaterThan(5);
    });
});
