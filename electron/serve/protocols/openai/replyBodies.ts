/**
 * Response bodies in OpenAI's shapes (`chat.completion`, `chat.completion.chunk`, `text_completion`), each with
 * `usage` and our engine-side `timings`.
 */
import type {KvFallback, KvPreparation} from "../../kv/ConversationKvStore.js";
import {type TokenLogprob} from "../../../engine/runtime/tokenPiece.js";
import {chatLogprobs, completionLogprobs} from "./openAiLogprobs.js";
import {cachedPromptTokens, type Finished} from "../ReplyFormat.js";
import type {ReplyDelta} from "../../generation/chatLayer/ToolCallStream.js";

export type Usage = {
    prompt_tokens: number; completion_tokens: number; total_tokens: number;
    /** `cached_tokens`: prompt tokens whose KV cache was reused rather than evaluated (a prefix still in the sequence). */
    prompt_tokens_details: {cached_tokens: number};
};

/**
 * Engine-side timings of one request (ms, the server's clock): `ttft_ms` runs from the request's arrival to its first
 * generated token, so it includes `queue_ms` (waiting for a sequence) and prompt processing; `tpot_ms` is the mean
 * time per output token after the first (`null` with fewer than two tokens).
 */
export type Timings = {
    queue_ms: number; ttft_ms: number; tpot_ms: number | null; total_ms: number;
    /** Prompt tokens actually evaluated (a prefix still in the sequence's KV cache is reused). */
    prompt_tokens_evaluated: number;
    /** The sequence (0-based) that generated the reply. */
    sequence: number;
    /** How the conversation's KV cache got into that sequence (inside `ttft_ms`). */
    kv: KvTimings;
};

/**
 * `path`: `resident` (still in the sequence), `new` (nothing to restore: the sequence starts empty), `swap` (its saved
 * state was loaded) or `recompute` (its tokens were evaluated again). For `swap`/`recompute`, the decision made when it
 * left its sequence: predicted and measured ms of both ways (measured: the chosen one; both in the server's benchmark
 * mode), and `fallback` when a predicted swap was recomputed (`disk-budget`: its state file did not fit the disk
 * budget; `disk-error`: writing or reading it failed). Only this request's own conversation is described: which
 * conversation it displaced, if any, goes to the server's log, never to a client.
 */
export type KvTimings = {
    conversation: string | null;
    path: KvPreparation["path"];
    restore_ms: number;
    tokens: number | null;
    state_bytes: number | null;
    predicted: {swap_out_ms: number; swap_in_ms: number; swap_ms: number; recompute_ms: number} | null;
    measured: {swap_out_ms: number | null; swap_in_ms: number | null; swap_ms: number | null; recompute_ms: number | null} | null;
    fallback: KvFallback | null;
};

/** Tokens of a stream chunk, and (completions) where the first starts in the prompt followed by the reply. */
export type ChunkLogprobs = {tokens: readonly TokenLogprob[]; offset: number};

function logprobsOf(kind: "chat" | "completion", logprobs: ChunkLogprobs | null | undefined): unknown {
    if (logprobs == null)
        return null;
    return kind === "chat" ? chatLogprobs(logprobs.tokens) : completionLogprobs(logprobs.tokens, logprobs.offset);
}

export function usageOf(finished: Pick<Finished, "promptTokens" | "timing" | "promptTokensEvaluated">): Usage {
    const completion = finished.timing.generatedTokens;
    return {
        prompt_tokens: finished.promptTokens, completion_tokens: completion, total_tokens: finished.promptTokens + completion,
        prompt_tokens_details: {cached_tokens: cachedPromptTokens(finished)}
    };
}

export function timingsOf(finished: Finished): Timings {
    const round = (ms: number) => Math.round(ms * 100) / 100;
    return {
        queue_ms: round(finished.queueMs), ttft_ms: round(finished.timing.ttftMs),
        tpot_ms: finished.timing.tpotMs == null ? null : round(finished.timing.tpotMs), total_ms: round(finished.timing.totalMs),
        prompt_tokens_evaluated: finished.promptTokensEvaluated, sequence: finished.sequence,
        kv: kvTimingsOf(finished.conversation, finished.kv)
    };
}

