import {writeFile} from "node:fs/promises";
import {join} from "node:path";
import type {GgufValidationErrorCode} from "../errors/GgufValidationError.js";
import {hostileModelImages} from "./hostileModelImages.js";
import {buildTinyGguf, ByteWriter, GgmlTypeId, GgufType, kv, tinyLlamaSpec} from "./tinyGguf.js";
import type {TinyGgufSpec, TinyKv, TinyTensor} from "./tinyGguf.js";

/** One hostile file of the corpus and the error code the validator must reject it with. */
export type MalformedGgufCase = {
    readonly name: string;
    readonly path: string;
    readonly expectedCode: GgufValidationErrorCode;
};

const valid = (): TinyGgufSpec => tinyLlamaSpec();
const f32Tensor = (name: string, shape: readonly (number | bigint)[], extra: Partial<TinyTensor> = {}): TinyTensor =>
    ({name, shape, typeId: GgmlTypeId.f32, ...extra});
const withTensors = (...tensors: TinyTensor[]): TinyGgufSpec => tinyLlamaSpec({tensors});
const withKvs = (...extraKvs: TinyKv[]): TinyGgufSpec => tinyLlamaSpec({extraKvs});
/** Replaces the `general.alignment` entry of the tiny model. */
const withAlignmentKv = (entry: TinyKv): TinyGgufSpec => {
    const spec = valid();
    return {...spec, kvs: (spec.kvs ?? []).map((e) => (e.key === "general.alignment" ? entry : e))};
};
const withTokens = (tokens: readonly (string | Uint8Array)[]): TinyGgufSpec => ({
    kvs: [kv.str("general.architecture", "llama"), kv.strings("tokenizer.ggml.tokens", tokens)],
    tensors: [f32Tensor("output_norm.weight", [8])]
});
const gib3 = 3n * 2n ** 30n;

/** A value nested `depth` arrays deep, ending in an empty uint8 array. */
function nestedArray(depth: number): (w: ByteWriter) => void {
    return (w) => {
        w.u32(GgufType.array);
        for (let level = 1; level < depth; level++)
            w.u32(GgufType.array).u64(1);
        w.u32(GgufType.uint8).u64(0);
    };
}

