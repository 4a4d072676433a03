/**
 * Every field an OpenAI-compatible request body may hold, and what this server does with it: the one table that the
 * parser (parseGenerationRequest.ts) reads a body through, so a field is either read here or refused — never dropped.
 *
 * The list is OpenAI's `ChatCompletionCreateParamsBase` and `CompletionCreateParamsBase` (the `openai` npm package:
 * resources/chat/completions/completions.d.ts, resources/completions.d.ts) plus the llama-server extensions clients
 * send (llama.cpp tools/server/README.md: `top_k`, `min_p`, `repeat_penalty`, `repeat_last_n`, `n_predict`,
 * `cache_prompt`, `json_schema`, `grammar`, …). Each entry is one of:
 * - `honoured`: the field does what OpenAI (or llama-server) documents;
 * - `inert`: the field only steers OpenAI's hosted service (billing, retention, abuse tracking); it is checked and
 *   accepted because accepting it changes nothing a client could observe;
 * - `refused`: this server cannot do what the field asks; only its "off" values (`n: 1`, `tools: []`, `logprobs: false`…)
 *   are accepted, anything else gets a 400 whose `param` names the field and whose message is `why`.
 * A field in no entry, or sent to the endpoint that does not take it, gets a 400 naming it.
 */
import {checkLimit, TEXT_LIMITS, type LimitName} from "../../../contract/limits.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import {
    REASONING_EFFORTS, REASONING_FORMATS, type LogprobsRequest, type OutputConstraint, type ReasoningEffort, type ReasoningFormat, type ReasoningRequest,
    type SamplingRequest, type ToolChoice, type ToolDefinition
} from "../../common/GenerationRequest.js";
import {readToolChoice, readTools} from "./toolRequest.js";

export type Endpoint = "chat" | "completion";

/**
 * What the fields read so far set; the parser starts from {@link emptyDraft} and fills it field by field. The sampling
 * fields are {@link SamplingRequest}'s, but for those kept with the field that sent them (checked later, once the
 * endpoint or the model is known), `temperature` (defaulted later) and `logprobs` / `top_logprobs` (checked together).
 */
export type FieldDraft = Omit<SamplingRequest, "maxTokens" | "temperature" | "logitBias" | "constraint" | "logprobs"> & {
    maxTokens: {value: number; field: string} | undefined;
    temperature: number | undefined;
    /** Token id → bias, as sent (ids are checked against the vocabulary once the model is known: samplingOptions.ts). */
    logitBias: Map<number, number>;
    constraint: {value: OutputConstraint; field: string} | null;
    /** `logprobs` and `top_logprobs` as sent; {@link logprobsOf} checks them together once the endpoint is known. */
    logprobs: unknown;
    topLogprobs: unknown;
    /** `tools`, `tool_choice`, `parallel_tool_calls` as read; parseGenerationRequest.ts checks them together (toolUseOf). */
    tools: ToolDefinition[] | undefined;
    toolChoice: ToolChoice | undefined;
    parallelToolCalls: boolean | undefined;
    /** `reasoning_format`, `reasoning_effort` and `chat_template_kwargs.enable_thinking` as read (chatReasoning.ts checks them against the template). */
    reasoningFormat: ReasoningFormat | undefined;
    thinking: ReasoningRequest["thinking"];
    effort: ReasoningRequest["effort"];
};

export function emptyDraft(): FieldDraft {
    return {
        model: null, maxTokens: undefined, temperature: undefined, topP: undefined, topK: undefined, minP: undefined, seed: undefined,
        stop: [], stream: false, includeUsage: false, frequencyPenalty: undefined, presencePenalty: undefined, repeatPenalty: undefined,
        repeatLastN: undefined, logitBias: new Map(), constraint: null, logprobs: undefined, topLogprobs: undefined,
        tools: undefined, toolChoice: undefined, parallelToolCalls: undefined, reasoningFormat: undefined, thinking: undefined, effort: undefined
    };
}

type Read = (value: unknown, draft: FieldDraft, field: string) => void;

