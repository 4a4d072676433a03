/**
 * The app's own chat reply when its conversation has tools (or tool turns): templated, constrained and parsed by
 * llama.cpp's chat layer exactly as the API server does it for a client's tools (toolCallPrompt.ts: the template
 * applied with the tools, the tool-call grammar, `tool_choice: "required"` opened with the template's call marker;
 * ToolCallStream.ts: the reply parsed again after each piece, only the content streamed). It runs on the loaded model's
 * own sequence (after any native generation: PlacedModel.exclusive) or, with the server on, through its scheduler like
 * scheduledChatReply.ts. The tool definitions count in the context-full policy (fitConversation.ts) and are measured
 * for the reply's footer: the prompt's tokens with them less the same prompt without. A round makes one call at most
 * (`parallel_tool_calls: false`): each call is decided by the user before the model writes the next, with its result.
 */
import type {ChatReply, ChatTurn} from "../contract/chat.js";
import type {EngineToolUse} from "../contract/engineProtocol.js";
import {DEFAULT_CONTEXT_OVERFLOW} from "../contract/contextOverflow.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";
import {fitConversationAsync} from "../engine/runtime/fitConversation.js";
import {TokenClock} from "../engine/runtime/generationTiming.js";
import type {PlacedModel} from "../engine/runtime/PlacedModel.js";
import type {ChatReplyOptions} from "../engine/runtime/streamChatReply.js";
import {DEFAULT_REASONING, type ChatMessage, type GenerationRequest, type ToolUse} from "./common/GenerationRequest.js";
import {OpenAiError} from "./common/OpenAiError.js";
import {nativeReasoning, templateReasoning} from "./generation/chatLayer/chatReasoning.js";
import {newToolCallId, toolCallPrompt, type ToolCallPrompt} from "./generation/chatLayer/toolCallPrompt.js";
import type {PromptWorker} from "./generation/promptWorker/PromptWorker.js";
import {ToolCallStream, withoutUnfinishedCall} from "./generation/chatLayer/ToolCallStream.js";
import {runOnSequence} from "./generation/runOnSequence.js";
import {ServeSlot, type SlotGeneration} from "./generation/ServeSlot.js";
import {appConversationKey} from "./scheduledChatReply.js";
import type {OpenAiServer} from "./serveOpenAi.js";

/** As the app's other replies (streamChatReply.ts, scheduledChatReply.ts). */
const DEFAULT_MAX_TOKENS = 512;
const DEFAULT_TEMPERATURE = 0.7;

export type AppToolReplyOptions = ChatReplyOptions & {
    tools: EngineToolUse | null;
    /** This reply's earlier rounds, after the message. */
    replyRounds: readonly ChatTurn[];
    conversationId?: string;
    /** Templates each prompt off this thread (toolCallPrompt.ts): the tools' schemas come from MCP servers, untrusted. */
    worker: PromptWorker;
};

/** The loaded model's own slot on its one sequence, made once per loaded context. */
const ownSlots = new WeakMap<PlacedModel, ServeSlot>();

function ownSlot(placed: PlacedModel): ServeSlot {
    let slot = ownSlots.get(placed);
    if (slot == null) {
        slot = new ServeSlot(0, placed.sequence, placed.chatWrapper);
        ownSlots.set(placed, slot);
    }
    return slot;
}

/** `turns` as the chat layer's messages: an assistant turn's calls, then one tool message per call with its result. */
function chatMessages(turns: readonly ChatTurn[]): ChatMessage[] {
    return turns.flatMap((turn): ChatMessage[] => {
        if (turn.role === "user")
            return [{role: "user", text: turn.text}];
        if (turn.toolCalls == null || turn.toolCalls.length === 0)
            return [{role: "assistant", text: turn.text}];
        return [
            {role: "assistant", text: turn.text, toolCalls: turn.toolCalls.map(({id, name, arguments: args}) => ({id, name, arguments: args}))},
            ...turn.toolCalls.map((call): ChatMessage => ({role: "tool", text: call.result, toolCallId: call.id, name: call.name}))
        ];
    });
}

