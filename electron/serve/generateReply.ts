/**
 * One generation request, whichever dialect it came in (each parsed to a {@link GenerationRequest} and answered through
 * its {@link ReplyFormat}): what it asks of thinking is checked against the template, a prompt too long for the context
 * is refused before it is tokenized on this thread (promptBound.ts, TokenCounter.ts), the template is applied by
 * node-llama-cpp's chat wrapper or by llama.cpp's chat layer (tools, or a model whose template thinks:
 * toolCallPrompt.ts), the request waits for a sequence and its conversation's KV cache (runOnSequence.ts), the pieces
 * go to the format as they come (parsed by the chat layer first: ToolCallStream.ts), and the finished reply is
 * answered and logged. A client that leaves stops its sequence; the time limit answers 504 (requestDeadline.ts); a full
 * queue answers 429 with `Retry-After`.
 */
import {randomBytes} from "node:crypto";
import type http from "node:http";
import type {ChatWrapper} from "node-llama-cpp";
import type {ServedRequest} from "../contract/server.js";
import {TokenClock} from "../engine/runtime/generationTiming.js";
import type {PlacedModel} from "../engine/runtime/PlacedModel.js";
import type {GenerationRequest} from "./common/GenerationRequest.js";
import {OpenAiError} from "./common/OpenAiError.js";
import {SseWriter} from "./common/SseWriter.js";
import {nativeReasoning, refuseReasoningWithoutChatLayer, type TemplateReasoning} from "./generation/chatLayer/chatReasoning.js";
import {toolCallPrompt, type ToolCallPrompt} from "./generation/chatLayer/toolCallPrompt.js";
import {ToolCallStream, withoutUnfinishedCall, type ReplyDelta} from "./generation/chatLayer/ToolCallStream.js";
import {longestTokenBytes, minimumPromptTokens, promptTextBytes, refuseOverlongPrompt} from "./generation/promptBound.js";
import {runOnSequence} from "./generation/runOnSequence.js";
import {constraintsOf} from "./generation/samplingOptions.js";
import {chatPromptTokens, SamplingDeadEnd, type ServeSlot} from "./generation/ServeSlot.js";
import {countedPromptTokens, SYNC_TOKENIZE_BYTES} from "./generation/promptWorker/countedPromptTokens.js";
import type {PromptWorker} from "./generation/promptWorker/PromptWorker.js";
import {sendJson} from "./http/HttpServer.js";
import {requestDeadline, Stopped, timeLimitError} from "./http/requestDeadline.js";
import type {ConversationKvStore} from "./kv/ConversationKvStore.js";
import type {Finished, ReplyFormat} from "./protocols/ReplyFormat.js";
import {timingsOf} from "./protocols/openai/replyBodies.js";
import {QueueFullError, type SequenceScheduler} from "./scheduling/SequenceScheduler.js";

/** Reports one request's end (ServedRequest's fields: status, outcome, and the timings when it generated). */
export type ServedReport = (request: http.IncomingMessage, status: number, outcome: string, details?: Partial<ServedRequest>) => void;

export type ReplyGeneratorOptions = {
    placed: PlacedModel;
    modelId: string;
    /** The seed of a request that sends none. */
    defaultSeed?: number;
    chatWrapper: ChatWrapper;
    reasoning: TemplateReasoning;
    scheduler: SequenceScheduler<ServeSlot>;
    kv: ConversationKvStore;
    /** Counts long prompts, templates with tools and prepares every grammar off this thread (PromptWorker.ts). */
    promptWorker: PromptWorker;
    /** Whether the model's chat template can call tools (templateCallsTools.ts): tools it cannot call are refused. */
    callsTools: boolean;
    requestTimeoutMs: number;
    /** Requests holding or waiting for a sequence: the server's close waits until each has left it. */
    running: Set<Promise<unknown>>;
    log: (line: string) => void;
    served: ServedReport;
};

/** A request's prompt once checked: llama.cpp's chat layer's templating of it (or `null`) and its length in tokens. */
export type PreparedPrompt = {toolPrompt: ToolCallPrompt | null; promptTokens: number};

export class ReplyGenerator {
    private readonly contextSize: number;
    private readonly maxTokenBytes: number;

    constructor(private readonly options: ReplyGeneratorOptions) {
        this.contextSize = options.placed.context.contextSize;
        this.maxTokenBytes = longestTokenBytes(options.placed.model);
    }

