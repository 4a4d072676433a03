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
