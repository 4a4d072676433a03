import type {ChatHistoryItem} from "node-llama-cpp";
import type {PlacedModel} from "./PlacedModel.js";
import {evaluatePromptInChunks} from "./evaluatePromptInChunks.js";
import type {ChatTurn, PromptProgress, ReplyStopReason, SamplingSettings} from "../../contract/chat.js";
import {TokenClock} from "./generationTiming.js";
import type {GenerationTiming} from "../../contract/timing.js";
import type {ChatMessage} from "../../contract/ipc.js";

export type {ChatTurn, PromptProgress, ReplyStopReason, SamplingSettings};

export type ChatReplyOptions = SamplingSettings & {
    /** The conversation so far (without the new message). Defaults to a fresh conversation. */
    history?: readonly ChatTurn[];
    message: string;
    systemPrompt?: string;
    /** Defaults to 512. */
    maxTokens?: number;
    signal?: AbortSignal;
    /** Streamed reply text, with ms since the request started (engine clock). */
    onText?: (text: string, elapsedMs: number, tokens: number) => void;
    /** Prompt processing progress, after every chunk (see {@link evaluatePromptInChunks}). */
    onPromptProgress?: (progress: PromptProgress) => void;
};

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
    /** How the conversation's KV cache got into its sequence, when the reply ran on the server's scheduler. */
    restore?: ChatMessage["restore"];
};

/** The model's chat template applied to `history` + `message`, streamed and timed. */
export async function streamChatReply(placed: PlacedModel, options: ChatReplyOptions): Promise<ChatReply> {
    const {
        history = [], message, systemPrompt, maxTokens = 512, temperature = 0.7, topK, topP, minP, repeatPenalty, seed,
        stopStrings, signal, onText, onPromptProgress
    } = options;
    const session = placed.chatSession();
    const chatHistory = toChatHistory(history, systemPrompt);
    session.setChatHistory(chatHistory);

    const sequence = placed.sequence;
    const meter = sequence.tokenMeter;
    const inputBefore = meter.usedInputTokens;
    const clock = new TokenClock();
    // the same context text node-llama-cpp's LlamaChat renders (chatWrapper.generateContextState), evaluated here in
    // abortable chunks; the chat then finds it in the KV cache and only decodes the last token
    const promptTokens = session.chatWrapper.generateContextState({
        chatHistory: [...chatHistory, {type: "user", text: message}, {type: "model", response: []}]
    }).contextText.tokenize(placed.model.tokenizer);
    const context = () => ({usedTokens: sequence.nextTokenIndex, size: placed.context.contextSize});
    const stoppedEarly = (): ChatReply => ({
        text: "", timing: clock.timing(meter.usedInputTokens - inputBefore), aborted: true, stopReason: "stopped",
        prompt: {tokens: promptTokens.length, reused: 0}, context: context()
    });
    let reused = 0;
    try {
        reused = (await evaluatePromptInChunks(sequence, promptTokens, {signal, onProgress: onPromptProgress, started: clock.started}))?.reused ?? 0;
    } catch (error) {
        if (signal?.aborted === true)
            return stoppedEarly();
        throw error;
    }

    let text = "";
    let result: Awaited<ReturnType<typeof session.promptWithMeta>>;
    try {
        result = await session.promptWithMeta(message, {
            maxTokens,
            temperature,
            topK,
            topP,
            minP,
            seed,
            ...(repeatPenalty != null ? {repeatPenalty: {penalty: repeatPenalty}} : {}),
            ...(stopStrings != null && stopStrings.length > 0 ? {customStopTriggers: stopStrings} : {}),
            signal,
            stopOnAbortSignal: true,
            onToken(tokens) {
                clock.tick(tokens.length);
            },
            onTextChunk(chunk) {
                text += chunk;
                onText?.(chunk, clock.tick(0), clock.tokens);
            }
        });
    } catch (error) {
        // an abort before the first token ends the reply as stopped, with nothing generated
        if (signal?.aborted === true && text === "")
            return stoppedEarly();
        throw error;
    }
    const aborted = signal?.aborted === true;
    return {
        text: result.responseText.length >= text.length ? result.responseText : text,
        timing: clock.timing(meter.usedInputTokens - inputBefore),
        aborted,
        stopReason: aborted || result.stopReason === "abort" ? "stopped"
            : result.stopReason === "maxTokens" ? "max-tokens"
                : result.stopReason === "customStopTrigger" ? "stop-string"
                    : "done",
        prompt: {tokens: promptTokens.length, reused},
        context: context()
    };
}

function toChatHistory(history: readonly ChatTurn[], systemPrompt: string | undefined): ChatHistoryItem[] {
    const items: ChatHistoryItem[] = [];
    if (systemPrompt != null && systemPrompt !== "")
        items.push({type: "system", text: systemPrompt});
    for (const turn of history) {
        if (turn.role === "user")
            items.push({type: "user", text: turn.text});
        else
            items.push({type: "model", response: [turn.text]});
    }
    return items;
}