    /**
     * The request's prompt, checked (thinking, then its length) before it is tokenized on this thread: a long text is
     * counted on a worker first (TokenCounter.ts), and only one that can fit is templated here.
     */
    async preparePrompt(parsed: GenerationRequest): Promise<PreparedPrompt> {
        const {placed} = this.options;
        if (parsed.kind === "chat")
            this.checkReasoning(parsed);
        refuseOverlongPrompt(parsed, minimumPromptTokens(parsed, this.maxTokenBytes), this.contextSize, true);
        if (promptTextBytes(parsed) > SYNC_TOKENIZE_BYTES)
            refuseOverlongPrompt(parsed, await countedPromptTokens(this.options.promptWorker, parsed, placed.model.tokens.bos != null), this.contextSize, true);
        if (parsed.kind === "chat")
            this.checkTools(parsed);
        // tools (or tool turns), or a reasoning model: templated, constrained and parsed by llama.cpp's chat layer instead of node-llama-cpp's wrapper
        const toolPrompt = parsed.kind === "chat" ? await this.chatLayerPrompt(parsed) : null;
        const promptTokens = toolPrompt != null ? toolPrompt.promptTokens
            : parsed.kind === "chat" ? chatPromptTokens(this.options.chatWrapper, placed.model, parsed.messages)
                : placed.model.tokenize(parsed.prompt, true).length + (placed.model.tokens.bos != null ? 1 : 0);
        return {toolPrompt, promptTokens};
    }