/** One row of the table. */
export type RequestField = {
    readonly endpoints: readonly Endpoint[];
    readonly treatment: "honoured" | "inert" | "refused";
    /** Honoured or inert: what the server does with it. Refused: why, as the 400's message says it. */
    readonly why: string;
    /** Checks `value` (never `null`/absent: those mean "not sent") and records it in the draft; throws a 400 otherwise. */
    readonly read: Read;
};

const BOTH: readonly Endpoint[] = ["chat", "completion"];
const CHAT: readonly Endpoint[] = ["chat"];
const COMPLETION: readonly Endpoint[] = ["completion"];

/** The parser reads these itself (they need the endpoint's own shapes); the table only lists them. */
const READ_BY_PARSER: Read = () => {};

function bad(field: string, message: string): OpenAiError {
    return OpenAiError.badRequest(message, field);
}

function limited(limit: LimitName, value: unknown, field: string): number {
    const checked = checkLimit(limit, value);
    if (!checked.ok)
        throw bad(field, `\`${field}\`: ${checked.message}`);
    return checked.value;
}

function boolean(value: unknown, field: string): boolean {
    if (typeof value !== "boolean")
        throw bad(field, `\`${field}\` must be true or false.`);
    return value;
}

function shortString(value: unknown, field: string, maxLength: number): string {
    if (typeof value !== "string" || value.length > maxLength)
        throw bad(field, `\`${field}\` must be a string of at most ${maxLength} characters.`);
    return value;
}

function plainObject(value: unknown, field: string): Record<string, unknown> {
    if (typeof value !== "object" || value == null || Array.isArray(value))
        throw bad(field, `\`${field}\` must be an object.`);
    return value as Record<string, unknown>;
}

/** A refused field: only the values in `off` are accepted (they ask for nothing this server lacks). */
function refused(endpoints: readonly Endpoint[], why: string, off: (value: unknown) => boolean): RequestField {
    return {
        endpoints, treatment: "refused", why,
        read: (value, _draft, field) => {
            if (!off(value))
                throw bad(field, `\`${field}\` is not supported by this server: ${why}`);
        }
    };
}

const isEmptyArray = (value: unknown) => Array.isArray(value) && value.length === 0;

function setMaxTokens(value: unknown, draft: FieldDraft, field: string): void {
    const tokens = limited("maxTokens", value, field);
    if (draft.maxTokens != null && draft.maxTokens.value !== tokens)
        throw bad(field, `\`${field}\` (${tokens}) contradicts \`${draft.maxTokens.field}\` (${draft.maxTokens.value}): send one of them.`);
    draft.maxTokens = {value: tokens, field};
}

function setConstraint(draft: FieldDraft, constraint: OutputConstraint, field: string): void {
    if (draft.constraint != null)
        throw bad(field, `\`${field}\` and \`${draft.constraint.field}\` both constrain the output: send one of them.`);
    draft.constraint = {value: constraint, field};
}

/** A JSON schema as sent: an object whose JSON text stays within the message bound. */
function schemaObject(value: unknown, field: string): Record<string, unknown> {
    const schema = plainObject(value, field);
    if (JSON.stringify(schema).length > TEXT_LIMITS.message)
        throw bad(field, `\`${field}\` is longer than ${TEXT_LIMITS.message} characters of JSON.`);
    return schema;
}

const RESPONSE_FORMAT_KEYS = new Set(["type", "json_schema"]);
const JSON_SCHEMA_KEYS = new Set(["name", "schema", "strict", "description"]);