function kvTimingsOf(conversation: string | null, kv: KvPreparation): KvTimings {
    const round = (ms: number | null) => ms == null ? null : Math.round(ms * 100) / 100;
    const {decision} = kv;
    return {
        conversation, path: kv.path, restore_ms: round(kv.restoreMs)!,
        tokens: decision?.tokens ?? null,
        state_bytes: decision == null ? null : decision.measured.stateBytes ?? decision.predicted.stateBytes,
        predicted: decision == null ? null : {
            swap_out_ms: round(decision.predicted.swapOutMs)!, swap_in_ms: round(decision.predicted.swapInMs)!,
            swap_ms: round(decision.predicted.swapMs)!, recompute_ms: round(decision.predicted.recomputeMs)!
        },
        measured: decision == null ? null : {
            swap_out_ms: round(decision.measured.swapOutMs), swap_in_ms: round(decision.measured.swapInMs),
            swap_ms: round(decision.measured.swapMs), recompute_ms: round(decision.measured.recomputeMs)
        },
        fallback: decision?.fallback ?? null
    };
}

/** A chat reply's finish: `tool_calls` when it ended having made calls, as OpenAI answers (a reply cut by the length says `length`). */
export function chatFinishReason(finished: Finished): "stop" | "length" | "tool_calls" {
    return finished.finishReason === "stop" && (finished.toolCalls?.length ?? 0) > 0 ? "tool_calls" : finished.finishReason;
}

/** A chat answer's message and finish: with tool calls, `tool_calls` and `finish_reason: "tool_calls"`. */
function chatChoice(finished: Finished): {message: unknown; finish_reason: string} {
    const calls = finished.toolCalls ?? [];
    // llama-server's field, only when there was thinking
    const thought = finished.reasoning !== "" ? {reasoning_content: finished.reasoning} : {};
    if (calls.length === 0)
        return {message: {role: "assistant", content: finished.text, ...thought}, finish_reason: finished.finishReason};
    return {
        message: {
            role: "assistant", content: finished.text === "" ? null : finished.text, ...thought,
            tool_calls: calls.map((call) => ({id: call.id, type: "function", function: {name: call.name, arguments: call.arguments}}))
        },
        finish_reason: chatFinishReason(finished)
    };
}

/** The whole answer of a non-streamed request. */
export function completionBody(finished: Finished): unknown {
    const common = {id: finished.id, created: finished.created, model: finished.model, usage: usageOf(finished), timings: timingsOf(finished)};
    const logprobs = logprobsOf(finished.kind, finished.logprobs != null ? {tokens: finished.logprobs, offset: finished.promptLength} : null);
    if (finished.kind === "chat")
        return {
            ...common, object: "chat.completion",
            choices: [{index: 0, ...chatChoice(finished), logprobs}]
        };
    return {...common, object: "text_completion", choices: [{index: 0, text: finished.text, finish_reason: finished.finishReason, logprobs}]};
}

/**
 * One streamed chunk: a text delta (`text`), a thinking delta (`reasoning`, chat only: llama-server's
 * `delta.reasoning_content`), a tool call's opening or arguments (`toolCall`), the opening role (chat only, `text` = ""),
 * or the finish; `logprobs`: the tokens of this delta (the finish carries any whose text never came, e.g. an unfinished
 * UTF-8 character).
 */
export function chunkBody(stream: {id: string; created: number; model: string; kind: "chat" | "completion"},
    part: {text?: string; reasoning?: string; role?: boolean; toolCall?: Extract<ReplyDelta, {type: "tool_call"}>; finishReason?: "stop" | "length" | "tool_calls"; timings?: Timings;
        logprobs?: ChunkLogprobs | null}): unknown {
    const finish_reason = part.finishReason ?? null;
    const logprobs = logprobsOf(stream.kind, part.logprobs);
    const extra = part.timings != null ? {timings: part.timings} : {};
    if (stream.kind === "chat") {
        const call = part.toolCall;
        // a call's first chunk carries its id, type and name; later ones append to its arguments (OpenAI's ChoiceDeltaToolCall)
        const delta = part.role === true ? {role: "assistant", content: ""} : part.text != null ? {content: part.text}
            : part.reasoning != null ? {reasoning_content: part.reasoning}
            : call != null ? {tool_calls: [{index: call.index, ...(call.opens && {id: call.id, type: "function"}),
                function: {...(call.opens && {name: call.name}), arguments: call.arguments}}]} : {};
        return {id: stream.id, object: "chat.completion.chunk", created: stream.created, model: stream.model,
            choices: [{index: 0, delta, finish_reason, logprobs}], ...extra};
    }
    return {id: stream.id, object: "text_completion", created: stream.created, model: stream.model,
        choices: [{index: 0, text: part.text ?? "", finish_reason, logprobs}], ...extra};
}

/** `stream_options.include_usage`: the last chunk, with empty `choices` and the usage. */
export function usageChunkBody(finished: Finished): unknown {
    return {
        id: finished.id, object: finished.kind === "chat" ? "chat.completion.chunk" : "text_completion", created: finished.created,
        model: finished.model, choices: [], usage: usageOf(finished), timings: timingsOf(finished)
    };
}
