import {getGgmlType, ggmlTensorBytes} from "../ggmlTypes.js";

/**
 * Hand-rolled GGUF bytes for tests: a minimal writer whose every field can be overridden, so that the same code
 * writes both well-formed files and hostile ones. (Not the project's GGUF writer: that one refuses to write garbage.)
 */

/** Appends little-endian fields. */
export class ByteWriter {
    private readonly parts: Buffer[] = [];
    private size = 0;

    public get length(): number {
        return this.size;
    }

    public raw(bytes: Uint8Array): this {
        const buffer = Buffer.from(bytes);
        this.parts.push(buffer);
        this.size += buffer.length;
        return this;
    }

    public u8(value: number): this {
        return this.fixed(1, (b) => b.writeUInt8(value));
    }

    public u32(value: number): this {
        return this.fixed(4, (b) => b.writeUInt32LE(value));
    }

    public i32(value: number): this {
        return this.fixed(4, (b) => b.writeInt32LE(value));
    }

    public u64(value: number | bigint): this {
        return this.fixed(8, (b) => b.writeBigUInt64LE(BigInt(value)));
    }

    public f32(value: number): this {
        return this.fixed(4, (b) => b.writeFloatLE(value));
    }

    /** A GGUF string: uint64 byte length, then the bytes. `declaredLength` overrides the length field. */
    public str(value: string | Uint8Array, declaredLength?: number | bigint): this {
        const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : Buffer.from(value);
        return this.u64(declaredLength ?? bytes.length).raw(bytes);
    }

    public toBuffer(): Buffer {
        return Buffer.concat(this.parts, this.size);
    }

    private fixed(bytes: number, write: (buffer: Buffer) => void): this {
        const buffer = Buffer.alloc(bytes);
        write(buffer);
        return this.raw(buffer);
    }
}

/** GGUF value type ids (`enum gguf_type`). */
export const GgufType = {
    uint8: 0, int8: 1, uint16: 2, int16: 3, uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9,
    uint64: 10, int64: 11, float64: 12
} as const;

/** One metadata entry: its key and a function writing its type id and value. */
export type TinyKv = {readonly key: string | Uint8Array; readonly writeValue: (w: ByteWriter) => void};

/** Metadata entry builders (`kv.u32(key, 1)`, …); `kv.raw` writes anything, for hostile entries. */
export const kv = {
    u32: (key: string, value: number): TinyKv => ({key, writeValue: (w) => w.u32(GgufType.uint32).u32(value)}),
    u64: (key: string, value: bigint): TinyKv => ({key, writeValue: (w) => w.u32(GgufType.uint64).u64(value)}),
    i32: (key: string, value: number): TinyKv => ({key, writeValue: (w) => w.u32(GgufType.int32).i32(value)}),
    f32: (key: string, value: number): TinyKv => ({key, writeValue: (w) => w.u32(GgufType.float32).f32(value)}),
    str: (key: string, value: string): TinyKv => ({key, writeValue: (w) => w.u32(GgufType.string).str(value)}),
    u32s: (key: string, values: readonly number[]): TinyKv => ({
        key,
        writeValue: (w) => {
            w.u32(GgufType.array).u32(GgufType.uint32).u64(values.length);
            values.forEach((value) => w.u32(value));
        }
    }),
    strings: (key: string, values: readonly (string | Uint8Array)[]): TinyKv => ({
        key,
        writeValue: (w) => {
            w.u32(GgufType.array).u32(GgufType.string).u64(values.length);
            values.forEach((value) => w.str(value));
        }
    }),
    f32s: (key: string, values: readonly number[]): TinyKv => ({
        key,
        writeValue: (w) => {
            w.u32(GgufType.array).u32(GgufType.float32).u64(values.length);
            values.forEach((value) => w.f32(value));
        }
    }),
    i32s: (key: string, values: readonly number[]): TinyKv => ({
        key,
        writeValue: (w) => {
            w.u32(GgufType.array).u32(GgufType.int32).u64(values.length);
            values.forEach((value) => w.i32(value));
        }
    }),
    /** Anything: `writeValue` writes the type id and value bytes itself. */
    raw: (key: string | Uint8Array, writeValue: (w: ByteWriter) => void): TinyKv => ({key, writeValue})
};

