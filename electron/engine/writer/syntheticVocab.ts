/**
 * A SentencePiece-style ("llama") vocabulary for synthetic models: `<unk>`, `<s>`, `</s>`, the 256 byte tokens,
 * ChatML control tokens, then unique "▁"-prefixed pieces so that English text tokenizes into words and letters.
 *
 * source: llama-vocab.cpp `llama_vocab::impl::load` (SPM defaults: unk 0, bos 1, eos 2; `<0x0A>` is the newline) and
 * llama.h `llama_token_type`
 */

/** source: llama.h `enum llama_token_type` */
export const llamaTokenTypes = {normal: 1, unknown: 2, control: 3, byte: 6} as const;

/** ChatML, which node-llama-cpp recognizes as its `ChatMLChatWrapper`. */
export const syntheticChatTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** A vocabulary ready for the `tokenizer.ggml.*` keys. */
export type SyntheticVocab = {
    readonly tokens: readonly string[];
    readonly scores: Float32Array;
    readonly tokenTypes: Int32Array;
    readonly unkId: number;
    readonly bosId: number;
    readonly eosId: number;
};

const space = "\u2581";
const reserved: ReadonlyArray<readonly [string, number]> = [
    ["<unk>", llamaTokenTypes.unknown],
    ["<s>", llamaTokenTypes.control],
    ["</s>", llamaTokenTypes.control],
    ...Array.from({length: 256}, (_, byte) =>
        [`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`, llamaTokenTypes.byte] as const),
    ["<|im_start|>", llamaTokenTypes.control],
    ["<|im_end|>", llamaTokenTypes.control]
];

/** Smallest vocabulary: the reserved tokens plus "▁". */
export const minSyntheticVocabSize = reserved.length + 1;

const commonWords = (
    "the of and to a in is you that it he was for on are as with his they I at be this have from or one had by word " +
    "but not what all were we when your can said there use an each which she do how their if will up other about out " +
    "many then them these so some her would make like him into time has look two more write go see number no way " +
    "could people my than first water been call who oil its now find long down day did get come made may part hello " +
    "hi yes thanks please help tell me story chat model assistant user system question answer good new world"
).split(" ");

const lower = "abcdefghijklmnopqrstuvwxyz";
const upper = lower.toUpperCase();
const punctuation = [".", ",", "!", "?", "'", "\"", ":", ";", "-", "(", ")", "/", "&", "*", "+", "=", "#", "%", "@", "_"];

/** Normal pieces in priority order (most useful first); duplicates are removed by the caller. */
function* normalPieces(): Generator<string> {
    yield space;
    for (const letter of lower) yield letter;
    for (const letter of lower) yield space + letter;
    for (const digit of "0123456789") yield digit;
    for (const mark of punctuation) yield mark;
    for (const letter of upper) yield letter;
    for (const letter of upper) yield space + letter;
    // every prefix of a word too, so that SentencePiece's pairwise merges can reach the whole word
    for (const word of commonWords) {
        for (let end = 2; end <= word.length; end++) yield space + word.slice(0, end);
        for (let end = 2; end <= word.length; end++) yield word.slice(0, end);
    }
    for (const digit of "0123456789") yield space + digit;
    for (const mark of punctuation) yield space + mark;
    // fill: lowercase strings of growing length, bare and "▁"-prefixed (aa, ▁aa, ab, ▁ab, ...)
    for (let length = 2; ; length++) {
        const count = lower.length ** length;
        for (let n = 0; n < count; n++) {
            let piece = "";
            for (let rest = n, i = 0; i < length; i++, rest = Math.floor(rest / lower.length))
                piece = lower[rest % lower.length] + piece;
            yield piece;
            yield space + piece;
        }
    }
}

/** Builds a vocabulary of exactly `size` unique tokens (at least {@link minSyntheticVocabSize}). */
export function buildSyntheticVocab(size: number): SyntheticVocab {
    if (!Number.isInteger(size) || size < minSyntheticVocabSize)
        throw new RangeError(`vocabulary size must be an integer of at least ${minSyntheticVocabSize}, got ${size}`);

    const tokens: string[] = reserved.map(([text]) => text);
    const tokenTypes = new Int32Array(size);
    const scores = new Float32Array(size);
    reserved.forEach(([, type], id) => {
        tokenTypes[id] = type;
    });

    const seen = new Set(tokens);
    for (const piece of normalPieces()) {
        if (tokens.length >= size)
            break;
        if (seen.has(piece))
            continue;
        seen.add(piece);
        const id = tokens.length;
        tokens.push(piece);
        tokenTypes[id] = llamaTokenTypes.normal;
        scores[id] = -(id - reserved.length); // earlier (more useful) pieces merge first
    }
    return {tokens, scores, tokenTypes, unkId: 0, bosId: 1, eosId: 2};
}