function readResponseFormat(value: unknown, draft: FieldDraft, field: string): void {
    const format = plainObject(value, field);
    for (const key of Object.keys(format))
        if (!RESPONSE_FORMAT_KEYS.has(key))
            throw bad(`${field}.${key}`, `\`${field}.${key}\` is not a field of response_format (it takes "type" and, for "json_schema", "json_schema").`);
    if (format.type === "text") {
        if (format.json_schema != null)
            throw bad(`${field}.json_schema`, `\`${field}.json_schema\` goes with "type": "json_schema", not "text".`);
        return;
    }
    if (format.type === "json_object") {
        if (format.json_schema != null)
            throw bad(`${field}.json_schema`, `\`${field}.json_schema\` goes with "type": "json_schema", not "json_object".`);
        // OpenAI's JSON mode answers one JSON object
        setConstraint(draft, {kind: "json", schema: {type: "object"}, source: "response_format"}, field);
        return;
    }
    if (format.type !== "json_schema")
        throw bad(`${field}.type`, `\`${field}.type\` must be "text", "json_object" or "json_schema".`);
    const param = `${field}.json_schema`;
    const spec = plainObject(format.json_schema, param);
    for (const key of Object.keys(spec))
        if (!JSON_SCHEMA_KEYS.has(key))
            throw bad(`${param}.${key}`, `\`${param}.${key}\` is not a field of json_schema (it takes "name", "schema", "strict" and "description").`);
    if (typeof spec.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(spec.name))
        throw bad(`${param}.name`, `\`${param}.name\` must be 1 to 64 letters, digits, underscores or dashes.`);
    if (spec.strict != null)
        boolean(spec.strict, `${param}.strict`);
    if (spec.description != null)
        shortString(spec.description, `${param}.description`, TEXT_LIMITS.message);
    // OpenAI: without a schema, any JSON object; strict or not, this server always enforces the schema by grammar
    const schema = spec.schema == null ? {type: "object"} : schemaObject(spec.schema, `${param}.schema`);
    setConstraint(draft, {kind: "json", schema, source: "response_format"}, field);
}

const TEXT_KEYS = new Set(["format"]);
const TEXT_FORMAT_KEYS = new Set(["type", "name", "schema", "strict", "description"]);

/**
 * The Responses API's `text` (`{format: {type: "text"} | {type: "json_object"} | {type: "json_schema", name, schema,
 * strict, description}}`, the schema's fields beside `type`, as OpenAI's Responses API takes them): the output
 * constraint it asks for, enforced as response_format's is; `null` for free text.
 */
export function responsesTextConstraint(value: unknown): OutputConstraint | null {
    if (value == null)
        return null;
    const text = plainObject(value, "text");
    for (const key of Object.keys(text))
        if (!TEXT_KEYS.has(key))
            throw bad(`text.${key.slice(0, 40)}`, `\`text.${key.slice(0, 40)}\` is not supported by this server's /v1/responses (\`text\` takes "format").`);
    if (text.format == null)
        return null;
    const field = "text.format";
    const format = plainObject(text.format, field);
    for (const key of Object.keys(format))
        if (!TEXT_FORMAT_KEYS.has(key))
            throw bad(`${field}.${key.slice(0, 40)}`, `\`${field}.${key.slice(0, 40)}\` is not a field of text.format (it takes "type" and, for "json_schema", "name", "schema", "strict" and "description").`);
    if (format.type === "text" || format.type === "json_object") {
        const extra = ["name", "schema", "strict", "description"].find((key) => format[key] != null);
        if (extra != null)
            throw bad(`${field}.${extra}`, `\`${field}.${extra}\` goes with "type": "json_schema", not "${format.type}".`);
        // JSON mode answers one JSON object
        return format.type === "text" ? null : {kind: "json", schema: {type: "object"}, source: field};
    }
    if (format.type !== "json_schema")
        throw bad(`${field}.type`, `\`${field}.type\` must be "text", "json_object" or "json_schema".`);
    if (typeof format.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(format.name))
        throw bad(`${field}.name`, `\`${field}.name\` must be 1 to 64 letters, digits, underscores or dashes.`);
    if (format.strict != null)
        boolean(format.strict, `${field}.strict`);
    if (format.description != null)
        shortString(format.description, `${field}.description`, TEXT_LIMITS.message);
    if (format.schema == null)
        throw bad(`${field}.schema`, `\`${field}.schema\` is required with "type": "json_schema".`);
    // strict or not, this server always enforces the schema by grammar
    return {kind: "json", schema: schemaObject(format.schema, `${field}.schema`), source: field};
}

