import {closeSync, fstatSync, openSync} from "node:fs";
import {GgufValidationError} from "./errors/GgufValidationError.js";
import type {GgufMetadataValue, ValidatedGguf, ValidateGgufOptions} from "./types/ValidatedGguf.js";
import {GgufReader} from "./validate/GgufReader.js";
import {alignUp, checkTensorLayout} from "./validate/checkTensorLayout.js";
import {checkModelHparams} from "./validate/checkModelHparams.js";
import {checkVocabularyArrays, createDuplicateTokenVisitor, tokensKey} from "./validate/checkVocabulary.js";
import {readGgufMetadata} from "./validate/readGgufMetadata.js";
import {minTensorInfoBytes, readGgufTensorInfos} from "./validate/readGgufTensorInfos.js";

export type {ValidatedGguf, ValidatedGgufTensor, ValidateGgufOptions} from "./types/ValidatedGguf.js";

const defaultMaxMetadataBytes = 256 * 2 ** 20;
const defaultMaxStringBytes = 64 * 2 ** 20;
const defaultMaxTensorCount = 131_072;
const defaultMaxArrayDepth = 1;
/** Real models have a few dozen metadata entries. */
const maxMetadataCount = 1 << 20;
/** Nesting beyond this is refused whatever the options say (the parser recurses once per level). */
const hardMaxArrayDepth = 16;

/** source: GGUF_MAGIC, GGUF_VERSION and GGUF_DEFAULT_ALIGNMENT in ggml/include/gguf.h. */
const magic = Buffer.from("GGUF", "latin1");
const newestVersion = 3;
const defaultAlignment = 32;
const alignmentKey = "general.alignment";
/** Magic (4) + version (4) + tensor count (8) + metadata count (8). */
const fixedHeaderBytes = 24;
/** Smallest encoding of one metadata entry: key length (8) + 1 key byte + value type (4) + a 1-byte value. */
const minMetadataEntryBytes = 14;

/**
 * Validates a GGUF file's header against its size, with every read bounded, so that hostile files are rejected
 * quickly and without large allocations (see `ValidateGgufOptions` for the limits), then, for a model (a file with
 * `general.architecture`), the hyper-parameters llama.cpp would abort on and the tensor shapes they imply
 * (`checkModelHparams`). Rejects with a `GgufValidationError` whose `code` says what is wrong and whose message says
 * it in one sentence, quoting no file content but capped, printable keys and tensor names.
 *
 * The work is synchronous file I/O; run it through `validateGgufOutOfProcess` for files from untrusted sources.
 */
export async function validateGgufFile(path: string, options: ValidateGgufOptions = {}): Promise<ValidatedGguf> {
    return validateGgufFileSync(path, options);
}

/** Synchronous form of `validateGgufFile`. */
export function validateGgufFileSync(path: string, options: ValidateGgufOptions = {}): ValidatedGguf {
    let fd: number;
    try {
        fd = openSync(path, "r");
    } catch (error) {
        throw ioError(path, error);
    }
    try {
        const stat = fstatSync(fd);
        if (!stat.isFile())
            throw new GgufValidationError("io-error", `${path} is not a regular file`);
        return validateGgufFd(fd, stat.size, options);
    } catch (error) {
        if (error instanceof GgufValidationError)
            throw error;
        throw ioError(path, error);
    } finally {
        closeSync(fd);
    }
}

