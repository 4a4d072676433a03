/**
 * The app's own chat reply while the OpenAI-compatible server is on: it goes through the server's scheduler with
 * priority (never refused for a queue full of API requests, and given the next free sequence ahead of them), runs on
 * whichever sequence it is given, and gets its conversation's KV cache back by swap or recompute
 * (ConversationKvStore.ts) when another conversation took that sequence. Its conversations are the app tenant's
 * (conversationKey.ts): no API client can name them, and a sequence is cleared before it changes hands, so no prefix is
 * shared with API clients either way. The TTFT it reports is measured from the request, so it includes the queue and
 * the restore.
 */
import {TokenClock} from "../engine/runtime/generationTiming.js";
import {fitConversation} from "../engine/runtime/fitConversation.js";
import {DEFAULT_CONTEXT_OVERFLOW} from "../contract/contextOverflow.js";
import type {ChatReply, ChatReplyOptions, ChatTurn} from "../engine/runtime/streamChatReply.js";
import {DEFAULT_REASONING, type ChatMessage} from "./common/GenerationRequest.js";
import {APP_TENANT, namedConversationKey} from "./common/conversationKey.js";
import {runOnSequence} from "./generation/runOnSequence.js";
import {chatPromptTokens} from "./generation/ServeSlot.js";
import type {OpenAiServer} from "./serveOpenAi.js";

/** The app's replies default to this many tokens, as its single-sequence path does (streamChatReply.ts). */
const DEFAULT_MAX_TOKENS = 512;
/** The app's default temperature, as streamChatReply.ts. */
const DEFAULT_TEMPERATURE = 0.7;

/** The key an app conversation's KV cache is kept under (the app's tenant: never an API client's). */
export function appConversationKey(conversationId: string): string {
    return namedConversationKey(APP_TENANT, conversationId);
}

/** One app reply through `server`'s scheduler; `conversationId` names whose KV cache to keep. */
export async function scheduledChatReply(server: OpenAiServer, model: Parameters<typeof chatPromptTokens>[1],
    options: ChatReplyOptions & {conversationId?: string}): Promise<ChatReply> {
    const {
        history = [], message, systemPrompt, maxTokens = DEFAULT_MAX_TOKENS, temperature = DEFAULT_TEMPERATURE, signal, onText,
        contextOverflow = DEFAULT_CONTEXT_OVERFLOW
    } = options;
    const clock = new TokenClock();
    const toMessages = (turns: readonly ChatTurn[]): ChatMessage[] => [
        ...(systemPrompt != null && systemPrompt !== "" ? [{role: "system" as const, text: systemPrompt}] : []),
        ...turns.map((turn) => ({role: turn.role, text: turn.text})),
        {role: "user", text: message}
    ];
    // each of the server's sequences holds contextSize tokens: the conversation is fitted to one
    const fitted = fitConversation(history, {
        policy: contextOverflow, contextSize: server.contextSize, maxTokens,
        promptTokens: (turns) => chatPromptTokens(server.chatWrapper, model, toMessages(turns))
    });
    const messages = toMessages(fitted.history);
    const promptTokens = fitted.promptTokens;
    const leftOutMessages = fitted.leftOutMessages;
    const key = options.conversationId != null ? appConversationKey(options.conversationId) : null;
    const controller = new AbortController();
    const abort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", abort, {once: true});
    const stopped = (restore: ChatReply["restore"]): ChatReply => ({
        text: "", timing: clock.timing(0), aborted: true, stopReason: "stopped", prompt: {tokens: promptTokens, reused: 0},
        context: {usedTokens: 0, size: server.contextSize}, leftOutMessages, ...(restore != null && {restore})
    });
    try {
        if (signal?.aborted === true)
            return stopped(undefined);
        const job = {promptTokens, signal: controller.signal, affinity: server.kv.affinity(key), priority: true};
        return await runOnSequence(server.scheduler, server.kv, job, key, async ({slot, restored: prepared}) => {
            const restore = {path: prepared.path, ms: prepared.restoreMs};
            try {
                const generation = await slot.generate({
                    kind: "chat", messages, tools: null, reasoning: DEFAULT_REASONING, model: null, stream: true, includeUsage: false,
                    maxTokens: Math.min(maxTokens, server.contextSize - promptTokens), temperature,
                    topK: options.topK, topP: options.topP, minP: options.minP, repeatPenalty: options.repeatPenalty, seed: options.seed,
                    stop: options.stopStrings ?? [], frequencyPenalty: undefined, presencePenalty: undefined, repeatLastN: undefined,
                    logitBias: new Map(), constraint: null, logprobs: null
                }, {
                    signal: controller.signal, clock,
                    onText: (text) => {
                        if (text !== "")
                            onText?.(text, clock.tick(0), clock.tokens);
                    }
                });
                const aborted = controller.signal.aborted;
                return {
                    text: generation.text,
                    timing: clock.timing(generation.promptTokensEvaluated),
                    aborted,
                    stopReason: aborted || generation.stopReason === "abort" ? "stopped"
                        : generation.stopReason === "maxTokens" ? "max-tokens"
                            : generation.stopReason === "customStopTrigger" ? "stop-string" : "done",
                    prompt: {tokens: promptTokens, reused: Math.max(0, promptTokens - generation.promptTokensEvaluated)},
                    context: {usedTokens: slot.sequence.nextTokenIndex, size: server.contextSize},
                    leftOutMessages,
                    restore
                } satisfies ChatReply;
            } catch (error) {
                if (controller.signal.aborted)
                    return stopped(restore);
                throw error;
            }
        });
    } catch (error) {
        // stopped while it waited for a sequence
        if (controller.signal.aborted)
            return stopped(undefined);
        throw error;
    } finally {
        signal?.removeEventListener("abort", abort);
    }
}
