import {LlamaChatSession, LlamaCompletion, type ChatHistoryItem, type ChatWrapper, type LlamaContextSequence, type LlamaModel} from "node-llama-cpp";
import type {TokenClock} from "../engine/runtime/generationTiming.js";
import type {ChatMessage, GenerationRequest} from "./parseGenerationRequest.js";

/** How one generation ended, in OpenAI's words (`abort`: the client left or the time limit passed). */
export type FinishReason = "stop" | "length" | "abort";

export type SlotGeneration = {
    text: string;
    finishReason: FinishReason;
    /** node-llama-cpp's own reason (`eogToken`, `customStopTrigger`, `maxTokens`, `abort`, …). */
    stopReason: string;
    /** The stop sequence that ended it (`stopReason` `customStopTrigger`), else `null`. */
    stopTrigger: string | null;
    /** Prompt tokens this request evaluated (a prefix already in the sequence's KV cache is not evaluated again). */
    promptTokensEvaluated: number;
};

/**
 * One sequence of the served context with its chat session and completion generator. A slot runs one request at a
 * time (the scheduler sees to that); its KV cache keeps the last request's tokens, so a follow-up that repeats the same
 * prefix skips evaluating it.
 */
export class ServeSlot {
    private chatSession: LlamaChatSession | null = null;
    private completion: LlamaCompletion | null = null;

    constructor(readonly index: number, readonly sequence: LlamaContextSequence, private readonly chatWrapper: ChatWrapper) {}

    /**
     * Generates the reply to `request`, streaming text through `onText` and ticking `clock` per token. Sampling is
     * node-llama-cpp's (temperature 0 is greedy), the same as the app's chat (`electron/engine/runtime/streamChatReply.ts`).
     */
    async generate(request: GenerationRequest & {maxTokens: number; minP?: number; repeatPenalty?: number},
        options: {signal: AbortSignal; clock: TokenClock; onText: (text: string) => void}): Promise<SlotGeneration> {
        const {signal, clock, onText} = options;
        const inputBefore = this.sequence.tokenMeter.usedInputTokens;
        const sampling = {
            maxTokens: request.maxTokens,
            temperature: request.temperature,
            topP: request.topP,
            topK: request.topK,
            seed: request.seed,
            minP: request.minP,
            ...(request.repeatPenalty != null ? {repeatPenalty: {penalty: request.repeatPenalty}} : {}),
            customStopTriggers: request.stop.length > 0 ? request.stop : undefined,
            signal,
            stopOnAbortSignal: true,
            onToken: (tokens: readonly unknown[]) => {
                clock.tick(tokens.length);
            },
            onTextChunk: onText
        };
        let text: string;
        let stopReason: string;
        let trigger: readonly unknown[] | undefined;
        if (request.kind === "chat") {
            const session = this.session();
            const {history, last} = splitMessages(request.messages);
            session.setChatHistory(history);
            const result = await session.promptWithMeta(last, sampling);
            text = result.response.filter((item): item is string => typeof item === "string").join("");
            stopReason = result.stopReason;
            trigger = result.customStopTrigger;
        } else {
            this.completion ??= new LlamaCompletion({contextSequence: this.sequence});
            const result = await this.completion.generateCompletionWithMeta(request.prompt, sampling);
            text = result.response;
            stopReason = result.metadata.stopReason;
            trigger = result.metadata.stopReason === "customStopTrigger" ? result.metadata.customStopTrigger : undefined;
        }
        return {
            text,
            finishReason: signal.aborted ? "abort" : stopReason === "maxTokens" ? "length" : "stop",
            stopReason,
            stopTrigger: trigger == null ? null : trigger.filter((part): part is string => typeof part === "string").join(""),
            promptTokensEvaluated: this.sequence.tokenMeter.usedInputTokens - inputBefore
        };
    }

    dispose(): void {
        this.chatSession?.dispose();
        this.completion?.dispose();
        this.sequence.dispose();
    }

    private session(): LlamaChatSession {
        this.chatSession ??= new LlamaChatSession({contextSequence: this.sequence, chatWrapper: this.chatWrapper, autoDisposeSequence: false});
        return this.chatSession;
    }
}

/** The messages as node-llama-cpp's chat history, plus the final user message (the prompt). */
export function splitMessages(messages: readonly ChatMessage[]): {history: ChatHistoryItem[]; last: string} {
    const history: ChatHistoryItem[] = messages.slice(0, -1).map((message): ChatHistoryItem =>
        message.role === "system" ? {type: "system", text: message.text}
            : message.role === "user" ? {type: "user", text: message.text}
                : {type: "model", response: [message.text]});
    return {history, last: messages.at(-1)?.text ?? ""};
}

/** The prompt's length in tokens with the chat template applied, as the chat session will evaluate it. */
export function chatPromptTokens(chatWrapper: ChatWrapper, model: LlamaModel, messages: readonly ChatMessage[]): number {
    const {history, last} = splitMessages(messages);
    const {contextText} = chatWrapper.generateContextState({chatHistory: [...history, {type: "user", text: last}, {type: "model", response: []}]});
    return contextText.tokenize(model.tokenizer).length;
}
