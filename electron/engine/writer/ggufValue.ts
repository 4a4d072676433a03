/**
 * Typed GGUF metadata values and their binary encoding.
 *
 * source: ggml/src/gguf.cpp (`gguf_type`, `gguf_writer::write`), docs: ggml/docs/gguf.md
 */

/** GGUF value type ids. source: gguf.h `enum gguf_type` */
export const ggufValueTypeIds = {
    uint8: 0,
    int8: 1,
    uint16: 2,
    int16: 3,
    uint32: 4,
    int32: 5,
    float32: 6,
    bool: 7,
    string: 8,
    array: 9,
    uint64: 10,
    int64: 11,
    float64: 12
} as const;

/** GGUF value types held in a JS `number`. */
export type GgufNumberType = "uint8" | "int8" | "uint16" | "int16" | "uint32" | "int32" | "float32" | "float64";
/** GGUF value types held in a JS `bigint`. */
export type GgufBigIntType = "uint64" | "int64";
/** Any GGUF value type that may be an array item (nested arrays are not supported by llama.cpp's reader). */
export type GgufItemType = GgufNumberType | GgufBigIntType | "bool" | "string";

/** A typed GGUF metadata value. */
export type GgufMetadataValue =
    | {readonly type: GgufNumberType; readonly value: number}
    | {readonly type: GgufBigIntType; readonly value: bigint}
    | {readonly type: "bool"; readonly value: boolean}
    | {readonly type: "string"; readonly value: string}
    | {readonly type: "array"; readonly itemType: GgufNumberType; readonly value: ArrayLike<number>}
    | {readonly type: "array"; readonly itemType: GgufBigIntType; readonly value: ArrayLike<bigint>}
    | {readonly type: "array"; readonly itemType: "bool"; readonly value: ArrayLike<boolean>}
    | {readonly type: "array"; readonly itemType: "string"; readonly value: ArrayLike<string>};

type ItemValue<T extends GgufItemType> =
    T extends GgufNumberType ? number : T extends GgufBigIntType ? bigint : T extends "bool" ? boolean : string;

/** Constructors for typed metadata values, e.g. `ggufValue.uint32(4096)`, `ggufValue.array("float32", scores)`. */
export const ggufValue = {
    uint8: (value: number): GgufMetadataValue => ({type: "uint8", value}),
    int8: (value: number): GgufMetadataValue => ({type: "int8", value}),
    uint16: (value: number): GgufMetadataValue => ({type: "uint16", value}),
    int16: (value: number): GgufMetadataValue => ({type: "int16", value}),
    uint32: (value: number): GgufMetadataValue => ({type: "uint32", value}),
    int32: (value: number): GgufMetadataValue => ({type: "int32", value}),
    float32: (value: number): GgufMetadataValue => ({type: "float32", value}),
    float64: (value: number): GgufMetadataValue => ({type: "float64", value}),
    uint64: (value: bigint): GgufMetadataValue => ({type: "uint64", value}),
    int64: (value: bigint): GgufMetadataValue => ({type: "int64", value}),
    bool: (value: boolean): GgufMetadataValue => ({type: "bool", value}),
    string: (value: string): GgufMetadataValue => ({type: "string", value}),
    array: <T extends GgufItemType>(itemType: T, value: ArrayLike<ItemValue<T>>): GgufMetadataValue =>
        ({type: "array", itemType, value}) as GgufMetadataValue
};

const integerRanges: Readonly<Record<"uint8" | "int8" | "uint16" | "int16" | "uint32" | "int32", readonly [number, number]>> = {
    uint8: [0, 0xff],
    int8: [-0x80, 0x7f],
    uint16: [0, 0xffff],
    int16: [-0x8000, 0x7fff],
    uint32: [0, 0xffffffff],
    int32: [-0x80000000, 0x7fffffff]
};

const bigIntRanges: Readonly<Record<GgufBigIntType, readonly [bigint, bigint]>> = {
    uint64: [0n, 0xffffffffffffffffn],
    int64: [-0x8000000000000000n, 0x7fffffffffffffffn]
};

const textEncoder = new TextEncoder();

/**
 * Appends GGUF-encoded values to a list of chunks (little-endian). Used for the header (metadata and tensor infos),
 * whose size is bounded by the metadata, never by tensor data.
 */
export class GgufByteEncoder {
    private readonly chunks: Uint8Array[] = [];
    private current: Uint8Array;
    private view: DataView;
    private used = 0;
    private flushedBytes = 0;

    public constructor(private readonly chunkSize = 1 << 20) {
        this.current = new Uint8Array(chunkSize);
        this.view = new DataView(this.current.buffer);
    }

