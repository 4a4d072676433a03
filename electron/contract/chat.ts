import type {SpeculativeStats} from "./speculative.js";
import type {GenerationTiming} from "./timing.js";

/**
 * One conversation turn as a prompt is built from it; a reply that called tools carries its calls, each with the
 * result text the model is given back (electron/host/tools/toolCallText.ts).
 */
export type ChatTurn = {role: "user" | "assistant"; text: string; toolCalls?: ToolTurnCall[]};

/** A tool call of an assistant turn, and what the model was told it returned. */
export type ToolTurnCall = {id: string; name: string; arguments: string; result: string};

/** A tool call as the model made it, parsed by llama.cpp's chat layer (common_chat_parse). */
export type ParsedToolCall = {id: string; name: string; arguments: string};

/** Sampling settings of a reply; each unset one takes node-llama-cpp's default. */
export type SamplingSettings = {
    /** Defaults to 0.7; 0 is greedy. */
    temperature?: number;
    topK?: number;
    topP?: number;
    minP?: number;
    /** Penalty on repeating recent tokens (llama.cpp `--repeat-penalty`); 1 turns it off. */
    repeatPenalty?: number;
    seed?: number;
    /** Generation ends when the reply produces one of these strings (which is left out of the reply). */
    stopStrings?: string[];
};

/** Why a reply ended: the model finished, it reached `maxTokens`, a stop string came, or the user stopped it. */
export type ReplyStopReason = "done" | "max-tokens" | "stop-string" | "stopped";

/** How far prompt processing has come: `evaluated` of `total` prompt tokens, `reused` of them from the KV cache. */
export type PromptProgress = {evaluated: number; total: number; reused: number; elapsedMs: number};

/**
 * How a conversation's KV cache got into its sequence on the server's scheduler: still resident, a new sequence, read
 * back from disk (swap), or the prompt evaluated again (recompute); `ms` is what that took.
 */
export type KvRestore = {path: "resident" | "new" | "swap" | "recompute"; ms: number};

/** A finished (or stopped) reply as the engine reports it. */
export type ChatReply = {
    text: string;
    timing: GenerationTiming;
    /** `true` when the signal stopped the reply; `text` then holds what was generated so far. */
    aborted: boolean;
    stopReason: ReplyStopReason;
    /** The whole prompt (template + history + message) in tokens, and how many of them the KV cache already held. */
    prompt: {tokens: number; reused: number};
    /** Tokens in the context after the reply, of `size`. */
    context: {usedTokens: number; size: number};
    /** How many earlier messages of the conversation were left out of the prompt so that it fits the context. */
    leftOutMessages: number;
    /** How the conversation's KV cache got into its sequence, when the reply ran on the server's scheduler. */
    restore?: KvRestore;
    /** The whole prompt and every generated token as ids, when asked for (`withTokenIds`; `chat --json`). */
    tokenIds?: {prompt: number[]; reply: number[]};
    /** The calls the reply made (a reply with tools); `text` is then what it said besides them. */
    toolCalls?: ParsedToolCall[];
    /** Prompt tokens the tool definitions took (the prompt with them less the same prompt without); absent without tools. */
    toolTokens?: number;
    /** What speculative decoding did in this reply, when the model speculates. */
    speculative?: SpeculativeStats;
};