/** Validates the GGUF file open as `fd`, which has `fileSize` bytes. */
export function validateGgufFd(fd: number, fileSize: number, options: ValidateGgufOptions = {}): ValidatedGguf {
    const maxStringBytes = options.maxStringBytes ?? defaultMaxStringBytes;
    const maxTensorCount = options.maxTensorCount ?? defaultMaxTensorCount;
    const reader = new GgufReader(fd, Math.min(fileSize, options.headerBytesAvailable ?? fileSize));

    // The first bytes of a file that is not GGUF are not ours to show: the message names no file content.
    if (fileSize < magic.length)
        throw new GgufValidationError("truncated", "this file is not a GGUF model (it is too short to hold the GGUF signature)");
    if (!reader.bytes(magic.length, "the GGUF signature").equals(magic))
        throw new GgufValidationError("bad-magic", "this file is not a GGUF model (it does not start with the GGUF signature)");
    const version = readVersion(reader);

    const countsAt = reader.position;
    const declaredTensors = reader.u64("tensor count");
    const declaredEntries = reader.u64("metadata count");
    if (declaredTensors > BigInt(maxTensorCount) || declaredEntries > BigInt(maxMetadataCount))
        throw new GgufValidationError(
            "count-too-large",
            `header declares ${declaredTensors} tensors and ${declaredEntries} metadata entries; ` +
                `the limits are ${maxTensorCount} and ${maxMetadataCount}`,
            countsAt
        );
    const tensorCount = Number(declaredTensors);
    const metadataCount = Number(declaredEntries);
    const minBytes = metadataCount * minMetadataEntryBytes + tensorCount * minTensorInfoBytes;
    if (minBytes > reader.remaining)
        throw new GgufValidationError(
            "truncated",
            `header declares ${tensorCount} tensors and ${metadataCount} metadata entries, which need at least ` +
                `${minBytes} bytes, but the file ends ${reader.remaining} bytes after the ${fixedHeaderBytes}-byte ` +
                "header (truncated, or the counts are corrupt)",
            countsAt
        );

    const {metadata, entryOffsets} = readGgufMetadata(reader, metadataCount, {
        maxMetadataBytes: options.maxMetadataBytes ?? defaultMaxMetadataBytes,
        maxStringBytes,
        maxArrayDepth: Math.min(options.maxArrayDepth ?? defaultMaxArrayDepth, hardMaxArrayDepth),
        visitStringArray: (key) => key === tokensKey ? createDuplicateTokenVisitor() : undefined
    });
    const alignment = readAlignment(metadata, entryOffsets.get(alignmentKey));
    checkVocabularyArrays(metadata, entryOffsets);

    const {tensors, offsetFieldPositions} = readGgufTensorInfos(reader, tensorCount);
    const dataOffset = alignUp(BigInt(reader.position), BigInt(alignment));
    if (tensors.length > 0 && dataOffset > BigInt(fileSize))
        throw new GgufValidationError(
            "truncated",
            `the data section should start at byte ${dataOffset} (end of header aligned to ${alignment}) ` +
                `but the file has ${fileSize} bytes`,
            reader.position
        );
    checkTensorLayout(tensors, dataOffset, BigInt(fileSize), BigInt(alignment), offsetFieldPositions);
    checkModelHparams(metadata, tensors);

    return {version, alignment, metadata, tensors, dataOffset, fileSize: BigInt(fileSize)};
}

function readVersion(reader: GgufReader): 2 | 3 {
    const at = reader.position;
    const version = reader.u32("version");
    if (version === 2 || version === 3)
        return version;

    // source: gguf_init_from_reader — a big-endian file's version 3 reads as 0x03000000 on a little-endian host.
    let reason = `GGUF version ${version} is not supported; only versions 2 and 3 are`;
    if (version === 1)
        reason = "GGUF version 1 is no longer supported by llama.cpp; convert the model again";
    else if (version !== 0 && (version & 0xffff) === 0)
        reason = `GGUF version reads as ${version} (0x${version.toString(16)}): ` +
            "this looks like a big-endian GGUF file, which llama.cpp cannot load on a little-endian machine";
    else if (version > newestVersion)
        reason = `GGUF version ${version} is newer than the newest supported version ${newestVersion}`;
    throw new GgufValidationError("bad-version", reason, at);
}

function readAlignment(metadata: ReadonlyMap<string, GgufMetadataValue>, at: number | undefined): number {
    const value = metadata.get(alignmentKey);
    if (value === undefined)
        return defaultAlignment;
    if (value.type !== "uint32")
        throw new GgufValidationError("bad-alignment", `"${alignmentKey}" must be a uint32 but is ${value.type}`, at);
    if (value.value === 0 || (value.value & (value.value - 1)) !== 0)
        throw new GgufValidationError("bad-alignment", `"${alignmentKey}" is ${value.value}, not a power of two`, at);
    return value.value;
}

function ioError(path: string, error: unknown): GgufValidationError {
    const reason = error instanceof Error ? error.message : String(error);
    return new GgufValidationError("io-error", `cannot read ${path}: ${reason}`);
}