function readLogitBias(value: unknown, draft: FieldDraft, field: string): void {
    const bias = plainObject(value, field);
    const entries = Object.entries(bias);
    limited("logitBiasCount", entries.length, field);
    for (const [key, amount] of entries) {
        // token ids as OpenAI sends them: canonical decimal strings ("01", "1.0", " 1", "-1" name no token)
        if (!/^(0|[1-9][0-9]{0,9})$/.test(key) || Number(key) > 0xffff_ffff)
            throw bad(field, `\`${field}\` keys must be token ids written as decimal integers (got ${JSON.stringify(key.slice(0, 24))}).`);
        draft.logitBias.set(Number(key), limited("logitBias", amount, `${field}.${key}`));
    }
}

function readStop(value: unknown, draft: FieldDraft, field: string): void {
    const list = typeof value === "string" ? [value] : value;
    if (!Array.isArray(list) || !list.every((item): item is string => typeof item === "string" && item !== ""))
        throw bad(field, "`stop` must be a non-empty string or an array of them.");
    limited("stopCount", list.length, field);
    if (list.some((item) => item.length > TEXT_LIMITS.stopString))
        throw bad(field, `Each \`stop\` sequence must be at most ${TEXT_LIMITS.stopString} characters.`);
    draft.stop = list;
}

const STREAM_OPTION_KEYS = new Set(["include_usage", "include_obfuscation"]);

function readStreamOptions(value: unknown, draft: FieldDraft, field: string): void {
    const options = plainObject(value, field);
    for (const [key, option] of Object.entries(options)) {
        if (!STREAM_OPTION_KEYS.has(key))
            throw bad(`${field}.${key}`, `\`${field}.${key}\` is not a stream option (they are "include_usage" and "include_obfuscation").`);
        if (option == null)
            continue;
        if (key === "include_usage")
            draft.includeUsage = boolean(option, `${field}.${key}`);
        else if (boolean(option, `${field}.${key}`))
            throw bad(`${field}.${key}`, `\`${field}.${key}\` is not supported by this server: its chunks carry no obfuscation padding (send false).`);
    }
}

/** Records a thinking switch or effort level, refusing a second field that says otherwise. */
function setThinking(draft: FieldDraft, read: Pick<ReasoningRequest, "thinking" | "effort">, field: string): void {
    const earlier = draft.thinking ?? draft.effort;
    if (earlier != null && (read.effort != null || draft.effort != null || draft.thinking?.on !== read.thinking?.on))
        throw bad(field, `\`${field}\` and \`${earlier.field}\` both set the thinking: send one of them.`);
    draft.thinking ??= read.thinking;
    draft.effort ??= read.effort;
}

/** `chat_template_kwargs`: only `enable_thinking`, a boolean (llama-server refuses a string there too). */
function readTemplateKwargs(value: unknown, draft: FieldDraft, field: string): void {
    const kwargs = plainObject(value, field);
    for (const [key, item] of Object.entries(kwargs)) {
        const at = `${field}.${key.slice(0, 40)}`;
        if (key !== "enable_thinking")
            throw bad(at, `\`${at}\` is not supported by this server: of the chat template's variables it takes only enable_thinking.`);
        if (item != null)
            setThinking(draft, {thinking: {on: boolean(item, at), field: at}}, at);
    }
}

function number(limit: LimitName, set: (draft: FieldDraft, value: number) => void): Read {
    return (value, draft, field) => set(draft, limited(limit, value, field));
}

/** Metadata as OpenAI bounds it: at most 16 keys of ≤ 64 characters, string values of ≤ 512. */
function readMetadata(value: unknown, _draft: FieldDraft, field: string): void {
    const entries = Object.entries(plainObject(value, field));
    if (entries.length > 16 || entries.some(([key, item]) => key.length > 64 || typeof item !== "string" || item.length > 512))
        throw bad(field, `\`${field}\` must be an object of at most 16 string values (keys up to 64 characters, values up to 512).`);
}

