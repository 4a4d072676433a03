import {GgufValidationError} from "../errors/GgufValidationError.js";
import type {GgufMetadataValue} from "../types/ValidatedGguf.js";
import type {StringArrayVisitor} from "./readGgufMetadata.js";

/** source: LLM_KV_TOKENIZER_LIST / _SCORES / _TOKEN_TYPE in src/llama-arch.cpp. */
export const tokensKey = "tokenizer.ggml.tokens";
const scoresKey = "tokenizer.ggml.scores";
const tokenTypeKey = "tokenizer.ggml.token_type";

/**
 * A visitor for `tokenizer.ggml.tokens` that rejects duplicate tokens the way llama.cpp sees them: it reads each token
 * as a C string (up to the first NUL) and renames an empty one to `[EMPTY_<id>]`, then asserts that all are distinct
 * (`GGML_ASSERT(id_to_token.size() == token_to_id.size())`, which aborts the whole process).
 *
 * source: `llama_vocab::impl::load` in src/llama-vocab.cpp.
 */
export function createDuplicateTokenVisitor(): StringArrayVisitor {
    const seen = new Map<string, number>();
    return (value, index, offset, raw) => {
        const word = cStringKey(value, raw) || `[EMPTY_${index}]`;
        const first = seen.get(word);
        if (first !== undefined)
            throw new GgufValidationError(
                "duplicate-token",
                `vocabulary token ${index} is the same text as token ${first}, and llama.cpp aborts on duplicate tokens`,
                offset
            );
        seen.set(word, index);
    };
}

/**
 * A key equal for two tokens exactly when their bytes up to the first NUL are equal. A NUL byte only ever decodes to
 * U+0000, and a prefix decoded without U+FFFD was valid UTF-8, so that prefix is the key; other tokens fall back to
 * their raw bytes as latin1, marked with a leading NUL so the two kinds of key cannot meet.
 */
function cStringKey(value: string, raw: () => Buffer): string {
    const nul = value.indexOf("\0");
    const prefix = nul === -1 ? value : value.slice(0, nul);
    if (!prefix.includes("\uFFFD"))
        return prefix;

    const bytes = raw();
    const nulByte = bytes.indexOf(0);
    return "\0" + bytes.toString("latin1", 0, nulByte === -1 ? bytes.length : nulByte);
}

/**
 * Checks the vocabulary arrays' types and lengths: tokens an array of strings; scores (float32 or int32) and token
 * types (int32), where present, exactly as long as tokens. llama.cpp only requires "at least as long".
 */
export function checkVocabularyArrays(
    metadata: ReadonlyMap<string, GgufMetadataValue>, entryOffsets: ReadonlyMap<string, number>
): void {
    const tokens = metadata.get(tokensKey);
    if (tokens === undefined)
        return;
    if (tokens.type !== "array" || tokens.elementType !== "string")
        throw new GgufValidationError("bad-vocab", `"${tokensKey}" must be an array of strings`, entryOffsets.get(tokensKey));

    const checkParallel = (key: string, allowed: readonly string[]): void => {
        const value = metadata.get(key);
        if (value === undefined)
            return;
        if (value.type !== "array" || !allowed.includes(value.elementType))
            throw new GgufValidationError(
                "bad-vocab", `"${key}" must be an array of ${allowed.join(" or ")}`, entryOffsets.get(key)
            );
        if (value.value.length !== tokens.value.length)
            throw new GgufValidationError(
                "bad-vocab",
                `"${key}" has ${value.value.length} entries but "${tokensKey}" has ${tokens.value.length}`,
                entryOffsets.get(key)
            );
    };
    checkParallel(scoresKey, ["float32", "int32"]);
    checkParallel(tokenTypeKey, ["int32"]);
}

const tokenizerModelKey = "tokenizer.ggml.model";

/**
 * GPT-2's byte-to-character table (`unicode_byte_to_utf8` in src/unicode.cpp): printable Latin-1 bytes stand for
 * themselves, the others for the characters from U+0100 on, in byte order.
 */
function gpt2ByteCharacter(byte: number): string {
    const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    if (printable(byte))
        return String.fromCharCode(byte);
    let shifted = 0;
    for (let b = 0; b < byte; b++)
        if (!printable(b))
            shifted++;
    return String.fromCharCode(0x100 + shifted);
}

/**
 * The first byte (as `"0x0A"`) that a SentencePiece (`llama`, `t5`) or byte-level BPE (`gpt2`) vocabulary has no token
 * for, or `null` when it has one for every byte (or uses another tokenizer). llama.cpp looks byte tokens up with
 * `std::map::at` while tokenizing, and a missing one throws `std::out_of_range` through C code, which ends the whole
 * process: such a model passes validation and loads, then dies on the first text that needs the byte.
 *
 * source: `llama_vocab::byte_to_token` and the SPM tokenizer's `resegment` in src/llama-vocab.cpp.
 */
export function missingByteToken(metadata: ReadonlyMap<string, GgufMetadataValue>): string | null {
    const model = metadata.get(tokenizerModelKey);
    const tokens = metadata.get(tokensKey);
    if (model?.type !== "string" || tokens?.type !== "array" || tokens.elementType !== "string")
        return null;
    const kind = model.value === "llama" || model.value === "t5" ? "spm" : model.value === "gpt2" ? "bpe" : null;
    if (kind == null)
        return null;
    const present = new Set(tokens.value as readonly string[]);
    for (let byte = 0; byte < 256; byte++) {
        const hex = `<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`;
        const found = kind === "spm"
            ? present.has(hex) || (byte > 0 && byte < 0x80 && present.has(String.fromCharCode(byte)))
            : present.has(gpt2ByteCharacter(byte));
        if (!found)
            return hex.slice(1, -1);
    }
    return null;
}
