/**
 * OpenAI's own chat/completions and completions shapes as a {@link ReplyFormat} (replyBodies.ts writes the bodies), so
 * the generation (generateReply.ts) writes OpenAI's replies as it writes every other dialect's: a stream opens with
 * the role chunk (chat) or an empty text chunk (completions), each piece is a chunk carrying the log-probabilities of
 * its tokens when asked, and the finish chunk carries the timings (then the usage chunk when
 * `stream_options.include_usage` asks for it); an error after the start is the error chunk.
 */
import type {GenerationRequest} from "../../common/GenerationRequest.js";
import type {TokenLogprob} from "../../../engine/runtime/tokenPiece.js";
import {newToolCallId} from "../../generation/chatLayer/toolCallPrompt.js";
import type {ReplyFormat} from "../ReplyFormat.js";
import {chatFinishReason, chunkBody, completionBody, timingsOf, usageChunkBody, type ChunkLogprobs} from "./replyBodies.js";

export function openAiChatFormat(request: GenerationRequest): ReplyFormat {
    const {kind} = request;
    let stream = {id: "", created: 0, model: "", kind};
    // logprobs of streamed tokens whose text has not been sent yet, and where the next one starts (completions count from the prompt's start)
    let streamed: ChunkLogprobs | null = request.logprobs != null ? {tokens: [], offset: kind === "completion" ? request.prompt.length : 0} : null;
    const takeStreamed = (): ChunkLogprobs | null => {
        if (streamed == null)
            return null;
        const taken = streamed;
        streamed = {tokens: [], offset: taken.tokens.reduce((at, token) => at + token.text.length, taken.offset)};
        return taken;
    };
    return {
        idPrefix: kind === "chat" ? "chatcmpl" : "cmpl",
        open: (sse, start) => {
            stream = {id: start.id, created: start.created, model: start.model, kind};
            sse.send(chunkBody(stream, kind === "chat" ? {role: true} : {text: ""}));
        },
        tokens: (logprobs: readonly TokenLogprob[]) => {
            if (streamed != null)
                streamed = {tokens: [...streamed.tokens, ...logprobs], offset: streamed.offset};
        },
        text: (sse, text) => sse.send(chunkBody(stream, {text, logprobs: takeStreamed()})),
        reasoning: (sse, text) => sse.send(chunkBody(stream, {reasoning: text, logprobs: takeStreamed()})),
        newToolCallId,
        toolCall: (sse, delta) => sse.send(chunkBody(stream, {toolCall: delta})),
        finish: (sse, finished) => {
            const rest = takeStreamed();
            sse.send(chunkBody(stream, {finishReason: chatFinishReason(finished), timings: timingsOf(finished), logprobs: rest != null && rest.tokens.length > 0 ? rest : null}));
            if (request.includeUsage)
                sse.send(usageChunkBody(finished));
            sse.done();
        },
        body: (finished) => completionBody(finished),
        fail: (sse, error) => sse.fail(error.toBody())
    };
}
