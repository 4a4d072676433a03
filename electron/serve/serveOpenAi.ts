/**
 * An OpenAI-compatible HTTP server for one loaded model: `GET /v1/models`, `POST /v1/chat/completions`,
 * `POST /v1/completions` (streamed as Server-Sent Events or not), errors in OpenAI's shape.
 *
 * It runs in the same process as the engine code (the CLI's `tensorwise serve` loads the model through
 * `EngineService` in its own process, as `tensorwise chat` does). A separate engine process, as the app uses to keep a
 * native crash from taking its window down, protects nothing here: the server has no window, and a crash of either
 * half ends the service anyway; in-process, every token reaches the socket without another IPC hop.
 *
 * Guards: 127.0.0.1 unless told otherwise, and then only with API keys (apiKeys.ts: `Authorization: Bearer <key>`,
 * compared in constant time, 401 otherwise); without keys only `Host: 127.0.0.1|localhost|[::1]:<port>` is answered (a
 * web page that rebinds its DNS name to 127.0.0.1 gets 421); JSON bodies only (a cross-site form cannot post one
 * without a CORS preflight, granted only to the origins listed in `corsOrigins`, CorsPolicy.ts); bodies over {@link MAX_BODY_BYTES} get 413, and a prompt whose
 * bytes alone exceed the context is refused before it is tokenized (promptBound.ts); every request has a time limit
 * (504); a client that disconnects mid-stream stops its sequence; a full queue answers 429 with `Retry-After`.
 *
 * Conversations may outnumber the sequences: each request names its conversation (conversationKey.ts, within its
 * key's tenant), prefers the sequence still holding that conversation's KV cache, and otherwise gets it back by swap or
 * recompute, whichever the cost model (KvCostModel.ts, measured at start by calibrateKvCost.ts) predicts cheaper
 * (ConversationKvStore.ts). Nothing of one conversation is visible to another: a sequence changing hands is cleared
 * first, and an answer's timings describe only its own conversation.
 */
import {randomBytes} from "node:crypto";
import {isLoopbackHost, refuseOpenHost as refuseOpenHostFor, type ServedRequest, type ServerStartupStep} from "../contract/server.js";
import http from "node:http";
import type {AddressInfo} from "node:net";
import {resolveChatWrapper, type ChatWrapper} from "node-llama-cpp";
import {TokenClock} from "../engine/runtime/generationTiming.js";
import type {PlacedModel} from "../engine/runtime/PlacedModel.js";
import {OpenAiError} from "./common/OpenAiError.js";
import {
    chatFinishReason, chunkBody, completionBody, timingsOf, usageChunkBody, type ChunkLogprobs, type Finished
} from "./protocols/openai/replyBodies.js";
import {type GenerationRequest} from "./common/GenerationRequest.js";
import {parseChatCompletionRequest, parseCompletionRequest} from "./protocols/openai/parseGenerationRequest.js";
import {readJsonBody} from "./http/readJsonBody.js";
import type {SchedulingPolicy} from "./scheduling/schedulingPolicies.js";
import {QueueFullError, SequenceScheduler} from "./scheduling/SequenceScheduler.js";
import {chatPromptTokens, ServeSlot} from "./generation/ServeSlot.js";
import {cachedOrMeasuredKvCost} from "./kv/kvCostCache.js";
import {ConversationKvStore, type KvRestoreDecision} from "./kv/ConversationKvStore.js";
import {conversationKey, CONVERSATION_HEADER, OPEN_TENANT} from "./common/conversationKey.js";
import {ApiKeyList} from "./http/apiKeys.js";
import type {KvDiskBudget} from "./kv/kvStateFolder.js";
import {longestTokenBytes, minimumPromptTokens, promptTextBytes, refuseOverlongPrompt} from "./generation/promptBound.js";
import {countedPromptTokens, SYNC_TOKENIZE_BYTES, TokenCounter} from "./generation/TokenCounter.js";
import type {KvCostModel} from "./kv/KvCostModel.js";
import {SseWriter} from "./common/SseWriter.js";
import {constraintsOf} from "./generation/samplingOptions.js";
import {CorsPolicy} from "./http/CorsPolicy.js";
import {ENDPOINT_ALIASES, servedPath} from "./http/endpointAliases.js";
import {ServedEmbeddings} from "./protocols/embeddings/ServedEmbeddings.js";
import type {ReplyFormat} from "./protocols/ReplyFormat.js";
import {parseAnthropicCountTokensRequest, parseAnthropicMessagesRequest} from "./protocols/anthropic/parseAnthropicRequest.js";
import {anthropicErrorBody, anthropicMessageFormat} from "./protocols/anthropic/anthropicReplies.js";
import {parseResponsesRequest} from "./protocols/responses/parseResponsesRequest.js";
import {responsesFormat} from "./protocols/responses/responsesReplies.js";
import {newToolCallId, toolCallPrompt, type ToolCallPrompt} from "./generation/chatLayer/toolCallPrompt.js";
import {
    nativeReasoning, refuseReasoningWithoutChatLayer, templateReasoning, type TemplateReasoning
} from "./generation/chatLayer/chatReasoning.js";
import {ToolCallStream, withoutUnfinishedCall, type ReplyDelta} from "./generation/chatLayer/ToolCallStream.js";

