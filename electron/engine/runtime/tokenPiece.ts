/**
 * One generated token's own text and bytes, as OpenAI's logprobs report them (`token`, `bytes`).
 *
 * node-llama-cpp detokenizes to a JS string only (llama/addon/AddonModel.cpp `Detokenize` returns a Napi::String), so a
 * token holding part of a UTF-8 character comes back as U+FFFD. For those the bytes are read from the GGUF vocabulary as
 * llama.cpp's `llama_vocab::token_to_piece` does: an SPM byte token `<0xNN>` is the byte NN (`token_to_byte`), a BPE
 * token's text is GPT-2's byte-to-unicode encoding, reversed (`llama_decode_text`). A vocabulary of another kind reports
 * the UTF-8 bytes of the replacement character (said here, as docs/server.md says it). Written here, not taken from a
 * library: the byte map is 256 entries and no maintained package exposes llama.cpp's piece rules.
 */
import {LlamaVocabularyType, type LlamaModel, type Token} from "node-llama-cpp";

export type TokenPiece = {text: string; bytes: number[]};

/** One token of the reply (`token`: its id): its piece, its log-probability, and the most likely candidates at its position. */
export type TokenLogprob = TokenPiece & {token: number; logprob: number; top: (TokenPiece & {logprob: number})[]};

const REPLACEMENT = "\uFFFD";

/** GPT-2's `bytes_to_unicode` reversed (openai/gpt-2 src/encoder.py; llama.cpp unicode.cpp `unicode_utf8_to_byte`). */
const GPT2_CHAR_TO_BYTE: ReadonlyMap<string, number> = (() => {
    const map = new Map<string, number>();
    let extra = 0;
    for (let byte = 0; byte < 256; byte++) {
        const printable = (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
        map.set(String.fromCodePoint(printable ? byte : 256 + extra++), byte);
    }
    return map;
})();

/**
 * The piece of `token` following `previous` (llama_detokenize drops a SentencePiece token's leading space only when
 * nothing precedes it, so the caller passes what the reply's text was rendered after).
 */
export function tokenPiece(model: LlamaModel, token: Token, previous: readonly Token[]): TokenPiece {
    const text = model.detokenize([token], false, previous);
    if (!text.includes(REPLACEMENT))
        return {text, bytes: [...Buffer.from(text, "utf8")]};
    const vocabText = (model.fileInfo.metadata as {tokenizer?: {ggml?: {tokens?: readonly unknown[]}}}).tokenizer?.ggml?.tokens?.[token];
    if (typeof vocabText === "string") {
        const byteToken = /^<0x([0-9A-Fa-f]{2})>$/.exec(vocabText);
        if (model.vocabularyType === LlamaVocabularyType.spm && byteToken != null)
            return {text, bytes: [parseInt(byteToken[1]!, 16)]};
        if (model.vocabularyType === LlamaVocabularyType.bpe) {
            const bytes = [...vocabText].map((char) => GPT2_CHAR_TO_BYTE.get(char));
            if (bytes.every((byte): byte is number => byte != null))
                return {text, bytes};
        }
    }
    return {text, bytes: [...Buffer.from(text, "utf8")]};
}
