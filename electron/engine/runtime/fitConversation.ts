import type {ChatTurn} from "../../contract/chat.js";
import {replyReserve, type ContextOverflowPolicy} from "../../contract/contextOverflow.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";

export type FitOptions = {
    policy: ContextOverflowPolicy;
    contextSize: number;
    /** The reply's max tokens; room for it (bounded by {@link replyReserve}) is kept when messages are left out. */
    maxTokens: number;
    /**
     * The whole prompt's length in tokens (template, system prompt, `history` and the newest message) when the model
     * sees `history`. Called a few times (a binary search), each with a suffix-preserving selection of the history.
     */
    promptTokens: (history: readonly ChatTurn[]) => number;
};

export type FittedConversation = {
    /** The history the model sees for this reply. */
    history: ChatTurn[];
    /** How many earlier messages of the conversation were left out of it. */
    leftOutMessages: number;
    /** The prompt's length with that history. */
    promptTokens: number;
};

/**
 * The history a reply's prompt is built from so that it fits the context under `policy`:
 * - `stop`: the whole history, or an error when it leaves no room for a single reply token (the reply is then cut
 *   at the room left, as llama.cpp's server does at a full context without `--context-shift`);
 * - `rollingWindow`: the newest exchanges that fit with room for the reply;
 * - `truncateMiddle`: the first exchange (the first user message and its reply, which usually sets the task) and the
 *   newest exchanges that fit; when the first exchange and the newest message alone leave no room for the reply, the
 *   first exchange goes too and the newest exchanges that fit are kept, as under `rollingWindow`.
 * Exchanges (a user message and the replies after it) are left out whole, oldest first, so the model never sees a reply
 * without its question. The system prompt and the newest message are always kept: when they alone leave no room for
 * a reply token, the error names their size and the context's.
 */
export function fitConversation(history: readonly ChatTurn[], options: FitOptions): FittedConversation {
    const {policy, contextSize, maxTokens, promptTokens} = options;
    const whole = promptTokens(history);
    if (policy === "stop") {
        if (whole + 1 > contextSize)
            throw new TensorwiseError("conversation-too-long", `The conversation (${whole} tokens) does not fit in the context (${contextSize} tokens): ` +
                'start a new chat, let the chat leave out earlier messages ("When the context is full" in its settings), or load the model with a larger context.');
        return {history: [...history], leftOutMessages: 0, promptTokens: whole};
    }
    const reserve = replyReserve(maxTokens, contextSize);
    if (whole + reserve <= contextSize)
        return {history: [...history], leftOutMessages: 0, promptTokens: whole};

    const exchanges = toExchanges(history);
    const oldestFirst = [...exchanges.keys()];
    const fits = (length: number): boolean => length + reserve <= contextSize;
    let search = leaveOut(exchanges, oldestFirst.slice(policy === "truncateMiddle" ? 1 : 0), promptTokens);
    // truncateMiddle: when the first exchange with the newest message alone leaves no room, it goes too, and the newest
    // exchanges that then fit are kept as a rolling window would
    if (policy === "truncateMiddle" && !fits(search.lengthAfter(search.order.length)))
        search = leaveOut(exchanges, oldestFirst, promptTokens);
    let low = 0;
    let high = search.order.length;
    if (fits(search.lengthAfter(high))) {
        // the fewest exchanges to leave out (a prompt only gets shorter as more are left out): binary search
        while (low < high) {
            const middle = Math.floor((low + high) / 2);
            if (fits(search.lengthAfter(middle)))
                high = middle;
            else
                low = middle + 1;
        }
    }
    // with every earlier message left out, the reply gets whatever room is left, however small
    const count = high;
    const length = search.lengthAfter(count);
    if (length + 1 > contextSize)
        throw new TensorwiseError("conversation-too-long", `The newest message with the system prompt and the chat template takes ${length} tokens ` +
            `and the context holds ${contextSize}: shorten the message or the system prompt, or load the model with a larger context.`);
    const kept = search.kept(count);
    return {history: kept, leftOutMessages: history.length - kept.length, promptTokens: length};
}

/** The prompt after leaving out the first `count` exchanges of `order`, each length computed once. */
function leaveOut(exchanges: readonly ChatTurn[][], order: readonly number[], promptTokens: FitOptions["promptTokens"]) {
    const kept = (count: number): ChatTurn[] => {
        const dropped = new Set(order.slice(0, count));
        return exchanges.filter((_, index) => !dropped.has(index)).flat();
    };
    const lengths = new Map<number, number>();
    const lengthAfter = (count: number): number => {
        let length = lengths.get(count);
        if (length == null) {
            length = promptTokens(kept(count));
            lengths.set(count, length);
        }
        return length;
    };
    return {order, kept, lengthAfter};
}

/** `history` as exchanges: each user message with the replies after it (replies before any user message form one). */
function toExchanges(history: readonly ChatTurn[]): ChatTurn[][] {
    const exchanges: ChatTurn[][] = [];
    for (const turn of history) {
        if (turn.role === "user" || exchanges.length === 0)
            exchanges.push([turn]);
        else
            exchanges.at(-1)!.push(turn);
    }
    return exchanges;
}

/** Thrown by {@link fitConversationAsync}'s length lookup for a history not measured yet. */
class LengthNeeded {
    constructor(readonly history: readonly ChatTurn[]) {}
}

/**
 * {@link fitConversation} with lengths that take a round trip (a prompt templated on the prompt worker): the same
 * search, replayed with the lengths measured so far until it needs none it lacks. The search is deterministic, so
 * each replay gets one step further; it measures the same few histories the synchronous search would.
 */
export async function fitConversationAsync(history: readonly ChatTurn[],
    options: Omit<FitOptions, "promptTokens"> & {promptTokens: (history: readonly ChatTurn[]) => Promise<number>}): Promise<FittedConversation> {
    const lengths = new Map<string, number>();
    const keyOf = (turns: readonly ChatTurn[]): string => turns.map((turn) => history.indexOf(turn)).join(",");
    for (;;) {
        try {
            return fitConversation(history, {...options, promptTokens: (turns) => {
                const length = lengths.get(keyOf(turns));
                if (length == null) throw new LengthNeeded(turns);
                return length;
            }});
        } catch (error) {
            if (!(error instanceof LengthNeeded)) throw error;
            lengths.set(keyOf(error.history), await options.promptTokens(error.history));
        }
    }
}