/** Request bodies beyond this are refused (413): room for a full context of text several times over. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export type OpenAiServerOptions = {
    placed: PlacedModel;
    /** The model's name in `/v1/models` and in every response (the file name, by default in the CLI). */
    modelId: string;
    /** The seed of a request that sends none (`serve --seed`, as llama-server's): the same sampled request, the same reply. */
    defaultSeed?: number;
    /** Defaults to `127.0.0.1`; any other address needs `apiKeys`. */
    host?: string;
    /** Defaults to 0 (a free port; see the returned `port`). */
    port?: number;
    /**
     * When not empty, every request must send one of them (`Authorization: Bearer <key>`); each key is its own tenant
     * (one per client): conversations and KV caches are never shared between keys. Defaults to none.
     */
    apiKeys?: readonly string[];
    /**
     * Web origins (`http://localhost:5173`) whose pages may call the server from a browser (CorsPolicy.ts); each must be
     * an exact origin (contract/corsOrigins.ts). Defaults to none: no CORS headers at all.
     */
    corsOrigins?: readonly string[];
    /** Requests that may wait while every sequence is busy. */
    queueLength: number;
    /**
     * Sequences API requests never take, kept for the app's own chat (scheduledChatReply.ts) so it starts at once
     * however many API requests run; at most all but one. Defaults to 0 (`tensorwise serve` has no app chat).
     */
    reservedForApp?: number;
    /** From arrival to the last token, waiting included. */
    requestTimeoutMs: number;
    policy: SchedulingPolicy;
    /** One line per finished request (method, path, status, sequence, timings). */
    log?: (line: string) => void;
    /**
     * Each start-up step as it begins (contract/server.ts SERVER_STARTUP_STEPS), and again with `fraction` (0..1) as a
     * step with known length (the KV measurement) goes on.
     */
    onStartup?: (step: ServerStartupStep, fraction: number | null) => void;
    /** Every completion request answered, and every request refused (not `GET /v1/models` answered), as it ends. */
    onServed?: (served: ServedRequest) => void;
    /** Conversations beyond the sequences: how their KV caches are kept. */
    kv?: {
        /** Defaults to one measured at start on this context (calibrateKvCost.ts), or kept from an earlier start (`cacheDir`). */
        costModel?: KvCostModel;
        /**
         * Folder where measured cost models are kept per model, settings and machine (kvCostCache.ts), so the next
         * start with the same ones skips the measurement. Defaults to none: measured at every start.
         */
        cacheDir?: string;
        /** The longest calibration prompt, tokens. Defaults to calibrateKvCost.ts's. */
        calibrationTokens?: number;
        /** Measure swap and recompute at every restore, whichever is chosen (benchmark mode). Defaults to `false`. */
        measureBoth?: boolean;
        /** Where state files go (a private folder is made inside). Defaults to the OS temp dir. */
        dir?: string;
        /** Disk the state files may take. Defaults to kvStateFolder.ts's DEFAULT_KV_DISK_BUDGET. */
        diskBudget?: KvDiskBudget;
        /** Called with every finished swap-vs-recompute decision (the decision log). */
        onDecision?: (decision: KvRestoreDecision) => void;
    };
};

