import type {OpenAiError} from "../common/OpenAiError.js";
import type {Finished} from "./openai/replyBodies.js";
import type {SseWriter} from "../common/SseWriter.js";
import type {ReplyDelta} from "../generation/chatLayer/ToolCallStream.js";

/** What every reply knows before its first token. */
export type ReplyStart = {id: string; created: number; model: string; promptTokens: number};

/**
 * How one API shapes a generated reply (serveOpenAi.ts runs the generation; this only writes): its events while it
 * streams, its body when it does not, and its error event once a stream has started. One object per request: a
 * format may count its events.
 */
export type ReplyFormat = {
    /** The reply id's prefix (`msg`, `resp`). */
    idPrefix: string;
    open(sse: SseWriter, start: ReplyStart): void;
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
