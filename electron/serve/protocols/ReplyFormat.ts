/**
 * What the generation (generateReply.ts) hands a wire dialect: the finished reply ({@link Finished}) and, while it
 * streams, each piece. Every dialect is a {@link ReplyFormat}, OpenAI's own chat/completions shape included
 * (openai/openAiChatFormat.ts), so the generation never asks which dialect it writes.
 */
import type {GenerationTiming} from "../../contract/timing.js";
import type {ToolCall} from "../common/GenerationRequest.js";
import type {OpenAiError} from "../common/OpenAiError.js";
import type {TokenLogprob} from "../../engine/runtime/tokenPiece.js";
import type {KvPreparation} from "../kv/ConversationKvStore.js";
import type {SseWriter} from "../common/SseWriter.js";
import type {ReplyDelta} from "../generation/chatLayer/ToolCallStream.js";

/** What a finished generation reports. */
export type Finished = {
    id: string; created: number; model: string; kind: "chat" | "completion";
    text: string; finishReason: "stop" | "length"; promptTokens: number; timing: GenerationTiming;
    /** The stop sequence that ended the text, else `null` (an end-of-generation token, or the length). */
    stopSequence: string | null;
    queueMs: number; promptTokensEvaluated: number; sequence: number;
    conversation: string | null; kv: KvPreparation;
    /** Per token of `text` when the request asked for logprobs; `null` otherwise. `promptLength`: the completion prompt's length (its text_offset start). */
    logprobs: TokenLogprob[] | null; promptLength: number;
    /** The reply parsed by llama.cpp's chat layer (a request with tools: toolCallPrompt.ts); `text` is then its content. */
    toolCalls?: readonly ToolCall[];
    /**
     * A reasoning model's thinking, separated by llama.cpp's chat layer ("" when none), and the generated tokens it took:
     * those before the piece of text in which the answer began (all of them when it never began).
     */
    reasoning: string;
    reasoningTokens: number;
};

/** Prompt tokens whose KV cache was reused (this conversation's prefix still in the sequence) rather than evaluated. */
export function cachedPromptTokens(finished: Pick<Finished, "promptTokens" | "promptTokensEvaluated">): number {
    return Math.max(0, finished.promptTokens - finished.promptTokensEvaluated);
}

/** What every reply knows before its first token. */
export type ReplyStart = {id: string; created: number; model: string; promptTokens: number};

/**
 * How one API shapes a generated reply (generateReply.ts runs the generation; this only writes): its events while it
 * streams, its body when it does not, and its error event once a stream has started. One object per request: a
 * format may count its events.
 */
export type ReplyFormat = {
    /** The reply id's prefix (`msg`, `resp`). */
    idPrefix: string;
    open(sse: SseWriter, start: ReplyStart): void;
    /**
     * The tokens just generated with their log-probabilities (each generated piece's, before its text is handed on;
     * empty unless the request asked for logprobs). Optional: only OpenAI's shapes report them while streaming.
     */
    tokens?(logprobs: readonly TokenLogprob[]): void;
    text(sse: SseWriter, text: string): void;
    /** A reasoning model's thinking to append (llama.cpp's chat layer separates it: ToolCallStream.ts); it comes before the answer. */
    reasoning(sse: SseWriter, text: string): void;
    /** An id for a tool call the model wrote none for, in the API's style (`toolu_…`, `call_…`). */
    newToolCallId(): string;
    /** A streamed tool call's opening (`opens`) and/or arguments to append (a request with tools: ToolCallStream.ts). */
    toolCall(sse: SseWriter, delta: Extract<ReplyDelta, {type: "tool_call"}>): void;
    /** The last events; ends the response. */
    finish(sse: SseWriter, finished: Finished): void;
    /** The whole answer of a request that did not stream. */
    body(finished: Finished): unknown;
    /** An error after the stream started (the status is already 200); ends the response. */
    fail(sse: SseWriter, error: OpenAiError): void;
};
