import {open, rm, type FileHandle} from "node:fs/promises";
import {getGgmlTypeByName, ggmlTensorBytes, type GgmlTypeInfo} from "../gguf/ggmlTypes.js";
import {GgufByteEncoder, type GgufMetadataValue} from "./ggufValue.js";

export {ggufValue, type GgufMetadataValue} from "./ggufValue.js";

/** "GGUF" little-endian. source: gguf.h `GGUF_MAGIC` */
const ggufMagic = new Uint8Array([0x47, 0x47, 0x55, 0x46]);
/** source: gguf.h `GGUF_VERSION` */
const ggufVersion = 3;
/** source: gguf.h `GGUF_DEFAULT_ALIGNMENT` */
export const defaultGgufAlignment = 32;
/** source: ggml.h `GGML_MAX_NAME` (64 including the terminator) and `GGML_MAX_DIMS` */
const maxTensorNameBytes = 63;
const maxTensorDims = 4;
/** Zero padding is written from this buffer; no tensor needs more than `alignment - 1` bytes of it. */
const zeroPadding = new Uint8Array(4096);

/** A tensor to be declared in the GGUF header. */
export type GgufTensorSpec = {
    readonly name: string;
    /** Dimensions, `ne[0]` (the row length) first, as in ggml and GGUF. */
    readonly shape: readonly (number | bigint)[];
    /** A ggml type or its name, e.g. `"q8_0"`. */
    readonly type: GgmlTypeInfo | string;
};

/** A tensor as laid out in the file. */
export type GgufTensorLayout = {
    readonly name: string;
    readonly shape: readonly bigint[];
    readonly type: GgmlTypeInfo;
    /** Offset from the start of the data section (a multiple of the alignment). */
    readonly offset: number;
    /** Bytes of tensor data, before padding. */
    readonly bytes: number;
};

/** What goes into a GGUF file. */
export type GgufWriterOptions = {
    /** Metadata key/value pairs, written in insertion order. */
    readonly metadata: Readonly<Record<string, GgufMetadataValue>>;
    /** Tensors, written in this order. */
    readonly tensors: readonly GgufTensorSpec[];
    /**
     * Alignment of the data section and of every tensor (a power of two). When it is not the default, a
     * `general.alignment` key is added unless the metadata already has one (which must then agree).
     *
     * Defaults to `32`.
     */
    readonly alignment?: number;
};

function padTo(value: number, alignment: number): number {
    return Math.ceil(value / alignment) * alignment;
}

function resolveTensor(spec: GgufTensorSpec, offset: number): GgufTensorLayout {
    const type = typeof spec.type === "string" ? getGgmlTypeByName(spec.type) : spec.type;
    if (type === undefined)
        throw new TypeError(`tensor "${spec.name}": unknown ggml type "${String(spec.type)}"`);
    if (new TextEncoder().encode(spec.name).length > maxTensorNameBytes)
        throw new RangeError(`tensor "${spec.name}": name longer than ${maxTensorNameBytes} bytes`);
    if (spec.shape.length === 0 || spec.shape.length > maxTensorDims)
        throw new RangeError(`tensor "${spec.name}": ${spec.shape.length} dimensions (1 to ${maxTensorDims} allowed)`);
    const shape = spec.shape.map((dim) => BigInt(dim));
    if (shape.some((dim) => dim < 1n))
        throw new RangeError(`tensor "${spec.name}": dimensions must be positive, got [${shape.join(", ")}]`);
    const bytes = ggmlTensorBytes(type, shape);
    if (bytes > BigInt(Number.MAX_SAFE_INTEGER))
        throw new RangeError(`tensor "${spec.name}": too large`);
    return {name: spec.name, shape, type, offset, bytes: Number(bytes)};
}

function resolveAlignment(options: GgufWriterOptions): {alignment: number; metadata: Record<string, GgufMetadataValue>} {
    const metadata: Record<string, GgufMetadataValue> = {...options.metadata};
    const given = metadata["general.alignment"];
    let alignment = options.alignment ?? defaultGgufAlignment;
    if (given !== undefined) {
        if (given.type !== "uint32")
            throw new TypeError(`metadata "general.alignment" must be a uint32, got ${given.type}`);
        if (options.alignment !== undefined && options.alignment !== given.value)
            throw new RangeError(`alignment ${options.alignment} disagrees with general.alignment ${given.value}`);
        alignment = given.value;
    } else if (alignment !== defaultGgufAlignment)
        metadata["general.alignment"] = {type: "uint32", value: alignment};
    if (!Number.isInteger(alignment) || alignment < 1 || (alignment & (alignment - 1)) !== 0 || alignment > zeroPadding.length)
        throw new RangeError(`alignment ${alignment} is not a power of two up to ${zeroPadding.length}`);
    return {alignment, metadata};
}

/**
 * Writes a GGUF v3 file as a stream: the header (metadata and tensor infos) when created, then each tensor's data,
 * in declaration order, through {@link GgufWriter.writeTensorData}, with zero padding to the alignment between
 * tensors. Memory use is the header plus whatever chunks the caller hands in.
 *
 * source: ggml/src/gguf.cpp `gguf_write_to_buf` (layout) and `gguf_init_from_file_impl` (what the reader checks)
 */
