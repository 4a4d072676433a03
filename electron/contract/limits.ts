/**
 * The one bounds table for every number a user or client can send: CLI flags, web/IPC requests, placement files.
 * Each entry is a hard range that keeps the engine finite whatever the machine; where the machine or the model sets a
 * tighter limit (threads ≤ logical cores, context ≤ the model's trained context × {@link CONTEXT_OVER_TRAINED_FACTOR}
 * and ≤ what memory holds), the engine checks that too, with the same sentences (see {@link limitMessage}).
 *
 * A leaf: imports nothing, so the CLI, the host, the engine and the renderer can all use it.
 */

/** One number's allowed values. */
export type NumberLimit = {
    /** How the number is named in messages ("thread count"). */
    readonly label: string;
    readonly integer: boolean;
    readonly min: number;
    readonly max: number;
    /** `min` itself is not allowed (a budget of 0% means nothing). */
    readonly minExclusive?: boolean;
    /** Unit shown after values in messages ("tokens"). */
    readonly unit?: string;
};

export const LIMITS = {
    threads: {label: "thread count", integer: true, min: 1, max: 1024},
    contextSize: {label: "context size", integer: true, min: 64, max: 1_048_576, unit: "tokens"},
    batchSize: {label: "micro-batch size", integer: true, min: 1, max: 65_536, unit: "tokens"},
    gpuLayers: {label: "GPU layer count", integer: true, min: 0, max: 4096},
    maxTokens: {label: "max tokens", integer: true, min: 1, max: 131_072, unit: "tokens"},
    temperature: {label: "temperature", integer: false, min: 0, max: 10},
    budgetMiB: {label: "GPU budget", integer: false, min: 0, max: 16 * 1024 * 1024, minExclusive: true, unit: "MiB"},
    budgetPercent: {label: "GPU budget", integer: false, min: 0, max: 100, minExclusive: true, unit: "%"},
    promptTokens: {label: "prompt length", integer: true, min: 1, max: 131_072, unit: "tokens"},
    genTokens: {label: "generation length", integer: true, min: 1, max: 131_072, unit: "tokens"},
    /** TPOT needs two generated tokens. */
    benchGenTokens: {label: "generation length", integer: true, min: 2, max: 32_768, unit: "tokens"},
    benchPromptTokens: {label: "prompt length", integer: true, min: 1, max: 32_768, unit: "tokens"},
    repeats: {label: "repeat count", integer: true, min: 1, max: 20},
    /** How long the machine profile may measure (profileMachine.ts DEFAULT_PROFILE_TIME_LIMIT_MS when not given). */
    profileSeconds: {label: "profile time limit", integer: true, min: 1, max: 3600, unit: "seconds"},
    warmup: {label: "warm-up length", integer: true, min: 0, max: 4096, unit: "tokens"},
    /** Budgets, prompt lengths, generation lengths… in one benchmark. */
    listLength: {label: "list length", integer: true, min: 1, max: 16},
    /** Placement files: layer ranges. */
    layerIndex: {label: "layer index", integer: true, min: 0, max: 4095},
    /** Synthetic models (`make-model`). */
    modelLayers: {label: "layer count", integer: true, min: 1, max: 512},
    modelEmbd: {label: "embedding length", integer: true, min: 1, max: 65_536},
    modelFf: {label: "feed-forward length", integer: true, min: 1, max: 262_144},
    modelHeads: {label: "head count", integer: true, min: 1, max: 1024},
    modelVocab: {label: "vocabulary size", integer: true, min: 262, max: 1_048_576},
    /** llama.cpp's LLAMA_MAX_EXPERTS (src/llama-hparams.h). */
    modelExperts: {label: "expert count", integer: true, min: 1, max: 1024},
    /** Speculative decoding: tokens drafted a step (llama.cpp's --spec-draft-n-max), n-gram lookup's sizes. */
    draftMax: {label: "draft length", integer: true, min: 1, max: 64, unit: "tokens"},
    ngramSize: {label: "n-gram size", integer: true, min: 1, max: 64, unit: "tokens"},
    seed: {label: "seed", integer: true, min: 0, max: 4_294_967_295},
    /** `tensorwise serve`: the TCP port (0 picks a free one), parallel sequences, waiting requests, time per request. */
    port: {label: "port", integer: true, min: 0, max: 65_535},
    parallel: {label: "parallel sequence count", integer: true, min: 1, max: 64},
    queueLength: {label: "queue length", integer: true, min: 0, max: 4096},
    requestTimeoutSeconds: {label: "request time limit", integer: true, min: 1, max: 86_400, unit: "seconds"},
    /** Disk the swapped-out KV state files may take: MiB (0: never swap, always recompute), or a share of free space. */
    kvDiskBudgetMiB: {label: "KV state disk budget", integer: true, min: 0, max: 16_777_216, unit: "MiB"},
    kvDiskBudgetPercent: {label: "KV state disk budget", integer: false, min: 0, max: 90, unit: "% of free space"},
    /** Messages in one OpenAI-compatible chat request (counted before anything is tokenized). */
    chatMessages: {label: "number of messages", integer: true, min: 1, max: 4096},
    /** Inputs in one `/v1/embeddings` request (OpenAI's API allows up to 2048). */
    embeddingInputs: {label: "number of inputs", integer: true, min: 1, max: 2048},
    /** Sampling, in the app and in OpenAI-compatible requests (llama.cpp's `--top-k`, `--top-p`, `--min-p`, `--repeat-penalty`). */
    topK: {label: "top-k", integer: true, min: 0, max: 1_048_576},
    topP: {label: "top-p", integer: false, min: 0, max: 1},
    minP: {label: "min-p", integer: false, min: 0, max: 1},
    repeatPenalty: {label: "repeat penalty", integer: false, min: 0, max: 10},
    /** Tokens the repeat, frequency and presence penalties look back over (llama.cpp's `--repeat-last-n`). */
    repeatLastN: {label: "repeat-last-n", integer: true, min: 0, max: 1_048_576, unit: "tokens"},
    /** OpenAI's `frequency_penalty` and `presence_penalty` (its API's range; llama.cpp's `--frequency-penalty`, `--presence-penalty`). */
    penalty: {label: "penalty", integer: false, min: -2, max: 2},
    /** One `logit_bias` value (OpenAI's range: −100 bans the token, 100 makes it the only choice in practice). */
    logitBias: {label: "logit bias", integer: false, min: -100, max: 100},
    /** Tokens one `logit_bias` may name (OpenAI's API allows 300). */
    logitBiasCount: {label: "number of logit_bias entries", integer: true, min: 0, max: 300},
    /** Alternatives reported per generated token by chat's `top_logprobs` (OpenAI's API allows 0 to 20). */
    topLogprobs: {label: "top_logprobs", integer: true, min: 0, max: 20},
    /** Alternatives reported per generated token by the legacy completions' `logprobs` (OpenAI's API allows 0 to 5). */
    completionLogprobs: {label: "logprobs", integer: true, min: 0, max: 5},
    /** Stop strings of one conversation in the app. */
    stopStrings: {label: "stop string count", integer: true, min: 0, max: 16},
    /** Stop sequences of one OpenAI-compatible request (OpenAI's API allows up to 4). */
    stopCount: {label: "number of stop sequences", integer: true, min: 0, max: 4},
    /** Tools of one OpenAI-compatible chat request (OpenAI's API allows up to 128). */
    toolCount: {label: "number of tools", integer: true, min: 0, max: 128},
    /** Tool calls of one assistant message sent back in a chat request. */
    toolCallCount: {label: "number of tool calls", integer: true, min: 1, max: 128},
    /** How long one call of an MCP tool in the app's chat may take. */
    toolCallSeconds: {label: "tool call time limit", integer: true, min: 1, max: 600, unit: "seconds"}
} as const satisfies Record<string, NumberLimit>;

