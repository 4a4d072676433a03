import type {ChatHistoryItem} from "node-llama-cpp";
import type {PlacedModel} from "./PlacedModel.js";
import {TokenClock} from "./generationTiming.js";
import type {GenerationTiming} from "../../contract/timing.js";

/** One conversation turn as the app stores it. */
export type ChatTurn = {role: "user" | "assistant"; text: string};

export type ChatReplyOptions = {
    /** The conversation so far (without the new message). Defaults to a fresh conversation. */
    history?: readonly ChatTurn[];
    message: string;
    systemPrompt?: string;
    /** Defaults to 512. */
    maxTokens?: number;
    /** Defaults to 0.7; 0 is greedy. */
    temperature?: number;
    seed?: number;
    signal?: AbortSignal;
    /** Streamed reply text, with ms since the request started (engine clock). */
    onText?: (text: string, elapsedMs: number, tokens: number) => void;
};

export type ChatReply = {
    text: string;
    timing: GenerationTiming;
    /** `true` when the signal stopped the reply; `text` then holds what was generated so far. */
    aborted: boolean;
};

/** The model's chat template applied to `history` + `message`, streamed and timed. */
export async function streamChatReply(placed: PlacedModel, options: ChatReplyOptions): Promise<ChatReply> {
    const {history = [], message, systemPrompt, maxTokens = 512, temperature = 0.7, seed, signal, onText} = options;
    const session = placed.chatSession();
    session.setChatHistory(toChatHistory(history, systemPrompt));

    const meter = placed.sequence.tokenMeter;
    const inputBefore = meter.usedInputTokens;
    const clock = new TokenClock();
    let text = "";
    const reply = await session.prompt(message, {
        maxTokens,
        temperature,
        seed,
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
    return {
        text: reply.length >= text.length ? reply : text,
        timing: clock.timing(meter.usedInputTokens - inputBefore),
        aborted: signal?.aborted === true
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


