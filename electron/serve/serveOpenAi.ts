/**
 * An OpenAI-compatible HTTP server for one loaded model (also answering the Responses API, Anthropic's messages and
 * embeddings): this file only composes it. README.md beside it follows one request through the parts:
 * - http/: the transport (HttpServer.ts: guards, keys, CORS, the route table of routes.ts);
 * - protocols/: one folder per wire dialect, each parsing to one GenerationRequest and answering through a ReplyFormat;
 * - generateReply.ts: one generation, whichever the dialect; generation/: one request on one sequence;
 * - scheduling/: who gets a sequence next; kv/: conversations' KV caches beyond the sequences.
 *
 * It runs in the same process as the engine code (the CLI's `tensorwise serve` loads the model through
 * `EngineService` in its own process, as `tensorwise chat` does). A separate engine process, as the app uses to keep a
 * native crash from taking its window down, protects nothing here: the server has no window, and a crash of either
 * half ends the service anyway; in-process, every token reaches the socket without another IPC hop.
 *
 * Conversations may outnumber the sequences: each request names its conversation (conversationKey.ts, within its
 * key's tenant), prefers the sequence still holding that conversation's KV cache, and otherwise gets it back by swap or
 * recompute, whichever the cost model (KvCostModel.ts, measured at start by calibrateKvCost.ts) predicts cheaper
 * (ConversationKvStore.ts). Nothing of one conversation is visible to another: a sequence changing hands is cleared
 * first, and an answer's timings describe only its own conversation.
 */
import {resolveChatWrapper, type ChatWrapper} from "node-llama-cpp";
import type {ServedRequest, ServerStartupStep} from "../contract/server.js";
import type {PlacedModel} from "../engine/runtime/PlacedModel.js";
import {conversationKey, CONVERSATION_HEADER} from "./common/conversationKey.js";
import type {GenerationRequest} from "./common/GenerationRequest.js";
import {OpenAiError} from "./common/OpenAiError.js";
import {templateReasoning, type TemplateReasoning} from "./generation/chatLayer/chatReasoning.js";
import {ServeSlot} from "./generation/ServeSlot.js";
import {templateCallsTools} from "./generation/chatLayer/templateCallsTools.js";
import {PromptWorker} from "./generation/promptWorker/PromptWorker.js";
import {ReplyGenerator, type ServedReport} from "./generateReply.js";
import {HttpServer, refuseOpenHost, sendJson} from "./http/HttpServer.js";
import {withTimeLimit} from "./http/requestDeadline.js";
import type {RouteCall} from "./http/routes.js";
import {ConversationKvStore, type KvRestoreDecision} from "./kv/ConversationKvStore.js";
import type {KvCostModel} from "./kv/KvCostModel.js";
import {cachedOrMeasuredKvCost} from "./kv/kvCostCache.js";
import type {KvDiskBudget} from "./kv/kvStateFolder.js";
import {anthropicErrorBody, anthropicMessageFormat} from "./protocols/anthropic/anthropicReplies.js";
import {parseAnthropicCountTokensRequest, parseAnthropicMessagesRequest} from "./protocols/anthropic/parseAnthropicRequest.js";
import {ServedEmbeddings} from "./protocols/embeddings/ServedEmbeddings.js";
import {openAiChatFormat} from "./protocols/openai/openAiChatFormat.js";
import {parseChatCompletionRequest, parseCompletionRequest} from "./protocols/openai/parseGenerationRequest.js";
import type {ReplyFormat} from "./protocols/ReplyFormat.js";
import {parseResponsesRequest} from "./protocols/responses/parseResponsesRequest.js";
import {responsesFormat} from "./protocols/responses/responsesReplies.js";
import type {SchedulingPolicy} from "./scheduling/schedulingPolicies.js";
import {SequenceScheduler} from "./scheduling/SequenceScheduler.js";

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