/** Whether a reply must go through the chat layer: tools, or tool turns in what the model reads. */
export function needsChatLayer(options: {tools?: EngineToolUse | null; history?: readonly ChatTurn[]; replyRounds?: readonly ChatTurn[]}): boolean {
    const hasCalls = (turns: readonly ChatTurn[] | undefined) => turns?.some((turn) => (turn.toolCalls?.length ?? 0) > 0) === true;
    return options.tools != null || hasCalls(options.history) || hasCalls(options.replyRounds);
}

/** One reply with tools on `placed` (or through `server`'s scheduler while the server is on). */
export async function appToolReply(placed: PlacedModel, server: OpenAiServer | null, options: AppToolReplyOptions): Promise<ChatReply> {
    const {
        history = [], message, systemPrompt, maxTokens = DEFAULT_MAX_TOKENS, temperature = DEFAULT_TEMPERATURE, signal, onText,
        contextOverflow = DEFAULT_CONTEXT_OVERFLOW, tools, replyRounds
    } = options;
    const {model, engine: {bindings}} = placed;
    const reasoning = nativeReasoning(DEFAULT_REASONING, server?.reasoning ?? templateReasoning(model, bindings));
    const toolUse: ToolUse = tools != null && tools.tools.length > 0
        ? {tools: tools.tools.map(({name, description, parameters}) => ({name, description, parameters})), choice: tools.choice, parallel: false}
        : {tools: [], choice: "none", parallel: false};
    const toMessages = (turns: readonly ChatTurn[]): ChatMessage[] => [
        ...(systemPrompt != null && systemPrompt !== "" ? [{role: "system" as const, text: systemPrompt}] : []),
        ...chatMessages(turns), {role: "user", text: message}, ...chatMessages(replyRounds)
    ];
    // the context-full policy (fitConversation.ts) judges the length, not the worker's own bound
    const promptContext = {model, bindings, worker: options.worker, refuseOverlong: () => {}};
    const templated = async (turns: readonly ChatTurn[], use: ToolUse): Promise<ToolCallPrompt> => {
        try {
            return await toolCallPrompt(toMessages(turns), use, promptContext, reasoning, true);
        } catch (error) {
            throw asEngineError(error);
        }
    };
    // the prompt of each history the policy tries, made once (the first try is the whole history: usually the only one)
    const prompts = new Map<string, ToolCallPrompt>();
    const promptOf = async (turns: readonly ChatTurn[]): Promise<ToolCallPrompt> => {
        const key = turns.map((turn) => history.indexOf(turn)).join(",");
        let prompt = prompts.get(key);
        if (prompt == null) {
            prompt = await templated(turns, toolUse);
            prompts.set(key, prompt);
        }
        return prompt;
    };
    const contextSize = server?.contextSize ?? placed.context.contextSize;
    const fitted = await fitConversationAsync(history, {policy: contextOverflow, contextSize, maxTokens, promptTokens: async (turns) => (await promptOf(turns)).promptTokens});
    const prompt = await promptOf(fitted.history);
    if (toolUse.tools.length > 0 && toolUse.choice !== "none" && prompt.grammar == null)
        throw new TensorwiseError("tools-unsupported", `This model's chat template has no tool-call syntax (llama.cpp's chat layer reads it as ` +
            `"${prompt.formatName}" and builds no tool-call parser for it), so its replies cannot call tools: turn the tools off in this chat's settings, ` +
            "or load a model whose template calls tools.");
    const toolTokens = toolUse.tools.length > 0 ? prompt.promptTokens - (await templated(fitted.history, {tools: [], choice: "none", parallel: false})).promptTokens : undefined;

    const clock = new TokenClock();
    const controller = new AbortController();
    const abort = () => controller.abort(signal?.reason);
    if (signal?.aborted === true)
        abort();
    signal?.addEventListener("abort", abort, {once: true});
    const stream = new ToolCallStream(prompt.parse, newToolCallId);
    // the thinking of a reasoning model is shown as the app's other replies show it: between <think> and </think>
    let thinking: "none" | "open" | "closed" = "none";
    const request: GenerationRequest & {maxTokens: number} = {
        kind: "chat", messages: [], tools: null, reasoning: DEFAULT_REASONING, model: null, stream: true, includeUsage: false,
        maxTokens: Math.max(1, Math.min(maxTokens, contextSize - prompt.promptTokens)), temperature,
        topK: options.topK, topP: options.topP, minP: options.minP, repeatPenalty: options.repeatPenalty, seed: options.seed,
        stop: options.stopStrings ?? [], frequencyPenalty: undefined, presencePenalty: undefined, repeatLastN: undefined,
        logitBias: new Map(), constraint: null, logprobs: null
    };
    const generate = (slot: ServeSlot): Promise<SlotGeneration> => slot.generate(request, {
        signal: controller.signal, clock,
        ...(prompt.grammar != null && {sampler: {grammar: prompt.grammar}}),
        templated: {tokens: prompt.tokens, stops: prompt.stops},
        onText: (text) => {
            if (text === "")
                return;
            for (const delta of stream.push(text)) {
                if (delta.type === "tool_call")
                    continue;
                let shown = delta.text;
                if (delta.type === "reasoning" && thinking === "none") {
                    shown = `<think>${shown}`;
                    thinking = "open";
                } else if (delta.type === "content" && thinking === "open") {
                    shown = `</think>\n${shown}`;
                    thinking = "closed";
                }
                onText?.(shown, clock.tick(0), clock.tokens);
            }
        }
    });
    const key = options.conversationId != null ? appConversationKey(options.conversationId) : null;
    try {
        controller.signal.throwIfAborted();
        let generation: SlotGeneration;
        let context: ChatReply["context"];
        let restore: ChatReply["restore"];
        if (server != null) {
            const job = {promptTokens: prompt.promptTokens, signal: controller.signal, affinity: server.kv.affinity(key), priority: true};
            const ran = await runOnSequence(server.scheduler, server.kv, job, key, async ({slot, restored}) => ({
                generation: await generate(slot), used: slot.sequence.nextTokenIndex, restored
            }));
            generation = ran.generation;
            context = {usedTokens: ran.used, size: contextSize};
            restore = {path: ran.restored.path, ms: ran.restored.restoreMs};
        } else {
            const ran = await placed.exclusive(async () => {
                const slot = ownSlot(placed);
                return {generation: await generate(slot), used: slot.sequence.nextTokenIndex};
            });
            generation = ran.generation;
            context = {usedTokens: ran.used, size: contextSize};
        }
        const aborted = controller.signal.aborted;
        const cut = generation.finishReason === "length";
        let parsed;
        try {
            const ending = stream.finish(generation.text, cut || aborted);
            parsed = cut || aborted ? withoutUnfinishedCall(ending.reply) : ending.reply;
        } catch (error) {
            throw asEngineError(error);
        }
        const text = parsed.reasoning !== "" ? `<think>${parsed.reasoning}</think>\n${parsed.content}` : parsed.content;
        return {
            text,
            timing: clock.timing(generation.promptTokensEvaluated),
            aborted,
            stopReason: aborted ? "stopped" : cut ? "max-tokens" : generation.stopReason === "customStopTrigger" ? "stop-string" : "done",
            prompt: {tokens: prompt.promptTokens, reused: Math.max(0, prompt.promptTokens - generation.promptTokensEvaluated)},
            context,
            leftOutMessages: fitted.leftOutMessages,
            ...(restore != null && {restore}),
            // a stopped reply's calls never run: it ended before the user could see them whole
            ...(!aborted && parsed.toolCalls.length > 0 && {toolCalls: parsed.toolCalls}),
            ...(toolTokens != null && {toolTokens})
        } satisfies ChatReply;
    } catch (error) {
        if (controller.signal.aborted)
            return {
                text: "", timing: clock.timing(0), aborted: true, stopReason: "stopped", prompt: {tokens: prompt.promptTokens, reused: 0},
                context: {usedTokens: 0, size: contextSize}, leftOutMessages: fitted.leftOutMessages, ...(toolTokens != null && {toolTokens})
            };
        throw asEngineError(error);
    } finally {
        signal?.removeEventListener("abort", abort);
    }
}

/** The chat layer's refusals (OpenAiError, for API clients) as the app's errors, with llama.cpp's words. */
function asEngineError(error: unknown): unknown {
    if (!(error instanceof OpenAiError))
        return error;
    return new TensorwiseError(error.status === 400 ? "bad-request" : "engine-error", error.message.replace(/`tools`:/, "The tools:").replace(/`messages`:/, "The conversation:"));
}
