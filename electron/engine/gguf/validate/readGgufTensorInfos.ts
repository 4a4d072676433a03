import {GgufValidationError} from "../errors/GgufValidationError.js";
import {getGgmlType, ggmlTensorBytes} from "../ggmlTypes.js";
import type {ValidatedGgufTensor} from "../types/ValidatedGguf.js";
import type {GgufReader} from "./GgufReader.js";
import {quoteFileText} from "./quoteFileText.js";

/** source: GGML_MAX_NAME (64, including the terminating NUL) and GGML_MAX_DIMS (4) in ggml/include/ggml.h. */
const maxNameBytes = 63;
const maxDims = 4;
/** Element counts must stay below 2^62 so that byte counts (≤ 8 bytes per element) stay below 2^63 (int64 in ggml). */
const maxElements = 2n ** 62n;
/** Smallest encoding of one tensor info: name length (8) + 1 name byte + n_dims (4) + one dim (8) + type (4) + offset (8). */
export const minTensorInfoBytes = 33;
const strictUtf8 = new TextDecoder("utf-8", {fatal: true});

/** Tensor infos in file order, with the file position of each one's offset field (for error messages). */
export type ReadTensorInfos = {
    readonly tensors: ValidatedGgufTensor[];
    readonly offsetFieldPositions: number[];
};

/**
 * Reads `count` tensor infos (name, shape, ggml type, offset), checking each as llama.cpp's `gguf_init_from_reader`
 * does, and stricter: names unique, non-empty, valid UTF-8 without NUL and < 64 bytes; 1–4 dims each ≥ 1; element
 * count < 2^62; a known ggml type whose block size divides the row. Offsets are checked later by `checkTensorLayout`.
 */
export function readGgufTensorInfos(reader: GgufReader, count: number): ReadTensorInfos {
    const tensors: ValidatedGgufTensor[] = [];
    const offsetFieldPositions: number[] = [];
    const names = new Set<string>();
    for (let i = 0; i < count; i++) {
        const infoOffset = reader.position;
        const name = readTensorName(reader, i);
        if (names.has(name))
            throw new GgufValidationError("duplicate-tensor", `tensor name ${quoteFileText(name)} (tensor ${i}) appears twice`, infoOffset);
        names.add(name);

        const shape = readShape(reader, name);
        let elements = 1n;
        for (const dim of shape)
            elements *= dim;

        const typeOffset = reader.position;
        const typeId = reader.i32(`type of tensor ${quoteFileText(name)}`);
        const type = getGgmlType(typeId);
        if (type === undefined)
            throw new GgufValidationError("unknown-type", `tensor ${quoteFileText(name)} has unknown ggml type ${typeId}`, typeOffset);

        const rowElements = shape[0] ?? 1n;
        if (rowElements % BigInt(type.blockSize) !== 0n)
            throw new GgufValidationError(
                "bad-row-size",
                `tensor ${quoteFileText(name)} of type ${type.name} has rows of ${rowElements} elements, ` +
                    `not a multiple of the block size ${type.blockSize}`,
                typeOffset
            );

        offsetFieldPositions.push(reader.position);
        const offset = reader.u64(`data offset of tensor ${quoteFileText(name)}`);
        tensors.push({name, type, shape, offset, bytes: ggmlTensorBytes(type, shape), elements});
    }
    return {tensors, offsetFieldPositions};
}

function readTensorName(reader: GgufReader, index: number): string {
    const at = reader.position;
    const length = reader.u64Number(`name length of tensor ${index}`);
    if (length === 0)
        throw new GgufValidationError("bad-tensor-name", `tensor ${index} has an empty name`, at);
    if (length > maxNameBytes)
        throw new GgufValidationError(
            "bad-tensor-name",
            `name of tensor ${index} is ${length} bytes; ggml allows at most ${maxNameBytes}`,
            at
        );

    const raw = reader.bytes(length, `name of tensor ${index}`);
    let name: string;
    try {
        name = strictUtf8.decode(raw);
    } catch {
        throw new GgufValidationError("bad-tensor-name", `name of tensor ${index} is not valid UTF-8`, at);
    }
    if (name.includes("\0"))
        throw new GgufValidationError("bad-tensor-name", `name of tensor ${index} contains a NUL byte`, at);
    return name;
}

function readShape(reader: GgufReader, name: string): bigint[] {
    const at = reader.position;
    const dimCount = reader.u32(`dimension count of tensor ${quoteFileText(name)}`);
    if (dimCount < 1 || dimCount > maxDims)
        throw new GgufValidationError(
            "bad-dims",
            `tensor ${quoteFileText(name)} has ${dimCount} dimensions; 1 to ${maxDims} are allowed`,
            at
        );

    const shape: bigint[] = [];
    let elements = 1n;
    for (let d = 0; d < dimCount; d++) {
        const dimOffset = reader.position;
        const dim = reader.u64(`dimension ${d} of tensor ${quoteFileText(name)}`);
        if (dim === 0n)
            throw new GgufValidationError("bad-dims", `dimension ${d} of tensor ${quoteFileText(name)} is 0`, dimOffset);

        elements *= dim;
        if (elements >= maxElements)
            throw new GgufValidationError(
                "dims-overflow",
                `tensor ${quoteFileText(name)} has shape [${[...shape, dim].join(", ")}${d + 1 < dimCount ? ", …" : ""}], ` +
                    `at least ${elements} elements; the limit is 2^62`,
                dimOffset
            );
        shape.push(dim);
    }
    return shape;
}
