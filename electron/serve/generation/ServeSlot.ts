import {
    LlamaChatSession, LlamaCompletion, type ChatHistoryItem, type ChatWrapper, type LlamaContextSequence, type LlamaModel, type Token
} from "node-llama-cpp";
import type {TokenClock} from "../../engine/runtime/generationTiming.js";
import type {ChatMessage, GenerationRequest} from "../common/GenerationRequest.js";
import {tokenPiece, type TokenLogprob} from "../../engine/runtime/tokenPiece.js";
import {penaltiesOf, type SamplerOptions} from "./samplingOptions.js";
import {DETOKENIZER_CONTEXT_TOKENS, TokenProbabilityRecorder} from "./TokenProbabilityRecorder.js";

/** How AddonContext's sampleToken (node-llama-cpp) says llama.cpp's sampler refused the token it drew. */
const SAMPLER_ACCEPT_FAILED = "Failed to accept token in sampler:";

/**
 * A reply stopped because its grammar allowed no token at some point (llama_grammar_accept_impl: "Unexpected empty
 * grammar stack"): a grammar that became unsatisfiable mid-reply, e.g. one needing a character no token of this
 * vocabulary can write, or whose every allowed token `logit_bias` bans. Only this reply ends.
 */
export class SamplingDeadEnd extends Error {
    constructor(readonly generatedTokens: number, readonly detail: string) {
        super(`after ${generatedTokens} generated token(s) the grammar allowed no token of this model's vocabulary (llama.cpp: ${detail.slice(0, 200)})`);
    }
}

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
    /** Per token of `text`, when the request asked for `logprobs`; `null` otherwise. */
    logprobs: TokenLogprob[] | null;
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
     * With `request.logprobs`, `onText` also gets the log-probabilities of the tokens that made its text (possibly
     * none, e.g. a partial UTF-8 character waiting for its next byte; possibly some before any text).
     */
    async generate(request: GenerationRequest & {maxTokens: number}, options: {
        signal: AbortSignal; clock: TokenClock; onText: (text: string, logprobs: readonly TokenLogprob[]) => void;
        /** Token bias and grammar (samplingOptions.ts); the penalties come from `request`. */
        sampler?: Omit<SamplerOptions, "repeatPenalty">;
        /**
         * A chat prompt already templated and tokenized (toolCallPrompt.ts: llama.cpp's chat layer, for tools), generated
         * from as a completion, with the template's extra stop strings; `request.messages` are then not read.
         */
        templated?: {tokens: readonly Token[]; stops: readonly string[]};
    }): Promise<SlotGeneration> {
        const {signal, clock, onText} = options;
        const inputBefore = this.sequence.tokenMeter.usedInputTokens;
        const {templated} = options;
        const {history, last, prefix} = splitMessages(request.kind === "chat" && templated == null ? request.messages : []);
        // a continued assistant message: node-llama-cpp reports its prefix as the first text and tokens; the reply is
        // only what follows it. LlamaChat detokenizes the first token after the prefix without the prefix as context, so a
        // SentencePiece vocabulary loses that token's leading space ("fin" + "▁5" → "fin5"): it is rendered again here.
        let skipPrefix = prefix !== "";
        let prefixTokens: readonly Token[] | null = null;
        let firstTokens: readonly Token[] | null = null;
        let lead = "";
        const repeatPenalty = penaltiesOf(request, request.maxTokens);
        const recorder = request.logprobs != null ? TokenProbabilityRecorder.attach(this.sequence, request.logprobs.top) : null;
        const logprobs: TokenLogprob[] = [];
        let unsent = 0;
        const model = this.sequence.model;
        const record = (tokens: readonly Token[]) => {
            if (recorder == null)
                return;
            for (const drawn of recorder.take(tokens)) {
                // the piece as the reply's text renders it: after the reply's tokens before it; the first token as LlamaChat and
                // LlamaCompletion render it (alone: a SentencePiece leading space is dropped), or after a continued prefix
                const before = prefix !== "" ? recorder.promptTail : [];
                const previous = [...before, ...logprobs.map((entry) => entry.token as Token)].slice(-DETOKENIZER_CONTEXT_TOKENS);
                const piece = (token: Token) => tokenPiece(model, token, previous);
                logprobs.push({
                    ...piece(drawn.token), token: drawn.token, logprob: Math.log(drawn.probability),
                    top: drawn.top.map((candidate) => ({...piece(candidate.token), logprob: Math.log(candidate.probability)}))
                });
            }
        };
        const send = (text: string) => {
            onText(text, logprobs.slice(unsent));
            unsent = logprobs.length;
        };
        const sampling = {
            maxTokens: request.maxTokens,
            temperature: request.temperature,
            topP: request.topP,
            topK: request.topK,
            seed: request.seed,
            minP: request.minP,
            ...(repeatPenalty != null ? {repeatPenalty} : {}),
            ...options.sampler,
            customStopTriggers: request.stop.length + (templated?.stops.length ?? 0) > 0 ? [...request.stop, ...(templated?.stops ?? [])] : undefined,
            signal,
            stopOnAbortSignal: true,
            onToken: (tokens: readonly Token[]) => {
                if (skipPrefix) {
                    prefixTokens = tokens;
                    return;
                }
                firstTokens ??= tokens;
                record(tokens);
                clock.tick(tokens.length);
            },
            onTextChunk: (text: string) => {
                if (skipPrefix) {
                    skipPrefix = false;
                    return;
                }
                if (prefixTokens != null && firstTokens != null && lead === "" && text !== "") {
                    const rendered = this.sequence.model.detokenize(firstTokens, false, prefixTokens);
                    if (rendered !== text && rendered.endsWith(text))
                        lead = rendered.slice(0, rendered.length - text.length);
                    prefixTokens = null;
                    send(lead + text);
                    return;
                }
                send(text);
            }
        };
        let text: string;
        let stopReason: string;
        let trigger: readonly unknown[] | undefined;
        try {
            if (request.kind === "chat" && templated == null) {
                const session = this.session();
                session.setChatHistory(history);
                const result = await session.promptWithMeta(last, {...sampling, ...(prefix !== "" && {responsePrefix: prefix})});
                text = lead + result.response.filter((item): item is string => typeof item === "string").join("").slice(prefix.length);
                stopReason = result.stopReason;
                trigger = result.customStopTrigger;
            } else {
                this.completion ??= new LlamaCompletion({contextSequence: this.sequence});
                const result = await this.completion.generateCompletionWithMeta(templated != null ? [...templated.tokens] : request.kind === "completion" ? request.prompt : "",
                    sampling);
                text = result.response;
                stopReason = result.metadata.stopReason;
                trigger = result.metadata.stopReason === "customStopTrigger" ? result.metadata.customStopTrigger : undefined;
            }
        } catch (error) {
            // node-llama-cpp rejects the sequence's decode with llama.cpp's error (AddonContext's sampleToken, through
            // tensorwise's JS patch: native/patches/node-llama-cpp-js-sampling-errors.patch)
            if (error instanceof Error && error.message.startsWith(SAMPLER_ACCEPT_FAILED))
                throw new SamplingDeadEnd(clock.tokens, error.message.slice(SAMPLER_ACCEPT_FAILED.length).trim());
            throw error;
        } finally {
            recorder?.dispose();
        }
        return {
            text,
            finishReason: signal.aborted ? "abort" : stopReason === "maxTokens" ? "length" : "stop",
            stopReason,
            stopTrigger: trigger == null ? null : trigger.filter((part): part is string => typeof part === "string").join(""),
            // node-llama-cpp's TokenMeter counts a decoded token that yields logits as output: the last prompt token,
            // whose logits start the reply, is always evaluated (also when the whole prompt is cached) but not counted
            promptTokensEvaluated: this.sequence.tokenMeter.usedInputTokens - inputBefore + 1,
            logprobs: recorder != null ? logprobs : null
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

/**
 * The messages as node-llama-cpp's chat history, the user message to answer (the prompt) and, when the last message
 * is the assistant's, its text to continue (`prefix`; "" otherwise): the prompt then ends inside that assistant turn,
 * with no end-of-turn token, as llama-server continues a prefilled assistant message.
 */
export function splitMessages(messages: readonly ChatMessage[]): {history: ChatHistoryItem[]; last: string; prefix: string} {
    const continued = messages.at(-1)?.role === "assistant";
    const prefix = continued ? messages.at(-1)!.text : "";
    const asked = continued ? messages.slice(0, -1) : messages;
    const history: ChatHistoryItem[] = asked.slice(0, -1).map((message): ChatHistoryItem => {
        // a request with tool turns is templated by llama.cpp's chat layer (toolCallPrompt.ts), never by node-llama-cpp's wrapper
        if (message.role === "tool" || (message.role === "assistant" && message.toolCalls != null))
            throw new Error("tool turns go through toolCallPrompt.ts");
        return message.role === "system" ? {type: "system", text: message.text}
            : message.role === "user" ? {type: "user", text: message.text}
                : {type: "model", response: [message.text]};
    });
    return {history, last: asked.at(-1)?.text ?? "", prefix};
}

/** The prompt's length in tokens with the chat template applied, as the chat session will evaluate it. */
export function chatPromptTokens(chatWrapper: ChatWrapper, model: LlamaModel, messages: readonly ChatMessage[]): number {
    const {history, last, prefix} = splitMessages(messages);
    const {contextText} = chatWrapper.generateContextState({
        chatHistory: [...history, {type: "user", text: last}, {type: "model", response: prefix !== "" ? [prefix] : []}]
    });
    return contextText.tokenize(model.tokenizer).length;
}
