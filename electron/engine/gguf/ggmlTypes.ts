/**
 * ggml tensor types as stored in GGUF files: id, name, block size (elements) and block size (bytes).
 *
 * source: read off `ggml_type_name` / `ggml_blck_size` / `ggml_type_size` of the libggml-base shipped with
 * node-llama-cpp 3.22.1 (llama.cpp release bundled with it). Ids 4, 5 and 31–33, 36–38 were removed from ggml.
 */
export type GgmlTypeInfo = {
    readonly id: number;
    readonly name: string;
    /** Elements per block. */
    readonly blockSize: number;
    /** Bytes per block. */
    readonly typeSize: number;
};

const table: ReadonlyArray<readonly [number, string, number, number]> = [
    [0, "f32", 1, 4],
    [1, "f16", 1, 2],
    [2, "q4_0", 32, 18],
    [3, "q4_1", 32, 20],
    [6, "q5_0", 32, 22],
    [7, "q5_1", 32, 24],
    [8, "q8_0", 32, 34],
    [9, "q8_1", 32, 36],
    [10, "q2_K", 256, 84],
    [11, "q3_K", 256, 110],
    [12, "q4_K", 256, 144],
    [13, "q5_K", 256, 176],
    [14, "q6_K", 256, 210],
    [15, "q8_K", 256, 292],
    [16, "iq2_xxs", 256, 66],
    [17, "iq2_xs", 256, 74],
    [18, "iq3_xxs", 256, 98],
    [19, "iq1_s", 256, 50],
    [20, "iq4_nl", 32, 18],
    [21, "iq3_s", 256, 110],
    [22, "iq2_s", 256, 82],
    [23, "iq4_xs", 256, 136],
    [24, "i8", 1, 1],
    [25, "i16", 1, 2],
    [26, "i32", 1, 4],
    [27, "i64", 1, 8],
    [28, "f64", 1, 8],
    [29, "iq1_m", 256, 56],
    [30, "bf16", 1, 2],
    [34, "tq1_0", 256, 54],
    [35, "tq2_0", 256, 66],
    [39, "mxfp4", 32, 17],
    [40, "nvfp4", 64, 36],
    [41, "q1_0", 128, 18],
    [42, "q2_0", 64, 18],
];

const byId = new Map<number, GgmlTypeInfo>(
    table.map(([id, name, blockSize, typeSize]) => [id, {id, name, blockSize, typeSize}])
);
const byName = new Map<string, GgmlTypeInfo>([...byId.values()].map((info) => [info.name.toLowerCase(), info]));

/** The type info for a ggml type id, or `undefined` for an id this ggml does not know. */
export function getGgmlType(id: number): GgmlTypeInfo | undefined {
    return byId.get(id);
}

/** The type info for a ggml type name (case-insensitive, e.g. `"Q4_K"`), or `undefined`. */
export function getGgmlTypeByName(name: string): GgmlTypeInfo | undefined {
    return byName.get(name.toLowerCase());
}

/** Bytes taken by one row of `rowElements` elements; throws if the row is not a whole number of blocks. */
export function ggmlRowBytes(type: GgmlTypeInfo, rowElements: bigint): bigint {
    const blockSize = BigInt(type.blockSize);
    if (rowElements % blockSize !== 0n)
        throw new RangeError(`a ${type.name} row of ${rowElements} elements is not a multiple of its block size ${type.blockSize}`);
    return (rowElements / blockSize) * BigInt(type.typeSize);
}

/** Bytes of a tensor of the given shape (`ne[0]` is the row length). */
export function ggmlTensorBytes(type: GgmlTypeInfo, shape: readonly bigint[]): bigint {
    const [rowElements = 1n, ...rest] = shape;
    return rest.reduce((bytes, dim) => bytes * dim, ggmlRowBytes(type, rowElements));
}

export const allGgmlTypes: readonly GgmlTypeInfo[] = [...byId.values()];