/** A tensor: `typeId` is the ggml type; its data is zero bytes unless given. */
export type TinyTensor = {
    readonly name: string | Uint8Array;
    readonly shape: readonly (number | bigint)[];
    readonly typeId: number;
    /** Overrides the offset that would pack it after the previous tensor. */
    readonly offset?: bigint;
    /** Overrides the number of data bytes written (needed for types or shapes the table cannot size). */
    readonly dataBytes?: number;
    /** Overrides the number of dims written (the shape still lists the dims written). */
    readonly dimCount?: number;
};

export type TinyGgufSpec = {
    readonly version?: number;
    readonly magic?: string;
    readonly kvs?: readonly TinyKv[];
    readonly tensors?: readonly TinyTensor[];
    /** Alignment used to place tensor data; must match `general.alignment` if that is among the kvs. */
    readonly alignment?: number;
    readonly tensorCount?: bigint;
    readonly kvCount?: bigint;
};

/** The bytes and where its sections start. */
export type TinyGguf = {
    readonly bytes: Buffer;
    readonly kvStart: number;
    /** File offset of each metadata entry. */
    readonly kvStarts: readonly number[];
    readonly tensorInfoStart: number;
    /** File offset of each tensor info. */
    readonly tensorInfoStarts: readonly number[];
    readonly dataStart: number;
    /** File offset of each tensor's data. */
    readonly tensorDataStarts: readonly number[];
};

const maxPlacedEnd = 1n << 20n;

/** Writes a GGUF file image from `spec`; tensor data is packed in order, each padded to the alignment. */
export function buildTinyGguf(spec: TinyGgufSpec): TinyGguf {
    const alignment = spec.alignment ?? 32;
    const kvs = spec.kvs ?? [];
    const tensors = spec.tensors ?? [];
    const w = new ByteWriter()
        .raw(Buffer.from(spec.magic ?? "GGUF", "latin1"))
        .u32(spec.version ?? 3)
        .u64(spec.tensorCount ?? BigInt(tensors.length))
        .u64(spec.kvCount ?? BigInt(kvs.length));

    const kvStart = w.length;
    const kvStarts: number[] = [];
    for (const entry of kvs) {
        kvStarts.push(w.length);
        w.str(entry.key);
        entry.writeValue(w);
    }

    const tensorInfoStart = w.length;
    const tensorInfoStarts: number[] = [];
    const sizes = tensors.map((tensor) => tensor.dataBytes ?? tensorBytes(tensor));
    let packed = 0;
    const offsets: bigint[] = [];
    tensors.forEach((tensor, i) => {
        offsets.push(tensor.offset ?? BigInt(packed));
        packed = alignTo(packed + (sizes[i] ?? 0), alignment);
        tensorInfoStarts.push(w.length);
        w.str(tensor.name).u32(tensor.dimCount ?? tensor.shape.length);
        tensor.shape.forEach((dim) => w.u64(dim));
        w.i32(tensor.typeId).u64(offsets[i] ?? 0n);
    });

    const dataStart = alignTo(w.length, alignment);
    // Room for tensors placed by hand, unless placed absurdly far (hostile offsets point past the end on purpose).
    const placedEnds = offsets.map((offset, i) => offset + BigInt(sizes[i] ?? 0)).filter((end) => end <= maxPlacedEnd);
    const dataLength = placedEnds.reduce((length, end) => Math.max(length, alignTo(Number(end), alignment)), packed);
    const data = Buffer.alloc(dataLength);
    for (let i = 0; i < data.length; i++)
        data[i] = (i * 31 + 7) & 0xff;
    const image = Buffer.concat([w.toBuffer(), Buffer.alloc(dataStart - w.length), data]);
    const tensorDataStarts = offsets.map((offset) => dataStart + Number(offset));
    return {bytes: image, kvStart, kvStarts, tensorInfoStart, tensorInfoStarts, dataStart, tensorDataStarts};
}