export type LimitName = keyof typeof LIMITS;

/** Text lengths, in UTF-16 code units (what `String.length` counts). */
export const TEXT_LIMITS = {
    /** A conversation's title (the sidebar shows ~40). */
    title: 200,
    /** One chat message: far beyond any context this app can load, small enough to store and render. */
    message: 262_144,
    /** Ids chosen by the client (stream ids, benchmark ids). */
    id: 128,
    /** A path sent by a client. */
    path: 4096,
    /** A bench CLI list such as `--prompts 32,64,128`. */
    flagList: 1024,
    /** A conversation's system prompt. */
    systemPrompt: 32_768,
    /** One stop string (the app's, or one stop sequence of an OpenAI-compatible request). */
    stopString: 256,
    /** `tensorwise serve --api-key`. */
    apiKey: 512,
    /** An address to listen on (an IPv6 literal is at most 45 characters). */
    host: 64,
    /** An rpc-server's `host:port`: a DNS name (at most 253 characters) and `:65535`. */
    rpcEndpoint: 259,
    /** A client key's name on the Server screen (contract/server.ts CLIENT_KEY_NAME_PATTERN). */
    clientKeyName: 40,
    /** A tool's (function's) name, and a tool call's id (OpenAI: letters, digits, `_` and `-`, at most 64). */
    toolName: 64,
    /** A tool call id sent back by a client (`call_…`; other servers' ids are longer than OpenAI's). */
    toolCallId: 256,
    /** An MCP server's command, working folder or URL; one argument, environment value or header value. */
    mcpCommand: 4096,
    mcpValue: 8192,
    /** Arguments, environment variables or headers of one MCP server. */
    mcpEntries: 64,
    /** A tool call's arguments as the model wrote them (a conversation file holds no more). */
    toolArguments: 65_536,
    /** An `mcpServers` JSON to import (web mode's request limit holds it escaped: electron/web/serveWeb.ts). */
    mcpImport: 131_072
} as const;

