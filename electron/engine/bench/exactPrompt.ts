/** Prompts of an exact token count, built as token arrays (no tokenizer round trip can change their length). */
import type {LlamaModel, Token} from "node-llama-cpp";

/** Plain words every vocabulary tokenizes (the synthetic models' vocab holds words; real ones split them). */
const FILLER = "the quick brown fox jumps over the lazy dog while a small cat watches from the old wooden fence " +
    "and the sun sets slowly behind the hills of the quiet green valley";

/**
 * `count` tokens: the filler text's tokens repeated cyclically, with end-of-generation and control tokens removed so
 * nothing in the prompt stops or steers generation. Throws when the tokenizer yields nothing usable.
 */
export function exactPromptTokens(model: Pick<LlamaModel, "tokenize" | "isEogToken">, count: number): Token[] {
    const base = model.tokenize(FILLER, false).filter((token) => !model.isEogToken(token));
    if (base.length === 0) throw new Error("the model's tokenizer produced no usable tokens for the benchmark prompt");
    const tokens: Token[] = [];
    for (let i = 0; tokens.length < count; i++) tokens.push(base[i % base.length]!);
    return tokens;
}