const inert = (endpoints: readonly Endpoint[], why: string, read: Read): RequestField => ({endpoints, treatment: "inert", why, read});
const honoured = (endpoints: readonly Endpoint[], why: string, read: Read): RequestField => ({endpoints, treatment: "honoured", why, read});

/**
 * Where the reported log-probabilities come from (the `why` of both fields, and docs/server.md): the
 * distribution node-llama-cpp's sampler drew the token from (LlamaContextSequence.evaluateWithMetadata's
 * `probabilities`, llama/addon/AddonContext.cpp's softmax of the candidates the sampler chain left), as llama-server's
 * `post_sampling_probs`.
 */
const LOGPROBS_SOURCE = "The numbers are natural logs of the probabilities the sampler drew from, after logit_bias, the penalties and " +
    "the grammar and, when temperature > 0, after top_k, top_p, min_p and temperature (llama-server's post_sampling_probs): so a " +
    "token those cut is not listed, and fewer alternatives than asked come back when fewer are left. With temperature 0 (greedy) " +
    "they are the softmax of the logits after bias, penalties and grammar, at temperature 1.";

export const REQUEST_FIELDS = {
    // —— OpenAI: both endpoints
    model: honoured(BOTH, "Echoed in the response; the server always answers with its one loaded model.", (value, draft, field) => {
        draft.model = shortString(value, field, TEXT_LIMITS.path);
    }),
    messages: honoured(CHAT, "The conversation, through the model's chat template; a last assistant message is continued.", READ_BY_PARSER),
    prompt: honoured(COMPLETION, "One prompt string (or an array of exactly one).", READ_BY_PARSER),
    max_tokens: honoured(BOTH, "At most this many generated tokens (finish_reason \"length\" when reached).", setMaxTokens),
    max_completion_tokens: honoured(CHAT, "The same as max_tokens.", setMaxTokens),
    temperature: honoured(BOTH, "llama.cpp's temperature sampler; 0 is greedy.", number("temperature", (d, v) => d.temperature = v)),
    top_p: honoured(BOTH, "llama.cpp's top-p sampler.", number("topP", (d, v) => d.topP = v)),
    seed: honoured(BOTH, "The seed of llama.cpp's distribution sampler.", number("seed", (d, v) => d.seed = v)),
    stop: honoured(BOTH, "Up to 4 stop sequences; the reply ends before the first one.", readStop),
    stream: honoured(BOTH, "Server-sent events, one chunk per text delta (and, with tools, per tool-call delta: ToolCallStream.ts).", (value, draft, field) => {
        draft.stream = boolean(value, field);
    }),
    stream_options: honoured(BOTH, "include_usage: a last chunk with usage; include_obfuscation: false only.", readStreamOptions),
    frequency_penalty: honoured(BOTH, "llama.cpp's penalties sampler (llama_sampler_init_penalties) over the generated tokens.",
        number("penalty", (d, v) => d.frequencyPenalty = v)),
    presence_penalty: honoured(BOTH, "llama.cpp's penalties sampler (llama_sampler_init_penalties) over the generated tokens.",
        number("penalty", (d, v) => d.presencePenalty = v)),
    logit_bias: honoured(BOTH, "llama.cpp's logit-bias sampler (llama_sampler_init_logit_bias); −100 bans the token.", readLogitBias),
    response_format: honoured(CHAT, "json_object and json_schema are enforced by a grammar (llama.cpp's json_schema_to_grammar, llama_sampler_init_grammar).",
        readResponseFormat),
    n: refused(BOTH, "it returns one choice per request (send 1).", (value) => value === 1),
    logprobs: honoured(BOTH, `Chat: true reports each generated token's log-probability (top_logprobs adds the most likely alternatives); completions: an integer 0–5, the alternatives per token. ${LOGPROBS_SOURCE}`,
        (value, draft) => {
            draft.logprobs = value;
        }),
    top_logprobs: honoured(CHAT, `0–20 most likely alternatives per generated token (needs logprobs: true). ${LOGPROBS_SOURCE}`, (value, draft) => {
        draft.topLogprobs = value;
    }),
    user: inert(BOTH, "Only tags requests for OpenAI's abuse monitoring; nothing here reads it.", (value, _draft, field) => {
        shortString(value, field, 256);
    }),
    // —— OpenAI: chat only
    audio: refused(CHAT, "this model reads and writes text only.", () => false),
    modalities: refused(CHAT, "this model writes text only (send [\"text\"]).", (value) => Array.isArray(value) && value.length === 1 && value[0] === "text"),
    function_call: refused(CHAT, "the deprecated functions API is not supported: send `tools` and `tool_choice` (or \"none\").", (value) => value === "none"),
    functions: refused(CHAT, "the deprecated functions API is not supported: send `tools` instead.", isEmptyArray),
    tools: honoured(CHAT, "Functions the model may call: the chat template is applied with them and the calls are constrained and parsed by " +
        "llama.cpp's chat layer (common_chat_templates_apply, common_chat_parse), as llama-server does; the reply's calls come in message.tool_calls (streamed: delta.tool_calls).",
    (value, draft, field) => {
        draft.tools = readTools(value, field);
    }),
    tool_choice: honoured(CHAT, "\"none\", \"auto\" (a lazy grammar: free text until the template's tool-call marker), \"required\" or a named " +
        "function (a grammar that allows only tool calls, or only that function's).", (value, draft, field) => {
        draft.toolChoice = readToolChoice(value, field);
    }),
    parallel_tool_calls: honoured(CHAT, "false: the grammar allows one tool call; true (the default): several.", (value, draft, field) => {
        draft.parallelToolCalls = boolean(value, field);
    }),
    prediction: refused(CHAT, "predicted outputs are not supported.", () => false),
    reasoning_effort: honoured(CHAT, "\"none\" turns thinking off where the chat template has a switch for it (enable_thinking, as llama-server); another " +
        "level is handed to a template that reads `reasoning_effort` (gpt-oss's), and refused by a template that does not.", (value, draft, field) => {
        setThinking(draft, readEffort(value, field), field);
    }),
    reasoning_format: honoured(CHAT, "llama-server's: \"auto\" (the default) and \"deepseek\" give a reasoning model's thinking as message.reasoning_content " +
        "(streamed: delta.reasoning_content) and only the answer as content; \"deepseek-legacy\" too (llama-server asks it to stream the thinking inline, " +
        "but this llama.cpp's parser no longer reads that: common_chat_peg_parse); " +
        "\"none\" leaves it in the content as the model wrote it (llama.cpp's chat layer, common_chat_parse).", (value, draft, field) => {
        if (typeof value !== "string" || !(REASONING_FORMATS as readonly string[]).includes(value))
            throw bad(field, `\`${field}\` must be one of ${REASONING_FORMATS.map((name) => `"${name}"`).join(", ")}.`);
        draft.reasoningFormat = value as ReasoningFormat;
    }),
    chat_template_kwargs: honoured(CHAT, "llama-server's extension: `enable_thinking` (true or false) is the chat template's thinking switch; other " +
        "variables are refused (node-llama-cpp's chat wrappers cannot take them).", readTemplateKwargs),
    verbosity: refused(CHAT, "this server has no verbosity control.", () => false),
    web_search_options: refused(CHAT, "it has no web search.", () => false),
    moderation: refused(CHAT, "it runs no moderation.", () => false),
    metadata: inert(CHAT, "Only labels completions stored by OpenAI; this server stores none.", readMetadata),
    store: refused(CHAT, "it stores no completions (send false).", (value) => value === false),
    service_tier: refused(CHAT, "it has one tier (send \"auto\" or \"default\").", (value) => value === "auto" || value === "default"),
    safety_identifier: inert(CHAT, "Only tags requests for OpenAI's abuse monitoring; nothing here reads it.", (value, _draft, field) => {
        shortString(value, field, 64);
    }),
    prompt_cache_key: inert(CHAT, "Only routes requests among OpenAI's machines; here a prefix is reused whenever it is still cached.",
        (value, _draft, field) => {
            shortString(value, field, 1024);
        }),
    prompt_cache_retention: refused(CHAT, "it keeps a cached prefix only while it is in memory (send \"in_memory\").", (value) => value === "in_memory"),
    prompt_cache_options: refused(CHAT, "it has no prompt-cache options.", () => false),
    // —— OpenAI: completions only
    best_of: refused(COMPLETION, "it generates one candidate per request (send 1).", (value) => value === 1),
    echo: refused(COMPLETION, "it does not echo the prompt (send false).", (value) => value === false),
    suffix: refused(COMPLETION, "fill-in-the-middle (suffix) is not supported.", () => false),
    // —— llama-server extensions
    top_k: honoured(BOTH, "llama.cpp's top-k sampler (llama-server's extension).", number("topK", (d, v) => d.topK = v)),
    min_p: honoured(BOTH, "llama.cpp's min-p sampler (llama-server's extension).", number("minP", (d, v) => d.minP = v)),
    repeat_penalty: honoured(BOTH, "llama.cpp's repeat penalty (llama-server's extension).", number("repeatPenalty", (d, v) => d.repeatPenalty = v)),
    repeat_last_n: honoured(BOTH, "The generated tokens the three penalties look back over (llama-server's extension).",
        number("repeatLastN", (d, v) => d.repeatLastN = v)),
    n_predict: honoured(BOTH, "The same as max_tokens (llama-server's extension).", setMaxTokens),
    cache_prompt: refused(BOTH, "it always reuses a prefix still in the KV cache (send true).", (value) => value === true),
    json_schema: honoured(BOTH, "A JSON schema the output must follow, enforced by grammar (llama-server's extension).", (value, draft, field) => {
        setConstraint(draft, {kind: "json", schema: schemaObject(value, field), source: "json_schema"}, field);
    }),
    grammar: honoured(BOTH, "A GBNF grammar the output must follow (llama-server's extension; llama_sampler_init_grammar).", (value, draft, field) => {
        const gbnf = shortString(value, field, TEXT_LIMITS.message);
        if (gbnf.trim() === "")
            throw bad(field, `\`${field}\` must be a non-empty GBNF grammar.`);
        setConstraint(draft, {kind: "grammar", gbnf}, field);
    }),
    typical_p: refused(BOTH, "it has no locally typical sampler (send 1).", (value) => value === 1),
    mirostat: refused(BOTH, "it has no Mirostat sampler (send 0).", (value) => value === 0),
    n_probs: refused(BOTH, "its probabilities come in OpenAI's shape: send logprobs and top_logprobs (chat) or logprobs (completions) instead (or 0).",
        (value) => value === 0),
    ignore_eos: refused(BOTH, "it always stops at the end of generation token (send false).", (value) => value === false),
    id_slot: refused(BOTH, "it assigns sequences itself (send -1).", (value) => value === -1),
    dry_multiplier: refused(BOTH, "it has no DRY sampler here (send 0).", (value) => value === 0),
    xtc_probability: refused(BOTH, "it has no XTC sampler here (send 0).", (value) => value === 0)
} as const satisfies Record<string, RequestField>;