    /** One generation through the scheduler, answered in `format`'s shapes. */
    async generateReply(sent: GenerationRequest, conversation: string | null, exchange: {request: http.IncomingMessage; response: http.ServerResponse},
        format: ReplyFormat): Promise<void> {
        const {placed, kv, log, served} = this.options;
        const {request, response} = exchange;
        const parsed: GenerationRequest = sent.seed == null && this.options.defaultSeed != null ? {...sent, seed: this.options.defaultSeed} : sent;
        const clock = new TokenClock();
        const {toolPrompt, promptTokens} = await this.preparePrompt(parsed);
        refuseOverlongPrompt(parsed, promptTokens, this.contextSize, false);
        const budget = parsed.kind === "chat" ? parsed.reasoning.budget ?? null : null;
        const maxTokens = parsed.maxTokens ?? this.contextSize - promptTokens;
        const constraints = await constraintsOf(parsed, placed.model, this.options.promptWorker);
        const sampler = toolPrompt?.grammar != null ? {...constraints, grammar: toolPrompt.grammar} : constraints;
        const start = {id: `${format.idPrefix}-${randomBytes(12).toString("hex")}`, created: Math.floor(Date.now() / 1000), model: this.options.modelId};
        const promptLength = parsed.kind === "completion" ? parsed.prompt.length : 0;

        const deadline = requestDeadline(response, this.options.requestTimeoutMs);
        const {controller} = deadline;
        let sse: SseWriter | null = null;
        // a reply with tools is parsed again after each piece, and only what is new goes out (ToolCallStream.ts)
        const replyStream = toolPrompt != null ? new ToolCallStream(toolPrompt.parse, format.newToolCallId) : null;
        // generated tokens up to the last piece of text before the answer began: the thinking's (usage's reasoning_tokens)
        let thinkingTokens = 0;
        const send = (writer: SseWriter, delta: ReplyDelta) => {
            if (delta.type === "reasoning")
                format.reasoning(writer, delta.text);
            else if (delta.type === "content")
                format.text(writer, delta.text);
            else
                format.toolCall(writer, delta);
        };
        try {
            const job = {promptTokens, signal: controller.signal, affinity: kv.affinity(conversation)};
            const run = runOnSequence(this.options.scheduler, kv, job, conversation, async ({slot, restored, waitedMs}) => {
                if (restored.evicted != null)
                    log(`kv ${restored.evicted.conversation} left sequence ${slot.index} (${restored.evicted.path}` +
                        `${restored.evicted.swapOutMs != null ? `, saved in ${restored.evicted.swapOutMs.toFixed(1)} ms` : ""})`);
                const generation = await slot.generate({...parsed, maxTokens}, {
                    signal: controller.signal, clock, sampler,
                    ...(toolPrompt != null && {templated: {tokens: toolPrompt.tokens, stops: toolPrompt.stops}}),
                    onText: (text, logprobs) => {
                        format.tokens?.(logprobs);
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
            }, {
                onSlot: () => {
                    if (parsed.stream) {
                        sse = new SseWriter(response);
                        format.open(sse, {...start, promptTokens});
                    }
                }
            });
            this.options.running.add(run);
            const {generation: ended, slot, waitedMs, restored} = await run.finally(() => this.options.running.delete(run));
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
                ...start, kind: parsed.kind, text: reply?.content ?? generation.text, ...(reply != null && {toolCalls: reply.toolCalls}),
                reasoning: reply?.reasoning ?? "",
                reasoningTokens: reply == null || reply.reasoning === "" ? 0 : replyStream!.answering ? thinkingTokens : clock.tokens,
                finishReason: generation.finishReason, stopSequence: generation.stopTrigger, promptTokens, timing: clock.timing(promptTokens),
                queueMs: waitedMs, promptTokensEvaluated: generation.promptTokensEvaluated, sequence: slot.index,
                conversation, kv: restored, logprobs: generation.logprobs, promptLength
            };
            if (writing != null)
                format.finish(writing, finished);
            else
                sendJson(response, 200, format.body(finished));
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
            const answer = error instanceof Stopped ? timeLimitError(this.options.requestTimeoutMs)
                : error instanceof SamplingDeadEnd ? deadEndError(parsed, toolPrompt, error)
                : error instanceof QueueFullError
                    ? new OpenAiError(429, error.message, "rate_limit_error", "queue_full", null, {"Retry-After": String(error.retryAfterSeconds)})
                    : error;
            const writer = sse as SseWriter | null;
            if (writer != null && answer instanceof OpenAiError) {
                format.fail(writer, answer);
                served(request, answer.status, answer.code ?? answer.type);
            } else
                throw answer;
        } finally {
            deadline.release();
        }
    }

    /**
     * Whether llama.cpp's chat layer templates this chat request (toolCallPrompt.ts): one with tools or tool turns, or
     * to a model whose template thinks (so its thinking is separated and its switch honoured, as llama-server does).
     */
    private viaChatLayer(parsed: GenerationRequest & {kind: "chat"}): boolean {
        return parsed.tools != null || (this.options.reasoning.thinks && parsed.messages.at(-1)?.role !== "assistant");
    }

    /** The chat layer's templating of the request, or `null` for one node-llama-cpp's chat wrapper templates. */
    private async chatLayerPrompt(parsed: GenerationRequest & {kind: "chat"}): Promise<ToolCallPrompt | null> {
        const {placed, reasoning, promptWorker} = this.options;
        if (!this.viaChatLayer(parsed))
            return null;
        return await toolCallPrompt(parsed.messages, parsed.tools, {
            model: placed.model, bindings: placed.engine.bindings, worker: promptWorker,
            refuseOverlong: (promptTokens) => refuseOverlongPrompt(parsed, promptTokens, this.contextSize, false)
        }, nativeReasoning(parsed.reasoning, reasoning, parsed.constraint), parsed.stream);
    }

    /**
     * Tools sent to a model whose chat template cannot call them (templateCallsTools.ts) are refused, unless the client
     * asks for no call (`tool_choice` none): the reply would be free text, answered as if the tools had been offered.
     */
    private checkTools(parsed: GenerationRequest & {kind: "chat"}): void {
        const use = parsed.tools;
        if (this.options.callsTools || use == null || use.tools.length === 0 || use.choice === "none")
            return;
        throw OpenAiError.badRequest("`tools`: this model's chat template cannot call tools — it has no tool-call syntax, so llama.cpp's chat layer builds " +
            "no tool-call grammar or parser for it, and a reply could only be free text. Send the request without tools, or with tool_choice " +
            "\"none\" (Anthropic: {\"type\": \"none\"}) to have none called, or serve a model whose template calls tools.", "tools", "tools_unsupported");
    }

    /** What a chat request asks of thinking, checked against the template before anything is tokenized: a 400 naming the field it cannot honour. */
    private checkReasoning(parsed: GenerationRequest & {kind: "chat"}): void {
        const {reasoning} = this.options;
        if (this.viaChatLayer(parsed)) {
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
    }
}

/** The answer to a reply its grammar left with no way forward: a 400 naming the field that set the grammar. */
function deadEndError(parsed: GenerationRequest, toolPrompt: ToolCallPrompt | null, error: SamplingDeadEnd): OpenAiError {
    const field = toolPrompt?.grammar != null ? "tools" : parsed.constraint == null ? "logit_bias"
        : parsed.constraint.kind === "grammar" ? "grammar" : parsed.constraint.source;
    const banned = parsed.logitBias.size > 0 ? " (with the tokens `logit_bias` bans taken out)" : "";
    return OpenAiError.badRequest(`\`${field}\`: the reply was ended: ${error.message}${banned}. Nothing in the model's vocabulary can continue ` +
        "what the grammar requires at that point.", field, "grammar_dead_end");
}