export type OpenAiServer = {
    url: string;
    port: number;
    scheduler: SequenceScheduler<ServeSlot>;
    /** The model's chat template (from the GGUF), as every slot applies it. */
    chatWrapper: ChatWrapper;
    /** What the chat template does with thinking (found at start, chatReasoning.ts); a template that thinks goes through llama.cpp's chat layer. */
    reasoning: TemplateReasoning;
    /** Tokens of each sequence's context. */
    contextSize: number;
    /** Conversations' KV caches, the cost model in use and its decision log. */
    kv: ConversationKvStore;
    /** `/v1/embeddings`: its context, made on the first request, and what that takes. */
    embeddings: ServedEmbeddings;
    /**
     * Replaces the accepted keys at once, without a restart (the Server screen adds or revokes a client key): the
     * next request is checked against the new list. Throws, changing nothing, when that would leave a non-loopback
     * address without a key.
     */
    setApiKeys(apiKeys: readonly string[]): void;
    close(): Promise<void>;
};

/** Why a request's generation was stopped before it finished. */
class Stopped extends Error {
    /** `thinking-budget`: the thinking took its whole budget (Anthropic's `thinking.budget_tokens`); the reply ends there, cut by the length. */
    constructor(readonly why: "client-gone" | "time-limit" | "thinking-budget") {
        super(why);
    }
}

/** The sentence for a non-loopback address without a key (the CLI prints it before loading anything). */
export function refuseOpenHost(host: string, apiKeys: readonly string[]): string | null {
    return refuseOpenHostFor(host, apiKeys.length > 0, "give API keys that clients must send (--api-key-file or TENSORWISE_API_KEY)");
}