export type RequestFieldName = keyof typeof REQUEST_FIELDS;

/** One row of the table of a chat message's fields (parseGenerationRequest.ts reads each, as it depends on the role). */
export type MessageField = {
    readonly treatment: "honoured" | "refused";
    /** Honoured: what the server does with it. Refused: why, as the 400's message says it (`null` is taken as not sent). */
    readonly why: string;
};

/**
 * Every field a message of `messages` may hold: those of the `openai` package's message params
 * (resources/chat/completions/completions.d.ts: ChatCompletionMessageParam's members). A key in no row is refused by name.
 */
export const MESSAGE_FIELDS = {
    role: {treatment: "honoured", why: "\"system\" or \"developer\" (both the template's system turn), \"user\", \"assistant\" or \"tool\"."},
    content: {treatment: "honoured", why: "A string, or an array of text parts joined (this model reads text only)."},
    name: {treatment: "honoured", why: "The participant's name (on a tool message, the function's), handed to the chat template as llama-server does " +
        "(common_chat_msgs_parse_oaicompat) when llama.cpp's chat layer templates the request, that is with tools or tool turns; node-llama-cpp's " +
        "chat wrappers, which template the other requests, have no names, so there it is refused."},
    tool_calls: {treatment: "honoured", why: "An assistant's calls, templated as the model writes them (toolCallPrompt.ts)."},
    tool_call_id: {treatment: "honoured", why: "The call a tool message answers."},
    refusal: {treatment: "refused", why: "a refusal is an OpenAI model's kind of answer; send it as the assistant's content (or null)."},
    audio: {treatment: "refused", why: "this model reads and writes text only (send null)."},
    function_call: {treatment: "refused", why: "the deprecated functions API is not supported: send tool_calls (or null)."},
    reasoning_content: {treatment: "honoured", why: "An assistant's thinking, as llama-server takes it back (common_chat_msgs_parse_oaicompat): handed to a " +
        "reasoning model's chat template, which shows it where the template does (Qwen3's, for the turns after the last user message); refused where " +
        "node-llama-cpp's chat wrappers template the request (a model whose template has no thinking, or an assistant message to continue)."}
} as const satisfies Record<string, MessageField>;