    /** Bytes encoded so far. */
    public get length(): number {
        return this.flushedBytes + this.used;
    }

    /** The encoded bytes as a list of chunks; the encoder must not be used afterwards. */
    public finish(): Uint8Array[] {
        if (this.used > 0)
            this.chunks.push(this.current.subarray(0, this.used));
        this.flushedBytes += this.used;
        this.used = 0;
        return this.chunks;
    }

    private room(bytes: number): number {
        if (this.used + bytes > this.current.length) {
            this.chunks.push(this.current.subarray(0, this.used));
            this.flushedBytes += this.used;
            this.current = new Uint8Array(Math.max(this.chunkSize, bytes));
            this.view = new DataView(this.current.buffer);
            this.used = 0;
        }
        const at = this.used;
        this.used += bytes;
        return at;
    }

    public bytes(data: Uint8Array): void {
        const at = this.room(data.length); // reserve first: room() may switch to a new chunk
        this.current.set(data, at);
    }

    public u32(value: number): void {
        const at = this.room(4);
        this.view.setUint32(at, value, true);
    }

    public u64(value: bigint): void {
        const at = this.room(8);
        this.view.setBigUint64(at, value, true);
    }

    /** A GGUF string: u64 byte length, then UTF-8 bytes (no terminator). */
    public string(value: string): void {
        const utf8 = textEncoder.encode(value);
        this.u64(BigInt(utf8.length));
        this.bytes(utf8);
    }

    /** One value of a non-array type, range-checked. */
    public item(type: GgufItemType, value: number | bigint | boolean | string, key: string): void {
        switch (type) {
            case "string":
                if (typeof value !== "string")
                    throw new TypeError(`metadata "${key}": expected a string, got ${typeof value}`);
                this.string(value);
                return;
            case "bool": {
                if (typeof value !== "boolean")
                    throw new TypeError(`metadata "${key}": expected a boolean, got ${typeof value}`);
                const at = this.room(1);
                this.view.setUint8(at, value ? 1 : 0);
                return;
            }
            case "uint64":
            case "int64": {
                if (typeof value !== "bigint")
                    throw new TypeError(`metadata "${key}": expected a bigint for ${type}, got ${typeof value}`);
                const [min, max] = bigIntRanges[type];
                if (value < min || value > max)
                    throw new RangeError(`metadata "${key}": ${value} is out of ${type} range`);
                const at = this.room(8);
                this.view.setBigUint64(at, BigInt.asUintN(64, value), true);
                return;
            }
            case "float32":
            case "float64":
                if (typeof value !== "number")
                    throw new TypeError(`metadata "${key}": expected a number for ${type}, got ${typeof value}`);
                if (type === "float32") {
                    const at = this.room(4);
                    this.view.setFloat32(at, value, true);
                } else {
                    const at = this.room(8);
                    this.view.setFloat64(at, value, true);
                }
                return;
            default: {
                if (typeof value !== "number" || !Number.isInteger(value))
                    throw new TypeError(`metadata "${key}": expected an integer for ${type}, got ${String(value)}`);
                const [min, max] = integerRanges[type];
                if (value < min || value > max)
                    throw new RangeError(`metadata "${key}": ${value} is out of ${type} range`);
                const at = this.room(integerBytes[type]);
                if (type === "uint8") this.view.setUint8(at, value);
                else if (type === "int8") this.view.setInt8(at, value);
                else if (type === "uint16") this.view.setUint16(at, value, true);
                else if (type === "int16") this.view.setInt16(at, value, true);
                else if (type === "uint32") this.view.setUint32(at, value, true);
                else this.view.setInt32(at, value, true);
            }
        }
    }

    /** A metadata key/value pair: key string, u32 type id, then the value (arrays: item type id, u64 count, items). */
    public keyValue(key: string, entry: GgufMetadataValue): void {
        this.string(key);
        this.u32(ggufValueTypeIds[entry.type]);
        if (entry.type !== "array") {
            this.item(entry.type, entry.value, key);
            return;
        }
        this.u32(ggufValueTypeIds[entry.itemType]);
        const items: ArrayLike<number | bigint | boolean | string> = entry.value;
        this.u64(BigInt(items.length));
        for (let i = 0; i < items.length; i++) {
            const item = items[i];
            if (item === undefined)
                throw new TypeError(`metadata "${key}": array item ${i} is missing`);
            this.item(entry.itemType, item, key);
        }
    }
}

const integerBytes: Readonly<Record<keyof typeof integerRanges, number>> = {
    uint8: 1, int8: 1, uint16: 2, int16: 2, uint32: 4, int32: 4
};
