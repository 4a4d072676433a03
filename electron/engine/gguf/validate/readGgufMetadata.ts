import {endianness} from "node:os";
import {GgufValidationError} from "../errors/GgufValidationError.js";
import type {GgufArray, GgufMetadataValue, GgufValueTypeName} from "../types/ValidatedGguf.js";
import type {GgufReader} from "./GgufReader.js";
import {quoteFileText} from "./quoteFileText.js";

/** source: `enum gguf_type` in ggml/include/gguf.h (ids are the index). */
const valueTypeNames: readonly GgufValueTypeName[] = [
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"
];
/** Bytes of a fixed-size value type; strings and arrays are variable. */
const fixedSizes: Partial<Record<GgufValueTypeName, number>> = {
    uint8: 1, int8: 1, uint16: 2, int16: 2, uint32: 4, int32: 4, float32: 4, bool: 1, uint64: 8, int64: 8, float64: 8
};
/** source: GGUF_MAX_ARRAY_ELEMENTS in ggml/src/gguf.cpp. */
const maxArrayElements = 2 ** 30;
/** Smallest encoding of a string (its uint64 length) and of an array (uint32 type + uint64 count). */
const minStringBytes = 8;
const minArrayBytes = 12;
/** Estimated JS heap cost of bookkeeping objects, charged against the metadata budget. */
const entryOverheadBytes = 64;
const stringOverheadBytes = 32;
/** One slot of a JS array (a pointer); charged before an array of `count` strings, booleans or arrays is allocated. */
const arraySlotBytes = 8;
const hostIsLittleEndian = endianness() === "LE";
const strictUtf8 = new TextDecoder("utf-8", {fatal: true});

/**
 * Called with each string of a top-level string array, as decoded (invalid UTF-8 replaced by U+FFFD) and, on demand,
 * as raw bytes (`raw()` is only valid during the call).
 */
export type StringArrayVisitor = (value: string, index: number, offset: number, raw: () => Buffer) => void;

/** Limits and hooks for `readGgufMetadata`. */
export type ReadGgufMetadataOptions = {
    maxMetadataBytes: number;
    maxStringBytes: number;
    maxArrayDepth: number;
    /** Returns a visitor for the string array stored under `key`, if that array should be watched. */
    visitStringArray?: (key: string) => StringArrayVisitor | undefined;
};

/** Metadata in file order, with the file offset each entry starts at (for error messages). */
export type ReadMetadata = {
    readonly metadata: Map<string, GgufMetadataValue>;
    readonly entryOffsets: Map<string, number>;
};

/** Reads `count` key–value pairs, enforcing known value types, unique non-empty keys and the memory limits. */
export function readGgufMetadata(reader: GgufReader, count: number, options: ReadGgufMetadataOptions): ReadMetadata {
    const state = new MetadataState(reader, options);
    const metadata = new Map<string, GgufMetadataValue>();
    const entryOffsets = new Map<string, number>();
    for (let i = 0; i < count; i++) {
        const entryOffset = reader.position;
        const key = state.readKey(i);
        if (metadata.has(key))
            throw new GgufValidationError("duplicate-key", `metadata key ${quoteFileText(key)} (entry ${i}) appears twice`, entryOffset);

        state.charge(entryOverheadBytes + 2 * key.length, `key ${quoteFileText(key)}`);
        entryOffsets.set(key, entryOffset);
        metadata.set(key, state.readValue(key, state.readType(`type of ${quoteFileText(key)}`), 0));
    }
    return {metadata, entryOffsets};
}

class MetadataState {
    private used = 0;

    public constructor(private readonly reader: GgufReader, private readonly options: ReadGgufMetadataOptions) {}

    public charge(bytes: number, what: string): void {
        this.used += bytes;
        if (this.used > this.options.maxMetadataBytes)
            throw new GgufValidationError(
                "metadata-too-large",
                `metadata exceeds the ${this.options.maxMetadataBytes}-byte limit while reading ${what}`,
                this.reader.position
            );
    }

    public readKey(index: number): string {
        const at = this.reader.position;
        const raw = this.readStringBytes(`key of metadata entry ${index}`);
        if (raw.length === 0)
            throw new GgufValidationError("empty-key", `metadata entry ${index} has an empty key`, at);

        let key: string;
        try {
            key = strictUtf8.decode(raw);
        } catch {
            throw new GgufValidationError("bad-key", `key of metadata entry ${index} is not valid UTF-8`, at);
        }
        if (key.includes("\0"))
            throw new GgufValidationError("bad-key", `key of metadata entry ${index} contains a NUL byte`, at);
        return key;
    }

    public readType(what: string): GgufValueTypeName {
        const at = this.reader.position;
        const id = this.reader.u32(what);
        const name = valueTypeNames[id];
        if (name === undefined)
            throw new GgufValidationError("bad-value-type", `${what} is ${id}, not a GGUF value type (0–12)`, at);
        return name;
    }

    public readValue(key: string, type: GgufValueTypeName, depth: number): GgufMetadataValue {
        const what = `value of ${quoteFileText(key)}`;
        const r = this.reader;
        switch (type) {
            case "uint8": return {type, value: r.u8(what)};
            case "int8": return {type, value: r.i8(what)};
            case "uint16": return {type, value: r.u16(what)};
            case "int16": return {type, value: r.i16(what)};
            case "uint32": return {type, value: r.u32(what)};
            case "int32": return {type, value: r.i32(what)};
            case "float32": return {type, value: r.f32(what)};
            case "float64": return {type, value: r.f64(what)};
            case "uint64": return {type, value: r.u64(what)};
            case "int64": return {type, value: r.i64(what)};
            case "bool": return {type, value: r.i8(what) !== 0};
            case "string": {
                const length = this.readStringLength(what);
                this.charge(stringOverheadBytes + 2 * length, what);
                return {type, value: r.utf8(length, what)};
            }
            case "array": return this.readArray(key, depth + 1);
        }
    }