export type MessageFieldName = keyof typeof MESSAGE_FIELDS;

/** The row of `field` for `endpoint`, or `null` when the endpoint does not take it. */
export function requestField(field: string, endpoint: Endpoint): RequestField | null {
    if (!Object.hasOwn(REQUEST_FIELDS, field))
        return null;
    const row: RequestField = REQUEST_FIELDS[field as RequestFieldName];
    return row.endpoints.includes(endpoint) ? row : null;
}

/**
 * `logprobs` / `top_logprobs` of a request to `endpoint`, checked together (the fields may come in any order):
 * chat takes `logprobs` true/false and `top_logprobs` 0–20 only with `logprobs: true` (as OpenAI requires); completions
 * take `logprobs` as an integer 0–5 (false is "none"). `null`: none asked for.
 */
export function logprobsOf(draft: Pick<FieldDraft, "logprobs" | "topLogprobs">, endpoint: Endpoint): LogprobsRequest | null {
    const {logprobs, topLogprobs} = draft;
    if (endpoint === "completion") {
        if (logprobs === undefined || logprobs === false)
            return null;
        return {top: limited("completionLogprobs", logprobs, "logprobs")};
    }
    if (logprobs !== undefined && typeof logprobs !== "boolean")
        throw bad("logprobs", "`logprobs` must be true or false on /v1/chat/completions (top_logprobs sets how many alternatives).");
    if (topLogprobs !== undefined && logprobs !== true)
        throw bad("top_logprobs", "`top_logprobs` needs `logprobs: true`.");
    if (logprobs !== true)
        return null;
    return {top: topLogprobs === undefined ? 0 : limited("topLogprobs", topLogprobs, "top_logprobs")};
}

/** Reads a `reasoning_effort`-style level into the request (shared by chat's `reasoning_effort` and the Responses API's `reasoning.effort`). */
export function readEffort(value: unknown, field: string): Pick<ReasoningRequest, "thinking" | "effort"> {
    if (typeof value !== "string" || !(REASONING_EFFORTS as readonly string[]).includes(value))
        throw OpenAiError.badRequest(`\`${field}\` must be one of ${REASONING_EFFORTS.map((level) => `"${level}"`).join(", ")}.`, field);
    return value === "none" ? {thinking: {on: false, field}} : {effort: {level: value as Exclude<ReasoningEffort, "none">, field}};
}