/**
 * Sizes of the structures a client sends for the model to follow (a JSON schema, a GBNF grammar, tools) and of request
 * JSON itself. llama.cpp's grammar code has no bounds of its own: its parser recurses once per nested group and its
 * left-recursion check (llama_grammar_detect_left_recursion) walks every left-most path without remembering one it
 * walked, on the thread that creates the grammar; a repetition `{m,n}` with m > n loops until memory runs out. Each
 * number here keeps that work to milliseconds (measured in docs/safety.md), far above what a real
 * schema or grammar needs. Checked before anything native sees the structure (electron/serve/constraints/).
 */
export const STRUCTURE_LIMITS = {
    /** Nesting of a request body's JSON (arrays and objects): a tool schema 32 levels deep takes about 70. */
    requestJsonDepth: 128,
    /** Nesting of one JSON schema: subschemas within subschemas (properties, items, anyOf, $defs…). */
    schemaDepth: 32,
    /** Subschemas of one JSON schema, each `$ref` counted as the schema it names (a cycle counted once). */
    schemaNodes: 10_000,
    /** Values of all the `enum`s of one JSON schema together. */
    schemaEnumValues: 1024,
    /** Characters of a GBNF grammar a client sends. */
    grammarChars: 65_536,
    /** Characters of a grammar made from a schema or from tools (llama.cpp's json_schema_to_grammar, chat layer). */
    derivedGrammarChars: 262_144,
    /** Nested groups `( … )` in one rule of a grammar (llama.cpp's parser recurses once per level). */
    grammarNesting: 64,
    /** Rules of a grammar as llama.cpp's parser expands it (each group and repetition becomes rules). */
    grammarRules: 20_000,
    /** Elements of all rules as llama.cpp's parser expands them (`x{m}` copies x m times). */
    grammarElements: 200_000,
    /** Steps of llama.cpp's left-recursion check over the grammar (llama_grammar_detect_left_recursion). */
    grammarLeftmostSteps: 200_000,
    /** Rules one left-most path passes through (the depth of that check's recursion). */
    grammarLeftmostDepth: 2048,
    /** Alternatives that can begin at one point of a grammar (the parse states llama.cpp keeps and compares pairwise). */
    grammarAlternativesAtOnce: 1024
} as const;

/** A context may exceed the model's trained context by this factor (RoPE scaling); beyond it output is garbage. */
export const CONTEXT_OVER_TRAINED_FACTOR = 4;

/** `[min, max]` as a message shows it. */
function rangeText(limit: NumberLimit, max: number): string {
    const unit = limit.unit == null ? "" : limit.unit === "%" ? "%" : ` ${limit.unit}`;
    const kind = limit.integer ? "an integer" : "a number";
    return limit.minExclusive === true ? `${kind} above ${limit.min}${unit} and at most ${max}${unit}` : `${kind} from ${limit.min} to ${max}${unit}`;
}

/** The sentence for a value outside `name`'s range (or over a tighter `max` the caller knows, with its reason). */
export function limitMessage(name: LimitName, value: unknown, tighter?: {max: number; reason: string}): string {
    const limit: NumberLimit = LIMITS[name];
    const max = tighter != null ? Math.min(tighter.max, limit.max) : limit.max;
    const shown = typeof value === "string" ? JSON.stringify(value.length > 24 ? `${value.slice(0, 24)}…` : value) : String(value);
    return `The ${limit.label} must be ${rangeText(limit, max)}${tighter != null && tighter.max < limit.max ? ` (${tighter.reason})` : ""}; got ${shown}.`;
}

/** Whether `value` is a number within `name`'s range (and under `tighterMax`, where given). */
export function withinLimit(name: LimitName, value: unknown, tighterMax?: number): value is number {
    const limit: NumberLimit = LIMITS[name];
    if (typeof value !== "number" || !Number.isFinite(value) || (limit.integer && !Number.isSafeInteger(value)))
        return false;
    const max = tighterMax != null ? Math.min(tighterMax, limit.max) : limit.max;
    return (limit.minExclusive === true ? value > limit.min : value >= limit.min) && value <= max;
}

/**
 * `value` checked against `name`'s range: the number, or the sentence that says what is allowed.
 * `tighter` adds a limit that the machine or the model sets, with the reason shown to the user.
 */
export function checkLimit(name: LimitName, value: unknown, tighter?: {max: number; reason: string}):
    {ok: true; value: number} | {ok: false; message: string} {
    return withinLimit(name, value, tighter?.max) ? {ok: true, value} : {ok: false, message: limitMessage(name, value, tighter)};
}

/**
 * Text typed by a person (a CLI flag) as a number for `name`: plain decimal only, so `0x10`, `" 3"`, `1e3` and `""` are
 * refused rather than read as something the user did not write.
 */
export function parseLimitText(name: LimitName, text: string, tighter?: {max: number; reason: string}):
    {ok: true; value: number} | {ok: false; message: string} {
    const limit: NumberLimit = LIMITS[name];
    const pattern = limit.integer ? /^[0-9]{1,16}$/ : /^[0-9]{1,16}(?:\.[0-9]{1,16})?$/;
    if (!pattern.test(text))
        return {ok: false, message: limitMessage(name, text, tighter)};
    return checkLimit(name, Number(text), tighter);
}