export class GgufWriter {
    /** Tensors with their offsets, in file order. */
    public readonly tensors: readonly GgufTensorLayout[];
    /** Byte offset of the data section in the file. */
    public readonly dataOffset: number;
    /** Size of the finished file in bytes. */
    public readonly totalBytes: number;
    public readonly alignment: number;

    private handle: FileHandle | undefined;
    private written = 0;
    private tensorIndex = 0;
    private tensorWritten = 0;

    private constructor(
        private readonly path: string,
        handle: FileHandle,
        layout: {tensors: GgufTensorLayout[]; dataOffset: number; totalBytes: number; alignment: number}
    ) {
        this.handle = handle;
        this.tensors = layout.tensors;
        this.dataOffset = layout.dataOffset;
        this.totalBytes = layout.totalBytes;
        this.alignment = layout.alignment;
    }

    /** Creates (or truncates) `path` and writes the header. */
    public static async create(path: string, options: GgufWriterOptions): Promise<GgufWriter> {
        const {alignment, metadata} = resolveAlignment(options);
        const tensors: GgufTensorLayout[] = [];
        const names = new Set<string>();
        let dataBytes = 0;
        for (const spec of options.tensors) {
            if (names.has(spec.name))
                throw new RangeError(`duplicate tensor name "${spec.name}"`);
            names.add(spec.name);
            const tensor = resolveTensor(spec, dataBytes);
            tensors.push(tensor);
            dataBytes += padTo(tensor.bytes, alignment);
        }

        const header = new GgufByteEncoder();
        header.bytes(ggufMagic);
        header.u32(ggufVersion);
        header.u64(BigInt(tensors.length));
        header.u64(BigInt(Object.keys(metadata).length));
        for (const [key, value] of Object.entries(metadata))
            header.keyValue(key, value);
        for (const tensor of tensors) {
            header.string(tensor.name);
            header.u32(tensor.shape.length);
            for (const dim of tensor.shape)
                header.u64(dim);
            header.u32(tensor.type.id);
            header.u64(BigInt(tensor.offset));
        }
        const dataOffset = padTo(header.length, alignment);
        header.bytes(zeroPadding.subarray(0, dataOffset - header.length)); // like gguf_write_out, even with no tensors
        const headerChunks = header.finish();

        const handle = await open(path, "w");
        const writer = new GgufWriter(path, handle, {
            tensors, dataOffset, alignment, totalBytes: dataOffset + dataBytes
        });
        try {
            for (const chunk of headerChunks)
                await writer.writeRaw(chunk);
        } catch (error) {
            await writer.abort();
            throw error;
        }
        return writer;
    }

    /** Bytes written to the file so far. */
    public get bytesWritten(): number {
        return this.written;
    }

    /** The tensor whose data {@link writeTensorData} appends to next, or `undefined` once all are written. */
    public get currentTensor(): GgufTensorLayout | undefined {
        return this.tensors[this.tensorIndex];
    }

    /** Bytes of the current tensor's data still to be written. */
    public get currentTensorRemaining(): number {
        return (this.currentTensor?.bytes ?? 0) - this.tensorWritten;
    }

    /**
     * Appends `chunk` to the current tensor's data. A chunk may not run past the end of the current tensor; when a
     * tensor is complete its padding is written and the next tensor becomes current. `chunk` may be reused once the
     * returned promise resolves.
     */
    public async writeTensorData(chunk: Uint8Array): Promise<void> {
        const tensor = this.currentTensor;
        if (tensor === undefined)
            throw new RangeError("all tensors have already been written");
        if (chunk.length > this.currentTensorRemaining)
            throw new RangeError(
                `tensor "${tensor.name}": chunk of ${chunk.length} bytes exceeds the ${this.currentTensorRemaining} bytes left`
            );
        await this.writeRaw(chunk);
        this.tensorWritten += chunk.length;
        if (this.tensorWritten === tensor.bytes) {
            await this.writeRaw(zeroPadding.subarray(0, padTo(tensor.bytes, this.alignment) - tensor.bytes));
            this.tensorIndex++;
            this.tensorWritten = 0;
        }
    }

    /** Closes the file; throws if some tensor data is missing (the file is then left incomplete). */
    public async close(): Promise<void> {
        const handle = this.handle;
        this.handle = undefined;
        await handle?.close();
        if (this.currentTensor !== undefined)
            throw new Error(`GGUF file closed before tensor "${this.currentTensor.name}" was fully written`);
        if (this.written !== this.totalBytes)
            throw new Error(`GGUF file has ${this.written} bytes, expected ${this.totalBytes}`);
    }

    /** Closes the file and deletes it. */
    public async abort(): Promise<void> {
        const handle = this.handle;
        this.handle = undefined;
        try {
            await handle?.close();
        } finally {
            await rm(this.path, {force: true});
        }
    }

    private async writeRaw(bytes: Uint8Array): Promise<void> {
        const handle = this.handle;
        if (handle === undefined)
            throw new Error("GGUF writer is closed");
        let done = 0;
        while (done < bytes.length) {
            const {bytesWritten} = await handle.write(bytes, done, bytes.length - done);
            done += bytesWritten;
        }
        this.written += bytes.length;
    }
}
