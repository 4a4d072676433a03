import type {GgmlTypeInfo} from "../ggmlTypes.js";

/** JS storage of each GGUF scalar metadata type. */
type ScalarStorage = {
    uint8: number;
    int8: number;
    uint16: number;
    int16: number;
    uint32: number;
    int32: number;
    float32: number;
    float64: number;
    uint64: bigint;
    int64: bigint;
    bool: boolean;
    string: string;
};

/** JS storage of each GGUF array element type: numbers in typed arrays, so big vocabularies stay compact. */
type ArrayStorage = {
    uint8: Uint8Array;
    int8: Int8Array;
    uint16: Uint16Array;
    int16: Int16Array;
    uint32: Uint32Array;
    int32: Int32Array;
    float32: Float32Array;
    float64: Float64Array;
    uint64: BigUint64Array;
    int64: BigInt64Array;
    bool: boolean[];
    string: string[];
    array: GgufArray[];
};

/** A GGUF scalar type name (`gguf_type` minus `GGUF_TYPE_ARRAY`). */
export type GgufScalarTypeName = keyof ScalarStorage;

/** Any GGUF value type name, as in llama.cpp's `gguf_type` (uint8 = 0 … float64 = 12). */
export type GgufValueTypeName = GgufScalarTypeName | "array";

/** A scalar metadata value, discriminated by `type`. */
export type GgufScalar = {[K in GgufScalarTypeName]: {readonly type: K; readonly value: ScalarStorage[K]}}[GgufScalarTypeName];

/** An array metadata value, discriminated by `elementType`; arrays of arrays only when nesting was allowed. */
export type GgufArray = {
    [K in keyof ArrayStorage]: {readonly type: "array"; readonly elementType: K; readonly value: ArrayStorage[K]};
}[keyof ArrayStorage];

/** One metadata value. */
export type GgufMetadataValue = GgufScalar | GgufArray;

/** A tensor's info, checked against the file: its data lies in `[dataOffset + offset, dataOffset + offset + bytes)`. */
export type ValidatedGgufTensor = {
    readonly name: string;
    readonly type: GgmlTypeInfo;
    /** Elements per dimension in file (`ne`) order: `shape[0]` is the row length. 1–4 entries, each ≥ 1. */
    readonly shape: readonly bigint[];
    /** Offset of the tensor's data relative to the start of the data section. */
    readonly offset: bigint;
    /** Bytes of data (without alignment padding). */
    readonly bytes: bigint;
    /** Number of elements (product of `shape`). */
    readonly elements: bigint;
};

/** A GGUF file whose header passed every check of `validateGgufFile`. */
export type ValidatedGguf = {
    readonly version: 2 | 3;
    /** `general.alignment`, or 32. */
    readonly alignment: number;
    /** Metadata in file order. */
    readonly metadata: ReadonlyMap<string, GgufMetadataValue>;
    /** Tensors in file order (which is also data order). */
    readonly tensors: readonly ValidatedGgufTensor[];
    /** File offset of the data section (the aligned end of the header). */
    readonly dataOffset: bigint;
    readonly fileSize: bigint;
};

/** Limits for `validateGgufFile`. */
export type ValidateGgufOptions = {
    /**
     * Cap on the estimated in-memory size of all metadata (keys, values, arrays, strings).
     * Defaults to 256 MiB.
     */
    maxMetadataBytes?: number;
    /** Cap on any one string (keys, values, tensor names). Defaults to 64 MiB. */
    maxStringBytes?: number;
    /** Cap on the number of tensors. Defaults to 131072 (real models have a few thousand at most). */
    maxTensorCount?: number;
    /**
     * How deep arrays may nest: 1 allows arrays of scalars/strings only, which is all llama.cpp's `gguf.cpp` accepts.
     * Defaults to `1`.
     */
    maxArrayDepth?: number;
    /**
     * Only the first this many bytes of the file hold its real content (a header fetched over HTTP Range into a sparse
     * file of the model's full size, electron/engine/hub/fetchRemoteHeader.ts): the header must lie inside them (a read
     * past them is `truncated`), while tensor data is checked against the whole file's size. Defaults to the file size.
     */
    headerBytesAvailable?: number;
};
