/**
 * A request too long for the context is refused before its text is tokenized: node-llama-cpp's tokenizer
 * (`LlamaModel.tokenize`, the addon's `AddonModel::Tokenize` → llama.cpp's `common_tokenize`) runs synchronously on the
 * server's only JavaScript thread, so tokenizing megabytes stalls every other stream (about 0.3 s per MB on this
 * 2-core VM). There is no asynchronous tokenizer in node-llama-cpp 3.22.1.
 *
 * The bound: every token of the model's vocabulary stands for at most {@link longestTokenBytes} bytes of text, so a text
 * of B bytes (UTF-8) takes at least ⌈B ÷ L⌉ tokens, whatever the tokenizer does; the chat template only adds tokens.
 * A request whose bound already exceeds the context is refused with no tokenization at all; what is left to tokenize
 * is at most a context's worth of the vocabulary's longest tokens — for a long context still megabytes, which are
 * counted on a worker thread first (TokenCounter.ts), so only a prompt that fits is tokenized on the server's thread.
 */
import type {LlamaModel} from "node-llama-cpp";
import {OpenAiError} from "../common/OpenAiError.js";
import type {GenerationRequest} from "../common/GenerationRequest.js";

/**
 * The most bytes of text one token of `model` can stand for: the longest entry of the GGUF's `tokenizer.ggml.tokens`,
 * in UTF-8. The stored strings are never shorter than their text (SentencePiece's `▁` is 3 bytes for a 1-byte space,
 * `<0x41>` 6 for one byte; GPT-2 byte-level BPE stores each byte as a 1–2 byte character), so this over-estimates,
 * which keeps the bound sound. At least 4 (one UTF-8 character, for an `<unk>` standing for one). `Infinity` (no bound)
 * when the file lists no vocabulary.
 */
export function longestTokenBytes(model: Pick<LlamaModel, "fileInfo">): number {
    const tokens = (model.fileInfo.metadata as {tokenizer?: {ggml?: {tokens?: unknown}}}).tokenizer?.ggml?.tokens;
    if (!Array.isArray(tokens) || tokens.length === 0)
        return Infinity;
    let longest = 4;
    for (const token of tokens) {
        if (typeof token === "string" && token.length * 3 > longest)
            longest = Math.max(longest, Buffer.byteLength(token, "utf8"));
    }
    return longest;
}

/** Bytes of text in a request (UTF-8, its messages' — an assistant's thinking sent back included — or its prompt's). */
export function promptTextBytes(request: GenerationRequest): number {
    return request.kind === "chat"
        ? request.messages.reduce((sum, message) => sum + Buffer.byteLength(message.text, "utf8") +
            (message.role === "assistant" && message.reasoning != null ? Buffer.byteLength(message.reasoning, "utf8") : 0), 0)
        : Buffer.byteLength(request.prompt, "utf8");
}

/** The fewest tokens the request's text can take, from its UTF-8 bytes alone (see the module comment). */
export function minimumPromptTokens(request: GenerationRequest, maxTokenBytes: number): number {
    return Math.ceil(promptTextBytes(request) / maxTokenBytes);
}

/** Throws the 400 for a prompt of `promptTokens` (counted, or "at least") that leaves no room in a context of `contextSize`. */
export function refuseOverlongPrompt(request: GenerationRequest, promptTokens: number, contextSize: number, atLeast: boolean): void {
    const generate = request.maxTokens ?? 1;
    if (promptTokens + generate <= contextSize)
        return;
    const param = request.kind === "chat" ? "messages" : "prompt";
    throw OpenAiError.badRequest(`This request needs ${atLeast ? "at least " : ""}${promptTokens} prompt tokens + ${generate} to generate, but each ` +
        `sequence's context holds ${contextSize} tokens: shorten the ${param}, lower max_tokens, or restart the server with a larger --context.`,
    param, "context_length_exceeded");
}