/** Hostile variants as (name, expected code, bytes): damaged files first, then hostile models. */
function corpusImages(): Array<readonly [string, GgufValidationErrorCode, Buffer]> {
    const good = buildTinyGguf(valid());
    const cut = (at: number): Buffer => good.bytes.subarray(0, at);
    // Padded at the front so that cuts further on leave enough bytes for the declared counts to look plausible.
    const padded = buildTinyGguf({...valid(), kvs: [kv.str("x.padding", "p".repeat(2000)), ...(valid().kvs ?? [])]});
    const cutPadded = (at: number): Buffer => padded.bytes.subarray(0, at);
    const lastKvStart = padded.kvStarts.at(-1) ?? 0;
    const image = (spec: TinyGgufSpec): Buffer => buildTinyGguf(spec).bytes;
    const lastDataStart = good.tensorDataStarts.at(-1) ?? good.dataStart;
    const bigEndianHeader = Buffer.from(good.bytes);
    bigEndianHeader.writeUInt32BE(3, 4);

    return [
        ["empty file", "truncated", Buffer.alloc(0)],
        ["truncated in header", "truncated", cut(12)],
        ["truncated in the counts", "truncated", cut(good.kvStart - 3)],
        ["truncated before the declared entries fit", "truncated", cut(good.kvStart + 10)],
        ["truncated in a key", "truncated", cutPadded(lastKvStart + 10)],
        ["truncated in a string value", "truncated", cutPadded((padded.kvStarts[0] ?? 0) + 8 + 9 + 4 + 8 + 1000)],
        ["truncated in an array", "truncated", cutPadded((padded.kvStarts.at(-3) ?? 0) + 100)],
        ["truncated in tensor infos", "truncated", cutPadded((padded.tensorInfoStarts[10] ?? 0) + 12)],
        ["truncated before data section", "truncated", cut(good.dataStart - 1)],
        ["truncated in data", "truncated", cut(lastDataStart + 3)],
        ["bad magic", "bad-magic", image({...valid(), magic: "GGML"})],
        ["version 1", "bad-version", image({...valid(), version: 1})],
        ["version 4", "bad-version", image({...valid(), version: 4})],
        ["big-endian", "bad-version", bigEndianHeader],
        ["huge tensor count", "count-too-large", image({...valid(), tensorCount: 2n ** 40n})],
        ["tensor count beyond file", "truncated", image({...valid(), tensorCount: 100_000n})],
        ["array count beyond file", "truncated",
            image(withKvs(kv.raw("x.arr", (w) => w.u32(GgufType.array).u32(GgufType.uint64).u64(2n ** 29n))))],
        ["huge metadata count", "count-too-large", image({...valid(), kvCount: 2n ** 62n})],
        ["huge array count", "count-too-large",
            image(withKvs(kv.raw("x.arr", (w) => w.u32(GgufType.array).u32(GgufType.uint64).u64(2n ** 61n))))],
        ["3 GiB string value", "string-too-long",
            image(withKvs(kv.raw("x.str", (w) => w.u32(GgufType.string).u64(gib3))))],
        ["3 GiB key", "string-too-long",
            new ByteWriter().raw(Buffer.from("GGUF")).u32(3).u64(0).u64(1).u64(gib3).raw(Buffer.alloc(64)).toBuffer()],
        ["alignment 0", "bad-alignment", image(withAlignmentKv(kv.u32("general.alignment", 0)))],
        ["alignment 3", "bad-alignment", image(withAlignmentKv(kv.u32("general.alignment", 3)))],
        ["alignment uint64", "bad-alignment", image(withAlignmentKv(kv.u64("general.alignment", 32n)))],
        ["alignment string", "bad-alignment", image(withAlignmentKv(kv.str("general.alignment", "32")))],
        ["offset past the end", "out-of-bounds",
            image(withTensors(f32Tensor("a", [8]), f32Tensor("b", [8], {offset: 2n ** 40n})))],
        ["offset at 2^64-32", "out-of-bounds", image(withTensors(f32Tensor("a", [8], {offset: 2n ** 64n - 32n})))],
        ["misaligned offset", "misaligned-offset",
            image(withTensors(f32Tensor("a", [8]), f32Tensor("b", [8], {offset: 33n})))],
        ["overlapping tensors", "overlap", image(withTensors(f32Tensor("a", [8]), f32Tensor("b", [8], {offset: 0n})))],
        ["gap between tensors", "gap", image(withTensors(f32Tensor("a", [8]), f32Tensor("b", [8], {offset: 64n})))],
        ["dims overflow 2^63", "dims-overflow",
            image(withTensors(f32Tensor("a", [2n ** 32n, 2n ** 32n, 2n ** 32n], {dataBytes: 32})))],
        ["dim of 2^63", "dims-overflow", image(withTensors(f32Tensor("a", [2n ** 63n], {dataBytes: 32})))],
        ["elements 2^62 (bytes past int64)", "dims-overflow",
            image(withTensors(f32Tensor("a", [2n ** 31n, 2n ** 31n], {dataBytes: 32})))],
        ["huge but valid-looking tensor", "truncated", image(withTensors(f32Tensor("a", [2n ** 20n, 2n ** 20n], {dataBytes: 32})))],
        ["5 dims", "bad-dims", image(withTensors(f32Tensor("a", [2, 2, 2, 2, 2])))],
        ["0 dims", "bad-dims", image(withTensors(f32Tensor("a", [], {dataBytes: 4})))],
        ["zero dim", "bad-dims", image(withTensors(f32Tensor("a", [8, 0])))],
        ["removed ggml type 4", "unknown-type", image(withTensors({name: "a", shape: [32], typeId: 4, dataBytes: 32}))],
        ["ggml type 9999", "unknown-type", image(withTensors({name: "a", shape: [32], typeId: 9999, dataBytes: 32}))],
        ["negative ggml type", "unknown-type", image(withTensors({name: "a", shape: [32], typeId: -1, dataBytes: 32}))],
        ["row not divisible by block", "bad-row-size",
            image(withTensors({name: "a", shape: [33, 2], typeId: GgmlTypeId.q8_0, dataBytes: 64}))],
        ["duplicate key", "duplicate-key", image(withKvs(kv.str("general.name", "again")))],
        ["empty key", "empty-key", image(withKvs(kv.u32("", 1)))],
        ["key with NUL", "bad-key", image(withKvs(kv.u32("general.x\0y", 1)))],
        ["key not UTF-8", "bad-key", image(withKvs(kv.raw(new Uint8Array([0xff, 0xfe]), (w) => w.u32(GgufType.uint8).u8(1))))],
        ["duplicate tensor names", "duplicate-tensor", image(withTensors(f32Tensor("a", [8]), f32Tensor("a", [8])))],
        ["64-byte tensor name", "bad-tensor-name", image(withTensors(f32Tensor("n".repeat(64), [8])))],
        ["empty tensor name", "bad-tensor-name", image(withTensors(f32Tensor("", [8])))],
        ["tensor name with NUL", "bad-tensor-name", image(withTensors(f32Tensor("a\0b", [8])))],
        ["duplicate vocab tokens", "duplicate-token", image(withTokens(["<s>", "a", "b", "a"]))],
        ["tokens equal up to NUL", "duplicate-token", image(withTokens(["<s>", "a", Buffer.from("a\0x", "latin1")]))],
        ["empty token clashes with [EMPTY_n]", "duplicate-token", image(withTokens(["[EMPTY_1]", ""]))],
        ["token_type shorter than tokens", "bad-vocab",
            image({...withTokens(["a", "b"]), kvs: [...(withTokens(["a", "b"]).kvs ?? []), kv.i32s("tokenizer.ggml.token_type", [1])]})],
        ["tokens not strings", "bad-vocab", image({kvs: [kv.i32s("tokenizer.ggml.tokens", [1, 2])]})],
        ["unknown value type 13", "bad-value-type", image(withKvs(kv.raw("x.v", (w) => w.u32(13).u32(0))))],
        ["unknown array element type", "bad-value-type",
            image(withKvs(kv.raw("x.v", (w) => w.u32(GgufType.array).u32(0xffff_ffff).u64(0))))],
        ["array of arrays", "array-too-deep", image(withKvs(kv.raw("x.v", nestedArray(2))))],
        ["arrays nested 100000 deep", "array-too-deep", image(withKvs(kv.raw("x.v", nestedArray(100_000))))],
        ...hostileModelImages()
    ];
}

/** Writes the hostile GGUF corpus into `dir` (which must exist) and lists its cases. */
export async function writeMalformedGgufCorpus(dir: string): Promise<MalformedGgufCase[]> {
    const cases: MalformedGgufCase[] = [];
    for (const [index, [name, expectedCode, bytes]] of corpusImages().entries()) {
        const path = join(dir, `${String(index).padStart(2, "0")}-${name.replace(/[^a-z0-9]+/gi, "-")}.gguf`);
        await writeFile(path, bytes);
        cases.push({name, path, expectedCode});
    }
    return cases;
}
