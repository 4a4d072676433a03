import {mkdtemp, readFile, rm, stat} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {readGgufFileInfo} from "node-llama-cpp";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {getGgmlTypeByName} from "../gguf/ggmlTypes.js";
import {GgufWriter, ggufValue, type GgufMetadataValue, type GgufTensorSpec} from "./GgufWriter.js";
import {GgufByteEncoder} from "./ggufValue.js";

let dir = "";
beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tensorwise-gguf-writer-"));
});
afterAll(async () => {
    await rm(dir, {recursive: true, force: true});
});

const tensorA: GgufTensorSpec = {name: "a.weight", shape: [4, 3], type: "f32"}; // 48 bytes
const tensors: GgufTensorSpec[] = [
    tensorA,
    {name: "b.weight", shape: [64, 2], type: getGgmlTypeByName("q8_0") ?? "q8_0"}, // 136 bytes
    {name: "c.bias", shape: [7n], type: "f16"} // 14 bytes
];

function pattern(bytes: number, seed: number): Uint8Array {
    return Uint8Array.from({length: bytes}, (_, i) => (i * 31 + seed) & 0xff);
}

async function writeAll(writer: GgufWriter, chunkSize: number): Promise<Uint8Array[]> {
    const written: Uint8Array[] = [];
    for (let t = 0; writer.currentTensor !== undefined; t++) {
        const data = pattern(writer.currentTensor.bytes, t);
        written.push(data);
        for (let at = 0; at < data.length; at += chunkSize)
            await writer.writeTensorData(data.subarray(at, Math.min(data.length, at + chunkSize)));
    }
    await writer.close();
    return written;
}

describe("GgufByteEncoder", () => {
    it("encodes the same bytes whatever its chunk size", () => {
        const entries: Array<[string, GgufMetadataValue]> = [
            ["a", ggufValue.uint32(1)], ["b", ggufValue.uint64(2n)], ["c", ggufValue.float32(3)],
            ["d", ggufValue.float64(4)], ["e", ggufValue.bool(true)], ["f", ggufValue.string("five")],
            ["g", ggufValue.array("int16", [-6, 6])], ["h", ggufValue.array("string", ["seven", "eight"])]
        ];
        const encode = (chunkSize?: number): string => {
            const encoder = new GgufByteEncoder(chunkSize);
            for (const [key, value] of entries)
                encoder.keyValue(key, value);
            return Buffer.concat(encoder.finish()).toString("hex");
        };
        const whole = encode();
        for (const chunkSize of [1, 3, 7, 16])
            expect(encode(chunkSize)).toBe(whole);
        // "a": u64 length 1, "a", type 4 (uint32), value 1
        expect(whole.slice(0, 34)).toBe("0100000000000000" + "61" + "04000000" + "01000000");
    });
});