    private readArray(key: string, depth: number): GgufArray {
        const r = this.reader;
        const at = r.position;
        if (depth > this.options.maxArrayDepth)
            throw new GgufValidationError(
                "array-too-deep",
                `${quoteFileText(key)} nests arrays ${depth} deep; the limit is ${this.options.maxArrayDepth}` +
                    (this.options.maxArrayDepth === 1 ? " (llama.cpp does not accept arrays of arrays)" : ""),
                at
            );

        const elementType = this.readType(`element type of array ${quoteFileText(key)}`);
        const countAt = r.position;
        const declared = r.u64(`element count of array ${quoteFileText(key)}`);
        if (declared > BigInt(maxArrayElements))
            throw new GgufValidationError(
                "count-too-large",
                `array ${quoteFileText(key)} declares ${declared} elements; the limit is ${maxArrayElements}`,
                countAt
            );
        const count = Number(declared);
        const elementBytes = fixedSizes[elementType] ?? (elementType === "string" ? minStringBytes : minArrayBytes);
        if (count * elementBytes > r.remaining)
            throw new GgufValidationError(
                "truncated",
                `array ${quoteFileText(key)} declares ${count} ${elementType} elements, at least ${count * elementBytes} bytes, ` +
                    `but the file ends ${r.remaining} bytes later (truncated, or the count is corrupt)`,
                countAt
            );

        const what = `array ${quoteFileText(key)}`;
        switch (elementType) {
            case "string": return {type: "array", elementType, value: this.readStrings(key, count, depth)};
            case "array": {
                this.charge(entryOverheadBytes + (arraySlotBytes + entryOverheadBytes) * count, what);
                const value: GgufArray[] = [];
                for (let i = 0; i < count; i++) {
                    const inner = this.readValue(key, "array", depth);
                    if (inner.type === "array")
                        value.push(inner);
                }
                return {type: "array", elementType, value};
            }
            case "bool": {
                this.charge(entryOverheadBytes + arraySlotBytes * count, what);
                const value: boolean[] = new Array<boolean>(count);
                for (let i = 0; i < count; i++)
                    value[i] = r.i8(what) !== 0;
                return {type: "array", elementType, value};
            }
            default: {
                this.charge(entryOverheadBytes + elementBytes * count, what);
                const raw = new Uint8Array(elementBytes * count);
                r.readInto(raw, what);
                if (!hostIsLittleEndian && elementBytes > 1)
                    swapBytes(raw, elementBytes);
                return numericArray(elementType, raw.buffer);
            }
        }
    }

    private readStrings(key: string, count: number, depth: number): string[] {
        const visit = depth === 1 ? this.options.visitStringArray?.(key) : undefined;
        const what = `an element of array ${quoteFileText(key)}`;
        this.charge(entryOverheadBytes + arraySlotBytes * count, what);
        const r = this.reader;
        const value: string[] = new Array<string>(count);
        for (let i = 0; i < count; i++) {
            const at = r.position;
            const length = this.readStringLength(what);
            this.charge(stringOverheadBytes - arraySlotBytes + 2 * length, what);
            const text = r.utf8(length, what);
            visit?.(text, i, at, () => r.justRead(length));
            value[i] = text;
        }
        return value;
    }

    /** A length-prefixed string's bytes (a view valid until the next read). */
    private readStringBytes(what: string): Buffer {
        return this.reader.bytes(this.readStringLength(what), what);
    }

    /** A string's length field, checked against `maxStringBytes`. */
    private readStringLength(what: string): number {
        const at = this.reader.position;
        const length = this.reader.u64Number(`length of ${what}`);
        if (length > this.options.maxStringBytes)
            throw new GgufValidationError(
                "string-too-long",
                `${what} declares ${length} bytes; the limit is ${this.options.maxStringBytes}`,
                at
            );
        return length;
    }
}

function numericArray(elementType: GgufValueTypeName, buffer: ArrayBuffer): GgufArray {
    switch (elementType) {
        case "uint8": return {type: "array", elementType, value: new Uint8Array(buffer)};
        case "int8": return {type: "array", elementType, value: new Int8Array(buffer)};
        case "uint16": return {type: "array", elementType, value: new Uint16Array(buffer)};
        case "int16": return {type: "array", elementType, value: new Int16Array(buffer)};
        case "uint32": return {type: "array", elementType, value: new Uint32Array(buffer)};
        case "int32": return {type: "array", elementType, value: new Int32Array(buffer)};
        case "float32": return {type: "array", elementType, value: new Float32Array(buffer)};
        case "float64": return {type: "array", elementType, value: new Float64Array(buffer)};
        case "uint64": return {type: "array", elementType, value: new BigUint64Array(buffer)};
        case "int64": return {type: "array", elementType, value: new BigInt64Array(buffer)};
        default: throw new Error(`not a numeric GGUF type: ${elementType}`);
    }
}

function swapBytes(raw: Uint8Array, width: number): void {
    const buffer = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    if (width === 2) buffer.swap16();
    else if (width === 4) buffer.swap32();
    else buffer.swap64();
}