export async function serveOpenAi(options: OpenAiServerOptions): Promise<OpenAiServer> {
    const host = options.host ?? "127.0.0.1";
    let keys = new ApiKeyList(options.apiKeys ?? []);
    const refused = refuseOpenHost(host, options.apiKeys ?? []);
    if (refused != null)
        throw new Error(refused);
    const cors = new CorsPolicy(options.corsOrigins ?? []);
    const {placed} = options;
    const chatWrapper = resolveChatWrapper(placed.model);
    const reasoning = templateReasoning(placed.model, placed.engine.bindings);
    const contextSize = placed.context.contextSize;
    const slots = Array.from({length: placed.context.totalSequences}, (_unused, index) =>
        new ServeSlot(index, placed.context.getSequence(), chatWrapper));
    const scheduler = new SequenceScheduler(slots, {policy: options.policy, queueLength: options.queueLength, reservedForPriority: options.reservedForApp});
    const log = options.log ?? (() => {});
    const costModel = options.kv?.costModel ?? await cachedOrMeasuredKvCost(placed, slots[0]!.sequence, options.kv ?? {}, log, options.onStartup);
    const kv = await ConversationKvStore.create({
        costModel, measureBoth: options.kv?.measureBoth, dir: options.kv?.dir, diskBudget: options.kv?.diskBudget, log,
        onDecision: (decision) => {
            const {predicted, measured} = decision;
            const ms = (value: number | null) => value == null ? "—" : value.toFixed(1);
            log(`kv ${decision.conversation}: ${decision.path} of ${decision.tokens} tokens${decision.fallback != null ? ` (${decision.fallback}, predicted ${predicted.path})` : ""}; ` +
                `predicted swap ${ms(predicted.swapMs)} ms / recompute ${ms(predicted.recomputeMs)} ms; measured swap ${ms(measured.swapMs)} ms / recompute ${ms(measured.recomputeMs)} ms`);
            options.kv?.onDecision?.(decision);
        }
    });
    const maxTokenBytes = longestTokenBytes(placed.model);
    const embeddings = new ServedEmbeddings(placed, contextSize, log);
    const tokenCounter = new TokenCounter(placed.options.modelPath);
    const created = Math.floor(Date.now() / 1000);
    let port = 0;
    const served = (request: http.IncomingMessage, status: number, outcome: string, details: Partial<ServedRequest> = {}) => options.onServed?.({
        at: new Date().toISOString(), path: (request.url ?? "/").split("?")[0]!.slice(0, 100), status, outcome,
        promptTokens: null, generatedTokens: null, queueMs: null, ttftMs: null, tpotMs: null, sequence: null, kv: null, ...details
    });

    const route = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
        if (keys.size === 0 && !isLoopbackHost(hostName(request.headers.host ?? "", port)))
            throw new OpenAiError(421, "This server answers only requests addressed to 127.0.0.1 or localhost.", "invalid_request_error", "bad_host");
        // browsers send preflights without the key: answered before it is checked, and never run as a request
        if (cors.isPreflight(request)) {
            cors.answerPreflight(request, response);
            return;
        }
        const asked = (request.url ?? "/").split("?")[0]!;
        const pathname = servedPath(asked);
        const methodFor = (method: string) => {
            if (request.method !== method)
                throw new OpenAiError(405, `${asked.slice(0, 100)} takes ${method} requests.`, "invalid_request_error", "method_not_allowed");
        };
        // whether the server is up, for load balancers and scripts: no key needed (as llama-server's /health), nothing told
        if (pathname === "/health") {
            methodFor("GET");
            sendJson(response, 200, {status: "ok"});
            return;
        }
        // without keys every client is one tenant: they cannot be told apart (and are all on this machine)
        const tenant = keys.size === 0 ? OPEN_TENANT : keys.tenantOf(request.headers);
        const model = {id: options.modelId, object: "model", created, owned_by: "tensorwise"};
        if (pathname === "/v1/models") {
            methodFor("GET");
            sendJson(response, 200, {object: "list", data: [model]});
        } else if (pathname.startsWith("/v1/models/")) {
            methodFor("GET");
            let id: string;
            try {
                id = decodeURIComponent(pathname.slice("/v1/models/".length));
            } catch {
                throw new OpenAiError(400, "The model id in the path is not valid percent-encoding.", "invalid_request_error", "invalid_model_id");
            }
            if (id !== options.modelId)
                throw new OpenAiError(404, `This server serves one model, ${JSON.stringify(options.modelId)}; there is no model ${JSON.stringify(id.slice(0, 100))}.`,
                    "invalid_request_error", "model_not_found", "model");
            sendJson(response, 200, model);
        } else if (pathname === "/v1/chat/completions") {
            methodFor("POST");
            const parsed = parseChatCompletionRequest(await readJsonBody(request, MAX_BODY_BYTES));
            await generate(parsed, conversationKey(tenant, parsed, request.headers[CONVERSATION_HEADER]), request, response);
        } else if (pathname === "/v1/responses") {
            methodFor("POST");
            const parsed = parseResponsesRequest(await readJsonBody(request, MAX_BODY_BYTES));
            await generate(parsed, conversationKey(tenant, parsed, request.headers[CONVERSATION_HEADER]), request, response, responsesFormat(parsed, parsed.tools != null || reasoning.thinks));
        } else if (pathname === "/v1/messages") {
            methodFor("POST");
            const parsed = parseAnthropicMessagesRequest(await readJsonBody(request, MAX_BODY_BYTES));
            await generate(parsed, conversationKey(tenant, parsed, request.headers[CONVERSATION_HEADER]), request, response, anthropicMessageFormat(parsed.tools != null || reasoning.thinks));
        } else if (pathname === "/v1/messages/count_tokens") {
            methodFor("POST");
            const parsed = parseAnthropicCountTokensRequest(await readJsonBody(request, MAX_BODY_BYTES));
            checkReasoning(parsed);
            // as /v1/messages counts it: a long text on the worker first, and only one that fits on this thread
            refuseOverlongPrompt(parsed, minimumPromptTokens(parsed, maxTokenBytes), contextSize, true);
            if (promptTextBytes(parsed) > SYNC_TOKENIZE_BYTES)
                refuseOverlongPrompt(parsed, await countedPromptTokens(tokenCounter, parsed, placed.model.tokens.bos != null), contextSize, true);
            sendJson(response, 200, {input_tokens: chatLayerPrompt(parsed)?.promptTokens ?? chatPromptTokens(chatWrapper, placed.model, parsed.messages)});
            served(request, 200, "counted");
        } else if (pathname === "/v1/embeddings") {
            methodFor("POST");
            const body = await readJsonBody(request, MAX_BODY_BYTES);
            // kept among the running requests: close() must not dispose the embedding context under an evaluation
            const work = withTimeLimit(request, response, (signal) => embeddings.answer(body, options.modelId, signal));
            running.add(work);
            const answer = await work.finally(() => running.delete(work));
            sendJson(response, 200, answer.body);
            served(request, 200, "embedded", {promptTokens: answer.promptTokens});
        } else if (pathname === "/v1/completions") {
            methodFor("POST");
            const parsed = parseCompletionRequest(await readJsonBody(request, MAX_BODY_BYTES));
            await generate(parsed, conversationKey(tenant, parsed, request.headers[CONVERSATION_HEADER]), request, response);
        } else
            throw new OpenAiError(404, `There is no endpoint ${request.method} ${asked.slice(0, 100)}; this server has GET /health, GET /v1/models, GET /v1/models/{id}, POST /v1/chat/completions, POST /v1/completions, POST /v1/responses, POST /v1/embeddings, POST /v1/messages and POST /v1/messages/count_tokens (and ${Object.keys(ENDPOINT_ALIASES).join(", ")} as their llama-server aliases).`,
                "invalid_request_error", "not_found");
    };

    /** Runs `work` with a signal that aborts when the client leaves or the time limit passes (then a 504 or a 499). */
    const withTimeLimit = async <T>(request: http.IncomingMessage, response: http.ServerResponse, work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
        const controller = new AbortController();
        const onClose = () => {
            if (!response.writableFinished)
                controller.abort(new Stopped("client-gone"));
        };
        response.on("close", onClose);
        const timer = setTimeout(() => controller.abort(new Stopped("time-limit")), options.requestTimeoutMs);
        try {
            return await work(controller.signal);
        } catch (error) {
            if (controller.signal.aborted && controller.signal.reason instanceof Stopped)
                throw controller.signal.reason.why === "client-gone" ? new OpenAiError(499, "The client disconnected.", "invalid_request_error", "client-gone")
                    : new OpenAiError(504, `The request ran past this server's time limit of ${Math.round(options.requestTimeoutMs / 1000)} s and was stopped.`, "server_error", "timeout");
            throw error;
        } finally {
            clearTimeout(timer);
            response.off("close", onClose);
        }
    };

    /**
     * A chat request templated by llama.cpp's chat layer (toolCallPrompt.ts): one with tools or tool turns, or to a model
     * whose template thinks (so its thinking is separated and its switch honoured, as llama-server does); `null` for one
     * node-llama-cpp's chat wrapper templates, once what it asks of thinking is checked to be honourable there.
     */
    const viaChatLayer = (parsed: GenerationRequest & {kind: "chat"}) => parsed.tools != null || (reasoning.thinks && parsed.messages.at(-1)?.role !== "assistant");
    const chatLayerPrompt = (parsed: GenerationRequest & {kind: "chat"}): ToolCallPrompt | null => viaChatLayer(parsed)
        ? toolCallPrompt(parsed.messages, parsed.tools, placed.model, placed.engine.bindings, nativeReasoning(parsed.reasoning, reasoning, parsed.constraint),
            parsed.stream) : null;
    /** What a chat request asks of thinking, checked against the template before anything is tokenized: a 400 naming the field it cannot honour. */
    const checkReasoning = (parsed: GenerationRequest & {kind: "chat"}): void => {
        if (viaChatLayer(parsed)) {
            nativeReasoning(parsed.reasoning, reasoning, parsed.constraint);
            return;
        }
        if (reasoning.thinks)
            refuseReasoningWithoutChatLayer(parsed.reasoning, "an assistant message to continue is templated by node-llama-cpp's chat wrapper, which has no thinking switch.");
        else
            nativeReasoning(parsed.reasoning, reasoning);
        const echoed = parsed.messages.findIndex((message) => message.role === "assistant" && message.reasoning != null);
        if (echoed >= 0)
            throw OpenAiError.badRequest(`messages[${echoed}].reasoning_content reaches the chat template only through llama.cpp's chat layer (a model whose ` +
                "template thinks, or a request with tools): node-llama-cpp's chat wrapper, which templates this request, takes no thinking; send the message without it.",
            `messages[${echoed}].reasoning_content`);
    };

    /** Requests holding or waiting for a sequence, so {@link OpenAiServer.close} can wait until each has left it. */
    const running = new Set<Promise<unknown>>();
    /** One generation through the scheduler, answered in OpenAI's chat/completions shapes or in `format`'s. */
    const generate = async (sent: GenerationRequest, conversation: string | null, request: http.IncomingMessage, response: http.ServerResponse,
        format?: ReplyFormat): Promise<void> => {
        const parsed: GenerationRequest = sent.seed == null && options.defaultSeed != null ? {...sent, seed: options.defaultSeed} : sent;
        const clock = new TokenClock();
        if (parsed.kind === "chat")
            checkReasoning(parsed);
        refuseOverlongPrompt(parsed, minimumPromptTokens(parsed, maxTokenBytes), contextSize, true);
        // a long text is counted on a worker first: only one that fits is tokenized on this thread (TokenCounter.ts)
        if (promptTextBytes(parsed) > SYNC_TOKENIZE_BYTES)
            refuseOverlongPrompt(parsed, await countedPromptTokens(tokenCounter, parsed, placed.model.tokens.bos != null), contextSize, true);
        // tools (or tool turns), or a reasoning model: templated, constrained and parsed by llama.cpp's chat layer instead of node-llama-cpp's wrapper
        const toolPrompt = parsed.kind === "chat" ? chatLayerPrompt(parsed) : null;
        const budget = parsed.kind === "chat" ? parsed.reasoning.budget ?? null : null;
        const promptTokens = toolPrompt != null ? toolPrompt.promptTokens
            : parsed.kind === "chat" ? chatPromptTokens(chatWrapper, placed.model, parsed.messages)
                : placed.model.tokenize(parsed.prompt, true).length + (placed.model.tokens.bos != null ? 1 : 0);
        refuseOverlongPrompt(parsed, promptTokens, contextSize, false);
        const maxTokens = parsed.maxTokens ?? contextSize - promptTokens;
        const constraints = constraintsOf(parsed, placed.model, placed.engine.bindings);
        const sampler = toolPrompt?.grammar != null ? {...constraints, grammar: toolPrompt.grammar} : constraints;
        const stream = {id: `${format?.idPrefix ?? (parsed.kind === "chat" ? "chatcmpl" : "cmpl")}-${randomBytes(12).toString("hex")}`, created: Math.floor(Date.now() / 1000),
            model: options.modelId, kind: parsed.kind};

        const controller = new AbortController();
        const onClose = () => {
            if (!response.writableFinished)
                controller.abort(new Stopped("client-gone"));
        };
        response.on("close", onClose);
        const timer = setTimeout(() => controller.abort(new Stopped("time-limit")), options.requestTimeoutMs);
        let sse: SseWriter | null = null;
        // logprobs of streamed tokens whose text has not been sent yet, and where the next one starts (completions count from the prompt's start)
        const promptLength = parsed.kind === "completion" ? parsed.prompt.length : 0;
        let streamed: ChunkLogprobs | null = parsed.logprobs != null ? {tokens: [], offset: promptLength} : null;
        const takeStreamed = (): ChunkLogprobs | null => {
            if (streamed == null)
                return null;
            const taken = streamed;
            streamed = {tokens: [], offset: taken.tokens.reduce((at, token) => at + token.text.length, taken.offset)};
            return taken;
        };
        // a reply with tools is parsed again after each piece, and only what is new goes out (ToolCallStream.ts)
        const replyStream = toolPrompt != null ? new ToolCallStream(toolPrompt.parse, format?.newToolCallId ?? newToolCallId) : null;
        // generated tokens up to the last piece of text before the answer began: the thinking's (usage's reasoning_tokens)
        let thinkingTokens = 0;
        const send = (writer: SseWriter, delta: ReplyDelta) => {
            if (format != null && delta.type === "reasoning")
                format.reasoning(writer, delta.text);
            else if (format != null && delta.type === "content")
                format.text(writer, delta.text);
            else if (format != null && delta.type === "tool_call")
                format.toolCall(writer, delta);
            else
                writer.send(chunkBody(stream, delta.type === "content" ? {text: delta.text, logprobs: takeStreamed()}
                    : delta.type === "reasoning" ? {reasoning: delta.text, logprobs: takeStreamed()} : {toolCall: delta}));
        };
        try {
            const job = {promptTokens, signal: controller.signal, affinity: kv.affinity(conversation)};
            const run = scheduler.run(job, async (slot, waitedMs) => {
                if (parsed.stream) {
                    sse = new SseWriter(response);
                    if (format != null)
                        format.open(sse, {...stream, promptTokens});
                    else
                        sse.send(chunkBody(stream, parsed.kind === "chat" ? {role: true} : {text: ""}));
                }
                const restored = await kv.prepare(slot, conversation);
                if (restored.evicted != null)
                    log(`kv ${restored.evicted.conversation} left sequence ${slot.index} (${restored.evicted.path}` +
                        `${restored.evicted.swapOutMs != null ? `, saved in ${restored.evicted.swapOutMs.toFixed(1)} ms` : ""})`);
                try {
                    const generation = await slot.generate({...parsed, maxTokens}, {
                        signal: controller.signal, clock, sampler,
                        ...(toolPrompt != null && {templated: {tokens: toolPrompt.tokens, stops: toolPrompt.stops}}),
                        onText: (text, logprobs) => {
                            if (streamed != null)
                                streamed = {tokens: [...streamed.tokens, ...logprobs], offset: streamed.offset};
                            const deltas = text !== "" ? replyStream?.push(text) ?? [{type: "content" as const, text}] : [];
                            if (replyStream != null && !replyStream.answering)
                                thinkingTokens = clock.tokens;
                            if (sse != null)
                                for (const delta of deltas)
                                    send(sse, delta);
                            // the thinking's budget: every token before the answer begins is thinking
                            if (budget != null && replyStream != null && !replyStream.answering && clock.tokens >= budget.tokens)
                                controller.abort(new Stopped("thinking-budget"));
                        }
                    });
                    return {generation, slot, waitedMs, restored};
                } finally {
                    kv.finished(slot, conversation);
                }
            });
            running.add(run);
            const {generation: ended, slot, waitedMs, restored} = await run.finally(() => running.delete(run));
            const budgetSpent = controller.signal.reason instanceof Stopped && controller.signal.reason.why === "thinking-budget";
            if (ended.finishReason === "abort" && !budgetSpent)
                throw controller.signal.reason;
            // only a spent thinking budget is still aborted here: the reply was cut by a length
            const generation = {...ended, finishReason: ended.finishReason === "abort" ? "length" as const : ended.finishReason};
            // a reply cut by the length is parsed as llama.cpp parses an unfinished one (is_partial), streamed or not, so both
            // carry the calls it made; streamed, what was handed on stands, while unstreamed a last call cut inside its
            // arguments is no call (ToolCallStream.ts, withoutUnfinishedCall)
            const cut = generation.finishReason === "length";
            const ending = replyStream?.finish(generation.text, cut) ?? null;
            const writing = sse as SseWriter | null;
            for (const delta of writing != null ? ending?.deltas ?? [] : [])
                send(writing!, delta);
            const reply = ending == null ? null : writing == null && cut ? withoutUnfinishedCall(ending.reply) : ending.reply;
            const finished: Finished = {
                ...stream, text: reply?.content ?? generation.text, ...(reply != null && {toolCalls: reply.toolCalls}),
                reasoning: reply?.reasoning ?? "",
                reasoningTokens: reply == null || reply.reasoning === "" ? 0 : replyStream!.answering ? thinkingTokens : clock.tokens,
                finishReason: generation.finishReason, stopSequence: generation.stopTrigger, promptTokens, timing: clock.timing(promptTokens),
                queueMs: waitedMs, promptTokensEvaluated: generation.promptTokensEvaluated, sequence: slot.index,
                conversation, kv: restored, logprobs: generation.logprobs, promptLength
            };
            const writer = sse as SseWriter | null;
            if (writer != null && format != null)
                format.finish(writer, finished);
            else if (writer != null) {
                const rest = takeStreamed();
                writer.send(chunkBody(stream, {finishReason: chatFinishReason(finished), timings: timingsOf(finished), logprobs: rest != null && rest.tokens.length > 0 ? rest : null}));
                if (parsed.includeUsage)
                    writer.send(usageChunkBody(finished));
                writer.done();
            } else
                sendJson(response, 200, format != null ? format.body(finished) : completionBody(finished));
            const timings = timingsOf(finished);
            served(request, 200, finished.finishReason, {
                promptTokens, generatedTokens: finished.timing.generatedTokens, queueMs: waitedMs, ttftMs: finished.timing.ttftMs,
                tpotMs: finished.timing.tpotMs, sequence: slot.index, kv: restored.path
            });
            log(`${parsed.kind} 200 seq ${slot.index} kv ${timings.kv.path} queue ${timings.queue_ms} ms, TTFT ${timings.ttft_ms} ms, TPOT ${timings.tpot_ms ?? "—"} ms, ` +
                `${promptTokens}+${finished.timing.generatedTokens} tokens (${finished.finishReason})`);
        } catch (error) {
            if (error instanceof Stopped && error.why === "client-gone") {
                log(`${parsed.kind}: the client disconnected; its generation stopped`);
                served(request, 499, "client-gone");
                return;
            }
            const answer = error instanceof Stopped
                ? new OpenAiError(504, `The request ran past this server's time limit of ${Math.round(options.requestTimeoutMs / 1000)} s and was stopped.`,
                    "server_error", "timeout")
                : error instanceof QueueFullError
                    ? new OpenAiError(429, error.message, "rate_limit_error", "queue_full", null, {"Retry-After": String(error.retryAfterSeconds)})
                    : error;
            const writer = sse as SseWriter | null;
            if (writer != null && answer instanceof OpenAiError) {
                if (format != null)
                    format.fail(writer, answer);
                else
                    writer.fail(answer.toBody());
                served(request, answer.status, answer.code ?? answer.type);
            } else
                throw answer;
        } finally {
            clearTimeout(timer);
            response.off("close", onClose);
        }
    };

    const server = http.createServer((request, response) => {
        response.setHeader("X-Content-Type-Options", "nosniff");
        cors.decorate(request, response);
        route(request, response).catch((error: unknown) => {
            // Anthropic's clients read errors in Anthropic's shape
            const anthropic = (request.url ?? "").startsWith("/v1/messages");
            const status = answerError(response, error, anthropic ? anthropicErrorBody : undefined);
            served(request, status, error instanceof OpenAiError ? error.code ?? error.type : "internal");
        });
    });
    server.on("clientError", (_error, socket) => {
        if (socket.writable)
            socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        else
            socket.destroy();
    });
    options.onStartup?.("binding-port", null);
    await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(options.port ?? 0, host, () => {
            server.off("error", reject);
            resolve();
        });
    });
    port = (server.address() as AddressInfo).port;
    const shownHost = host.includes(":") ? `[${host}]` : host;
    return {
        url: `http://${shownHost}:${port}/v1`,
        port,
        scheduler,
        chatWrapper,
        reasoning,
        contextSize,
        kv,
        embeddings,
        setApiKeys: (apiKeys) => {
            const refusedNow = refuseOpenHost(host, apiKeys);
            if (refusedNow != null)
                throw new Error(refusedNow);
            keys = new ApiKeyList(apiKeys);
        },
        close: async () => {
            const closed = new Promise<void>((resolve) => server.close(() => resolve()));
            server.closeAllConnections();
            await closed;
            // each closed connection stopped its generation; one still evaluating its batch must finish before the
            // sequences it uses are disposed (disposing under it ends the engine with SIGSEGV)
            await Promise.allSettled([...running]);
            await tokenCounter.close();
            await embeddings.close();
            for (const slot of slots)
                slot.dispose();
            await kv.close();
        }
    };
}

/** The host name of a `Host` header for this port (`127.0.0.1:8080` → `127.0.0.1`), or "" when the port differs. */
function hostName(header: string, port: number): string {
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(header);
    if (match == null || Number(match[2]) !== port)
        return "";
    return match[1]!.replace(/^\[|\]$/g, "");
}

/** Whatever a handler threw ends here: OpenAI's error shape, and the server keeps serving. Returns the HTTP status sent. */
function answerError(response: http.ServerResponse, error: unknown, shape: (error: OpenAiError) => unknown = (answer) => answer.toBody()): number {
    const answer = error instanceof OpenAiError ? error
        : new OpenAiError(500, "The server could not answer this request.", "server_error", "internal");
    if (!(error instanceof OpenAiError))
        process.stderr.write(`[serve] request failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    if (response.headersSent) {
        response.destroy();
        return answer.status;
    }
    // a refused upload (413) may still be sending: close the connection rather than read the rest
    sendJson(response, answer.status, shape(answer), {...answer.headers, ...(answer.status === 413 ? {Connection: "close"} : {})});
    return answer.status;
}

function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    response.writeHead(status, {"Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text), ...headers});
    response.end(text);
}