function tensorBytes(tensor: TinyTensor): number {
    const type = getGgmlType(tensor.typeId);
    if (type === undefined)
        return 0;
    return Number(ggmlTensorBytes(type, tensor.shape.map((dim) => BigInt(dim))));
}

function alignTo(value: number, alignment: number): number {
    return Math.ceil(value / alignment) * alignment;
}

/** ggml type ids used by the tests. */
export const GgmlTypeId = {f32: 0, f16: 1, q8_0: 8} as const;

/** Embedding width, FFN width, vocabulary and layer count of `tinyLlamaSpec`. */
export const tinyLlama = {embd: 32, ff: 64, vocab: 6, layers: 2} as const;

/**
 * A well-formed, llama-shaped two-layer model with F32, F16 and Q8_0 tensors and a six-token vocabulary.
 * `extraKvs` are appended to the metadata; `tensors` replaces the tensor list.
 */
export function tinyLlamaSpec(overrides: {extraKvs?: readonly TinyKv[]; tensors?: readonly TinyTensor[]} = {}): TinyGgufSpec {
    const {embd, ff, vocab, layers} = tinyLlama;
    const tokens = ["<unk>", "<s>", "</s>", "a", "b", "ab"];
    const layerTensors = Array.from({length: layers}, (_, layer): TinyTensor[] => [
        {name: `blk.${layer}.attn_norm.weight`, shape: [embd], typeId: GgmlTypeId.f32},
        {name: `blk.${layer}.attn_q.weight`, shape: [embd, embd], typeId: GgmlTypeId.q8_0},
        {name: `blk.${layer}.attn_k.weight`, shape: [embd, embd / 2], typeId: GgmlTypeId.q8_0},
        {name: `blk.${layer}.attn_v.weight`, shape: [embd, embd / 2], typeId: GgmlTypeId.q8_0},
        {name: `blk.${layer}.attn_output.weight`, shape: [embd, embd], typeId: GgmlTypeId.q8_0},
        {name: `blk.${layer}.ffn_norm.weight`, shape: [embd], typeId: GgmlTypeId.f32},
        {name: `blk.${layer}.ffn_gate.weight`, shape: [embd, ff], typeId: GgmlTypeId.q8_0},
        {name: `blk.${layer}.ffn_up.weight`, shape: [embd, ff], typeId: GgmlTypeId.q8_0},
        {name: `blk.${layer}.ffn_down.weight`, shape: [ff, embd], typeId: GgmlTypeId.q8_0}
    ]).flat();
    return {
        kvs: [
            kv.str("general.architecture", "llama"),
            kv.str("general.name", "Tiny Llama"),
            kv.u32("general.file_type", 7),
            kv.u32("general.alignment", 32),
            kv.u32("llama.block_count", layers),
            kv.u32("llama.context_length", 256),
            kv.u32("llama.embedding_length", embd),
            kv.u32("llama.feed_forward_length", ff),
            kv.u32("llama.attention.head_count", 4),
            kv.u32("llama.attention.head_count_kv", 2),
            kv.str("tokenizer.ggml.model", "llama"),
            kv.strings("tokenizer.ggml.tokens", tokens),
            kv.f32s("tokenizer.ggml.scores", tokens.map((_, i) => -i)),
            kv.i32s("tokenizer.ggml.token_type", tokens.map((_, i) => (i < 3 ? 3 : 1))),
            ...(overrides.extraKvs ?? [])
        ],
        tensors: overrides.tensors ?? [
            {name: "token_embd.weight", shape: [embd, vocab], typeId: GgmlTypeId.f16},
            ...layerTensors,
            {name: "output_norm.weight", shape: [embd], typeId: GgmlTypeId.f32},
            {name: "output.weight", shape: [embd, vocab], typeId: GgmlTypeId.q8_0}
        ]
    };
}