describe("GgufWriter", () => {
    it("writes every value type, tensor infos and padded data that node-llama-cpp reads back", async () => {
        const path = join(dir, "all-types.gguf");
        const writer = await GgufWriter.create(path, {
            metadata: {
                "general.architecture": ggufValue.string("llama"),
                "test.u8": ggufValue.uint8(255),
                "test.i8": ggufValue.int8(-128),
                "test.u16": ggufValue.uint16(65535),
                "test.i16": ggufValue.int16(-32768),
                "test.u32": ggufValue.uint32(4294967295),
                "test.i32": ggufValue.int32(-2147483648),
                "test.f32": ggufValue.float32(0.5),
                "test.f64": ggufValue.float64(1 / 3),
                "test.u64": ggufValue.uint64(18446744073709551615n),
                "test.i64": ggufValue.int64(-9223372036854775808n),
                "test.bool": ggufValue.bool(true),
                "test.string": ggufValue.string("héllo ▁ 👋"),
                "test.arr_u32": ggufValue.array("uint32", [1, 2, 3]),
                "test.arr_i32": ggufValue.array("int32", new Int32Array([-1, 0, 1])),
                "test.arr_f32": ggufValue.array("float32", new Float32Array([0.25, -1.5])),
                "test.arr_u64": ggufValue.array("uint64", [1n, 2n]),
                "test.arr_bool": ggufValue.array("bool", [true, false]),
                "test.arr_str": ggufValue.array("string", ["a", "", "▁b"]),
                "test.arr_empty": ggufValue.array("int32", [])
            },
            tensors
        });
        expect(writer.dataOffset % 32).toBe(0);
        expect(writer.tensors.map((tensor) => tensor.offset)).toEqual([0, 64, 224]);
        const data = await writeAll(writer, 5);
        expect(writer.bytesWritten).toBe(writer.totalBytes);
        expect((await stat(path)).size).toBe(writer.dataOffset + 224 + 32);

        const info = await readGgufFileInfo(path, {logWarnings: false});
        expect(info.version).toBe(3);
        expect(Number(info.tensorCount)).toBe(3);
        expect(info.infoEndOffset).toBe(writer.dataOffset);
        const test = (info.metadata as unknown as {test: Record<string, unknown>}).test;
        expect(test).toEqual({
            u8: 255, i8: -128, u16: 65535, i16: -32768, u32: 4294967295, i32: -2147483648, f32: 0.5, f64: 1 / 3,
            u64: 18446744073709551615n, i64: -9223372036854775808n, bool: true, string: "héllo ▁ 👋",
            arr_u32: [1, 2, 3], arr_i32: [-1, 0, 1], arr_f32: [0.25, -1.5], arr_u64: [1n, 2n],
            arr_bool: [true, false], arr_str: ["a", "", "▁b"], arr_empty: []
        });

        const tensorInfo = info.tensorInfo ?? [];
        expect(tensorInfo.map((tensor) => [tensor.name, tensor.dimensions.map(Number), tensor.ggmlType]))
            .toEqual([["a.weight", [4, 3], 0], ["b.weight", [64, 2], 8], ["c.bias", [7], 1]]);

        const file = await readFile(path);
        tensorInfo.forEach((tensor, i) => {
            const at = Number(tensor.fileOffset);
            const expected = data[i] ?? new Uint8Array();
            expect(at % 32).toBe(0);
            expect(file.subarray(at, at + expected.length).equals(expected)).toBe(true);
        });
        // padding after the last tensor is zeros up to the alignment
        expect([...file.subarray(file.length - 18)]).toEqual(new Array<number>(18).fill(0));
    });

    it("adds general.alignment for a non-default alignment and aligns every tensor to it", async () => {
        const path = join(dir, "align64.gguf");
        const writer = await GgufWriter.create(path, {metadata: {}, tensors, alignment: 64});
        expect(writer.tensors.map((tensor) => tensor.offset)).toEqual([0, 64, 256]);
        await writeAll(writer, 1 << 20);
        const info = await readGgufFileInfo(path, {logWarnings: false});
        expect(info.metadata.general?.alignment).toBe(64);
        expect(info.infoEndOffset).toBe(writer.dataOffset);
        expect(writer.dataOffset % 64).toBe(0);
        expect((info.tensorInfo ?? []).map((tensor) => Number(tensor.fileOffset) % 64)).toEqual([0, 0, 0]);
    });

    it("writes a header larger than one encoder chunk intact", async () => {
        const path = join(dir, "big-header.gguf");
        const tokens = Array.from({length: 150_000}, (_, i) => `token-${i}`); // ~2 MiB of strings
        const writer = await GgufWriter.create(path, {
            metadata: {"general.name": ggufValue.string("big"), "tokenizer.ggml.tokens": ggufValue.array("string", tokens)},
            tensors
        });
        expect(writer.dataOffset).toBeGreaterThan(1 << 21);
        await writeAll(writer, 1 << 20);
        const info = await readGgufFileInfo(path, {logWarnings: false});
        expect(info.metadata.general?.name).toBe("big");
        expect(info.metadata.tokenizer?.ggml?.tokens).toEqual(tokens);
        expect(info.infoEndOffset).toBe(writer.dataOffset);
    });

    it("writes a metadata-only file", async () => {
        const path = join(dir, "empty.gguf");
        const writer = await GgufWriter.create(path, {metadata: {"general.name": ggufValue.string("x")}, tensors: []});
        await writer.close();
        const info = await readGgufFileInfo(path, {logWarnings: false});
        expect(info.metadata.general?.name).toBe("x");
        expect((await stat(path)).size).toBe(writer.totalBytes);
    });

    it("rejects bad input before touching the file", async () => {
        const path = join(dir, "bad.gguf");
        await expect(GgufWriter.create(path, {metadata: {}, tensors: [{name: "x", shape: [31], type: "q8_0"}]}))
            .rejects.toThrow(/block size/);
        await expect(GgufWriter.create(path, {metadata: {}, tensors: [{name: "x", shape: [4], type: "nope"}]}))
            .rejects.toThrow(/unknown ggml type/);
        await expect(GgufWriter.create(path, {metadata: {}, tensors: [tensorA, tensorA]}))
            .rejects.toThrow(/duplicate/);
        await expect(GgufWriter.create(path, {metadata: {}, tensors: [{name: "x".repeat(64), shape: [4], type: "f32"}]}))
            .rejects.toThrow(/name longer/);
        await expect(GgufWriter.create(path, {metadata: {"k": ggufValue.uint8(256)}, tensors: []}))
            .rejects.toThrow(RangeError);
        await expect(GgufWriter.create(path, {metadata: {"k": ggufValue.int32(1.5)}, tensors: []}))
            .rejects.toThrow(TypeError);
        await expect(GgufWriter.create(path, {metadata: {}, tensors: [], alignment: 48}))
            .rejects.toThrow(/power of two/);
        await expect(stat(path)).rejects.toThrow();
    });

    it("refuses chunks that run past a tensor and closing early; abort deletes the file", async () => {
        const path = join(dir, "partial.gguf");
        const writer = await GgufWriter.create(path, {metadata: {}, tensors});
        await expect(writer.writeTensorData(new Uint8Array(49))).rejects.toThrow(/exceeds/);
        await writer.writeTensorData(new Uint8Array(48));
        expect(writer.currentTensor?.name).toBe("b.weight");
        await expect(writer.close()).rejects.toThrow(/b.weight/);

        const aborted = await GgufWriter.create(path, {metadata: {}, tensors});
        await aborted.abort();
        await expect(stat(path)).rejects.toThrow();
    });
});
