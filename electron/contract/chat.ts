/** One conversation turn as the app stores it. */
export type ChatTurn = {role: "user" | "assistant"; text: string};

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
