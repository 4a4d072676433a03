/**
 * How a long prompt is measured without stalling the server: node-llama-cpp's tokenizer (`LlamaModel.tokenize`) is
 * synchronous on the calling thread and there is no asynchronous one in node-llama-cpp 3.22.1; tokenizing 3 MB takes
 * seconds, during which every other stream stops. Texts above {@link SYNC_TOKENIZE_BYTES} are counted on the prompt
 * worker (PromptWorker.ts), which loads only the model's vocabulary (node-llama-cpp's `vocabOnly`); below it the
 * synchronous tokenizer is cheaper than the trip.
 */
import type {GenerationRequest} from "../../common/GenerationRequest.js";
import type {PromptWorker} from "./PromptWorker.js";

/** Below this many bytes of text a request is tokenized on the server's thread (tens of ms at worst on a slow core). */
export const SYNC_TOKENIZE_BYTES = 64 * 1024;

/**
 * The fewest tokens `request` can take, counted on the worker. A completion's prompt is tokenized as the server will
 * (special tokens parsed, plus the BOS the model adds): exact. A chat's messages are counted each alone; the chat template wraps each in role markers and
 * only adds tokens, except where the text before a message merges with its first token — at most one token per side,
 * so two per message are taken off.
 */
export async function countedPromptTokens(counter: PromptWorker, request: GenerationRequest, addsBos: boolean): Promise<number> {
    if (request.kind !== "chat")
        return (await counter.count([request.prompt], true))[0]! + (addsBos ? 1 : 0);
    const counts = await counter.count(request.messages.map((message) => message.text));
    return Math.max(0, counts.reduce((sum, count) => sum + count, 0) - 2 * request.messages.length);
}