export async function serveOpenAi(options: OpenAiServerOptions): Promise<OpenAiServer> {
    const host = options.host ?? "127.0.0.1";
    // refused before anything is measured or bound
    const refused = refuseOpenHost(host, options.apiKeys ?? []);
    if (refused != null)
        throw new Error(refused);
    const {placed} = options;
    const chatWrapper = resolveChatWrapper(placed.model);
    const reasoning = templateReasoning(placed.model, placed.engine.bindings);
    const contextSize = placed.context.contextSize;
    // each slot speculates as the model was loaded to (PlacedModel.servedTokenPredictor)
    const slots = Array.from({length: placed.context.totalSequences}, (_unused, index) => {
        const tokenPredictor = placed.servedTokenPredictor();
        return new ServeSlot(index, placed.context.getSequence(tokenPredictor != null ? {tokenPredictor} : {}), chatWrapper);
    });
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
    const embeddings = new ServedEmbeddings(placed, contextSize, log);
    const promptWorker = new PromptWorker(placed.options.modelPath);
    const callsTools = templateCallsTools(placed.model, placed.engine.bindings);
    const created = Math.floor(Date.now() / 1000);
    const served: ServedReport = (request, status, outcome, details = {}) => options.onServed?.({
        at: new Date().toISOString(), path: (request.url ?? "/").split("?")[0]!.slice(0, 100), status, outcome,
        promptTokens: null, generatedTokens: null, queueMs: null, ttftMs: null, tpotMs: null, sequence: null, kv: null, ...details
    });
    /** Requests holding or waiting for a sequence (or the embedding context), so close() can wait until each has left it. */
    const running = new Set<Promise<unknown>>();
    const generator = new ReplyGenerator({
        placed, modelId: options.modelId, defaultSeed: options.defaultSeed, chatWrapper, reasoning, scheduler, kv, promptWorker, callsTools,
        requestTimeoutMs: options.requestTimeoutMs, running, log, served
    });
    const reply = (parsed: GenerationRequest, call: RouteCall, format: ReplyFormat) =>
        generator.generateReply(parsed, conversationKey(call.tenant, parsed, call.request.headers[CONVERSATION_HEADER]), call, format);
    const model = {id: options.modelId, object: "model", created, owned_by: "tensorwise"};

    options.onStartup?.("binding-port", null);
    const transport = await HttpServer.listen({
        host, port: options.port ?? 0, apiKeys: options.apiKeys ?? [], corsOrigins: options.corsOrigins ?? [], maxBodyBytes: MAX_BODY_BYTES,
        // Anthropic's clients read errors in Anthropic's shape
        errorShape: (url) => url.startsWith("/v1/messages") ? anthropicErrorBody : undefined,
        onError: (request, status, outcome) => served(request, status, outcome),
        handlers: {
            health: ({response}) => sendJson(response, 200, {status: "ok"}),
            models: ({response}) => sendJson(response, 200, {object: "list", data: [model]}),
            model: ({response, param}) => sendJson(response, 200, modelNamed(param, model)),
            chatCompletions: async (call) => {
                const parsed = parseChatCompletionRequest(await call.body());
                await reply(parsed, call, openAiChatFormat(parsed));
            },
            completions: async (call) => {
                const parsed = parseCompletionRequest(await call.body());
                await reply(parsed, call, openAiChatFormat(parsed));
            },
            responses: async (call) => {
                const parsed = parseResponsesRequest(await call.body());
                await reply(parsed, call, responsesFormat(parsed, parsed.tools != null || reasoning.thinks));
            },
            messages: async (call) => {
                const parsed = parseAnthropicMessagesRequest(await call.body());
                await reply(parsed, call, anthropicMessageFormat(parsed.tools != null || reasoning.thinks));
            },
            // as /v1/messages counts it: a long text on the worker first, and only one that fits on this thread
            countTokens: async ({request, response, body}) => {
                const parsed = parseAnthropicCountTokensRequest(await body());
                sendJson(response, 200, {input_tokens: (await generator.preparePrompt(parsed)).promptTokens});
                served(request, 200, "counted");
            },
            embeddings: async ({request, response, body}) => {
                const sent = await body();
                // kept among the running requests: close() must not dispose the embedding context under an evaluation
                const work = withTimeLimit(response, options.requestTimeoutMs, (signal) => embeddings.answer(sent, options.modelId, signal));
                running.add(work);
                const answer = await work.finally(() => running.delete(work));
                sendJson(response, 200, answer.body);
                served(request, 200, "embedded", {promptTokens: answer.promptTokens});
            }
        }
    });
    return {
        url: transport.url,
        port: transport.port,
        scheduler,
        chatWrapper,
        reasoning,
        contextSize,
        kv,
        embeddings,
        setApiKeys: (apiKeys) => transport.setApiKeys(apiKeys),
        close: async () => {
            await transport.close();
            // each closed connection stopped its generation; one still evaluating its batch must finish before the
            // sequences it uses are disposed (disposing under it ends the engine with SIGSEGV)
            await Promise.allSettled([...running]);
            await promptWorker.close();
            await embeddings.close();
            for (const slot of slots)
                slot.dispose();
            await kv.close();
        }
    };
}

/** `/v1/models/{id}`: the one model this server serves, when `param` (percent-encoded) names it. */
function modelNamed<Model extends {id: string}>(param: string, model: Model): Model {
    let id: string;
    try {
        id = decodeURIComponent(param);
    } catch {
        throw new OpenAiError(400, "The model id in the path is not valid percent-encoding.", "invalid_request_error", "invalid_model_id");
    }
    if (id !== model.id)
        throw new OpenAiError(404, `This server serves one model, ${JSON.stringify(model.id)}; there is no model ${JSON.stringify(id.slice(0, 100))}.`,
            "invalid_request_error", "model_not_found", "model");
    return model;
}
