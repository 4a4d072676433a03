/**
 * A generation request as every wire dialect reads it (OpenAI's chat completions and completions; the Responses API and
 * Anthropic's messages convert to the chat shape, as llama.cpp's server converts them to chat-completions first): the
 * messages, the sampling, stopping and output constraints, tools, and what is asked of a reasoning model's thinking.
 * A leaf: the parsers (protocols/), the generation (generation/) and the conversation key (common/) all read it, and it
 * imports nothing of theirs.
 */

// ---- messages and requests --------------------------------------------------------------------------------------------

/**
 * One chat message, its content flattened to text. Tool turns (chat completions only): an assistant message's
 * `toolCalls`, and a `tool` message, the result of the call `toolCallId`.
 */
export type ChatMessage = (
    | {role: "system" | "user"; text: string}
    | {role: "assistant"; text: string; toolCalls?: ToolCall[]; /** Its thinking, sent back (`reasoning_content`), for the chat template. */ reasoning?: string}
    | {role: "tool"; text: string; toolCallId: string}
) & {
    /** The participant's name (a tool message's: the function's), for the chat template; requests with tools only (MESSAGE_FIELDS). */
    name?: string;
};

/** What both endpoints share: sampling, stopping, output constraints and streaming. */
export type SamplingRequest = {
    /** The `model` field as sent (echoed back); the server always answers with its one loaded model. */
    model: string | null;
    /** `max_tokens` (or `max_completion_tokens`, `n_predict`); `undefined` when not sent: the rest of the context. */
    maxTokens: number | undefined;
    temperature: number;
    topP: number | undefined;
    topK: number | undefined;
    minP: number | undefined;
    seed: number | undefined;
    stop: string[];
    stream: boolean;
    /** `stream_options.include_usage`: a last chunk with `usage` (and an empty `choices`). */
    includeUsage: boolean;
    frequencyPenalty: number | undefined;
    presencePenalty: number | undefined;
    repeatPenalty: number | undefined;
    /** `repeat_last_n`: generated tokens the penalties look back over. */
    repeatLastN: number | undefined;
    /** `logit_bias`: token id → bias (−100‥100). */
    logitBias: ReadonlyMap<number, number>;
    /** `response_format` (json_object / json_schema), `json_schema` or `grammar`; `null`: free text. */
    constraint: OutputConstraint | null;
    /** `logprobs` / `top_logprobs`; `null`: none asked for. */
    logprobs: LogprobsRequest | null;
};

/**
 * `tools`: `null` when the request neither sends tools nor has tool turns; otherwise the chat template is applied by
 * llama.cpp's chat layer (toolCallPrompt.ts) instead of node-llama-cpp's chat wrapper.
 */
export type ChatCompletionRequest = SamplingRequest & {
    kind: "chat"; messages: ChatMessage[]; tools: ToolUse | null;
    /** What the request asks of a reasoning model's thinking (chatReasoning.ts). */
    reasoning: ReasoningRequest;
};

export type CompletionRequest = SamplingRequest & {kind: "completion"; prompt: string};

export type GenerationRequest = ChatCompletionRequest | CompletionRequest;

// ---- output constraints and log-probabilities -------------------------------------------------------------------------

/** `response_format` / `json_schema` / `grammar`, as the sampler will enforce it. */
export type OutputConstraint =
    | {kind: "json"; schema: Record<string, unknown>; source: "response_format" | "json_schema" | "text.format"}
    | {kind: "grammar"; gbnf: string};

/** Log-probabilities to report per generated token: the chosen token's and the `top` most likely (0: none). */
export type LogprobsRequest = {top: number};

// ---- tools ------------------------------------------------------------------------------------------------------------

/** One function the model may call. */
export type ToolDefinition = {
    name: string;
    description: string | null;
    /** A JSON schema of `type: "object"`; `{type: "object", properties: {}}` (no arguments) when not sent. */
    parameters: Record<string, unknown>;
    /** Where the request sent the parameters (`tools[2].function.parameters`), for a refusal to name; defaults to `tools`. */
    parametersField?: string;
};

/** `tool_choice`: `{name}` forces that function. */
export type ToolChoice = "none" | "auto" | "required" | {name: string};

/** One tool call: as the model made it, or as a client sends it back in an assistant message. */
export type ToolCall = {id: string; name: string; arguments: string};

/** What a chat request asks of tools; `null` on a request with no tools and no tool turns. */
export type ToolUse = {tools: ToolDefinition[]; choice: ToolChoice; parallel: boolean};

// ---- thinking (a reasoning model's) -----------------------------------------------------------------------------------

/**
 * llama.cpp's reasoning formats by name (common_reasoning_format_from_name): `none` leaves the thinking in the content,
 * `deepseek`, `auto` and `deepseek-legacy` put it in `reasoning_content` (the last is documented to stream it inline,
 * which llama-server asks for with reasoning_in_content; this llama.cpp's parser, common_chat_peg_parse, reads it not).
 */
export const REASONING_FORMATS = ["none", "auto", "deepseek", "deepseek-legacy"] as const;

export type ReasoningFormat = typeof REASONING_FORMATS[number];

/** llama-server's default (common_params::reasoning_format, `--reasoning-format`'s "auto"): the thinking is separated. */
export const DEFAULT_REASONING_FORMAT: ReasoningFormat = "auto";

/** OpenAI's `reasoning_effort` levels (the `openai` package's ReasoningEffort); "none" turns thinking off. */
export const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;

export type ReasoningEffort = typeof REASONING_EFFORTS[number];

/** A request's wishes about thinking, each with the field that sent it (named when the template cannot honour it). */
export type ReasoningRequest = {
    format: ReasoningFormat;
    /** `true`/`false`: thinking on or off (the template's `enable_thinking`); `undefined`: the template's default. */
    thinking?: {on: boolean; field: string};
    /** A level other than "none" (that one is `thinking: false`), handed to the template as `reasoning_effort`. */
    effort?: {level: Exclude<ReasoningEffort, "none">; field: string};
    /** The most tokens the thinking may take (Anthropic's `thinking.budget_tokens`): a reply still thinking then is cut there. */
    budget?: {tokens: number; field: string};
};

/** What a request that says nothing about thinking gets. */
export const DEFAULT_REASONING: ReasoningRequest = {format: DEFAULT_REASONING_FORMAT};
