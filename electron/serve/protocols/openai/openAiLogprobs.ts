/**
 * Log-probabilities in OpenAI's shapes: chat's `choices[].logprobs.content[]` (`{token, logprob, bytes, top_logprobs}`)
 * and the legacy completions' `choices[].logprobs` (`{tokens, token_logprobs, top_logprobs, text_offset}`).
 */
import type {TokenLogprob} from "../../../engine/runtime/tokenPiece.js";

export type ChatLogprobs = {
    content: {token: string; logprob: number; bytes: number[]; top_logprobs: {token: string; logprob: number; bytes: number[]}[]}[];
    refusal: null;
};

export type CompletionLogprobs = {
    tokens: string[];
    token_logprobs: number[];
    /** Per token, candidate text → logprob; two candidates with the same text keep the likelier one (a JSON object has one key each). */
    top_logprobs: Record<string, number>[];
    /** Each token's offset in the prompt followed by the reply (UTF-16 code units, JavaScript's string length), as OpenAI counts from the prompt's start. */
    text_offset: number[];
};

export function chatLogprobs(tokens: readonly TokenLogprob[]): ChatLogprobs {
    return {
        content: tokens.map((entry) => ({
            token: entry.text, logprob: entry.logprob, bytes: entry.bytes,
            top_logprobs: entry.top.map((candidate) => ({token: candidate.text, logprob: candidate.logprob, bytes: candidate.bytes}))
        })),
        refusal: null
    };
}

/** `offset`: where the first of `tokens` starts in the prompt followed by the reply. */
export function completionLogprobs(tokens: readonly TokenLogprob[], offset: number): CompletionLogprobs {
    const textOffset: number[] = [];
    let at = offset;
    for (const entry of tokens) {
        textOffset.push(at);
        at += entry.text.length;
    }
    return {
        tokens: tokens.map((entry) => entry.text),
        token_logprobs: tokens.map((entry) => entry.logprob),
        top_logprobs: tokens.map((entry) => {
            // no prototype: a candidate whose text is "__proto__" is a key like any other
            const top = Object.create(null) as Record<string, number>;
            for (const candidate of entry.top)
                if (!Object.hasOwn(top, candidate.text))
                    top[candidate.text] = candidate.logprob;
            return top;
        }),
        text_offset: textOffset
    };
}
