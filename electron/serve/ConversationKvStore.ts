import {mkdtemp, rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {LlamaContextSequence, Token} from "node-llama-cpp";
import {predictKvRestore, type KvCostModel, type KvRestorePath, type KvRestorePrediction} from "./KvCostModel.js";

/** Conversations remembered (their tokens, and a state file when swapped); the least recently used beyond go. */
export const MAX_CONVERSATIONS = 1024;

/** A sequence the store may fill: one per slot of the scheduler. */
export type KvSlot = {readonly index: number; readonly sequence: LlamaContextSequence};

/** One finished swap-vs-recompute decision: made when the conversation left its sequence, measured when it came back. */
export type KvRestoreDecision = {
    conversation: string;
    /** Tokens of the conversation's KV cache when it left its sequence. */
    tokens: number;
    predicted: KvRestorePrediction;
    /** The chosen path, always; the other one too when the store measures both (benchmark mode). */
    measured: {swapOutMs: number | null; swapInMs: number | null; swapMs: number | null; recomputeMs: number | null; stateBytes: number | null};
    costSource: string;
};

/** What getting a request's conversation into its sequence took (`resident`: it was still there; `new`: nothing known). */
export type KvPreparation = {
    path: "resident" | "new" | KvRestorePath;
    /** The finished decision when the conversation was swapped in or recomputed. */
    decision: KvRestoreDecision | null;
    /** Time spent restoring this conversation, ms (both paths in benchmark mode). */
    restoreMs: number;
    /** The conversation this sequence held before, when it had to leave: how, and what saving it took. */
    evicted: {conversation: string; path: KvRestorePath; swapOutMs: number | null} | null;
};

type Conversation = {
    key: string;
    /** The tokens its KV cache held when its last request ended. */
    tokens: Token[];
    /** The slot whose sequence holds them, or `null` once another conversation took it. */
    slot: KvSlot | null;
    /** Decided when it left its sequence. */
    pending: {prediction: KvRestorePrediction; file: string | null; swapOutMs: number | null; stateBytes: number | null} | null;
    lastUsed: number;
};

/**
 * Keeps every conversation's KV cache reachable when conversations outnumber the sequences. A conversation's cache
 * stays in the sequence that generated its last reply until another conversation needs that sequence; then the cost
 * model decides: swap (save the sequence state to a file now, load it when the conversation returns; node-llama-cpp's
 * `saveStateToFile` / `loadStateFromFile`) or recompute (drop it, and evaluate its tokens again when it returns),
 * whichever it predicts cheaper. Either way the sequence ends up holding exactly the conversation's tokens, so the
 * reply continues as if the conversation had never left.
 *
 * State files live in a private folder under the OS temp dir (or `dir`), each deleted once loaded or forgotten, the
 * folder at {@link close}.
 */
export class ConversationKvStore {
    private readonly conversations = new Map<string, Conversation>();
    /** Which conversation each slot's sequence holds (by slot index). */
    private readonly resident = new Map<number, string>();
    private readonly decisionLog: KvRestoreDecision[] = [];
    private fileCounter = 0;

    private constructor(private readonly folder: string, private readonly options: ConversationKvStoreOptions) {}

    static async create(options: ConversationKvStoreOptions): Promise<ConversationKvStore> {
        const folder = await mkdtemp(path.join(options.dir ?? os.tmpdir(), "tensorwise-kv-"));
        return new ConversationKvStore(folder, options);
    }

    get costModel(): KvCostModel {
        return this.options.costModel;
    }

    /** Every finished decision so far, oldest first. */
    get decisions(): readonly KvRestoreDecision[] {
        return this.decisionLog;
    }

    /** Where `key` would rather run: the slot holding its cache (2), an empty one (1), then the least recently used. */
    affinity(key: string | null): (slot: KvSlot) => number {
        return (slot) => {
            const held = this.resident.get(slot.index);
            if (held == null)
                return 1;
            if (key != null && held === key)
                return 2;
            return -(this.conversations.get(held)?.lastUsed ?? 0) / Number.MAX_SAFE_INTEGER;
        };
    }

    /**
     * Before a request of conversation `key` (null: none named) runs on `slot`: moves out the conversation the slot
     * holds, if another, and brings `key`'s tokens back in when they left a sequence earlier.
     */
    async prepare(slot: KvSlot, key: string | null): Promise<KvPreparation> {
        const held = this.resident.get(slot.index);
        if (key != null && held === key)
            return {path: "resident", decision: null, restoreMs: 0, evicted: null};
        const evicted = held != null ? await this.evict(slot, held) : null;
        this.resident.delete(slot.index);
        const conversation = key != null ? this.conversations.get(key) : undefined;
        if (conversation?.pending == null || conversation.slot != null)
            return {path: "new", decision: null, restoreMs: 0, evicted};
        const {restoreMs, decision} = await this.restore(slot, conversation);
        return {path: decision.predicted.path, decision, restoreMs, evicted};
    }

    /** After a request of conversation `key` ran on `slot`: the slot's sequence now holds its tokens. */
    finished(slot: KvSlot, key: string | null): void {
        if (key == null) {
            this.resident.delete(slot.index);
            return;
        }
        const previous = this.conversations.get(key);
        if (previous?.pending?.file != null)
            void rm(previous.pending.file, {force: true});
        this.conversations.delete(key);
        this.conversations.set(key, {key, tokens: [...slot.sequence.contextTokens], slot, pending: null, lastUsed: performance.now()});
        this.resident.set(slot.index, key);
        this.forgetBeyondLimit();
    }

    /** Deletes every state file. */
    async close(): Promise<void> {
        await rm(this.folder, {recursive: true, force: true});
    }

    private async evict(slot: KvSlot, key: string): Promise<KvPreparation["evicted"]> {
        const conversation = this.conversations.get(key);
        if (conversation == null || conversation.slot !== slot)
            return null;
        conversation.slot = null;
        const prediction = predictKvRestore(this.options.costModel, conversation.tokens.length);
        let file: string | null = null;
        let swapOutMs: number | null = null;
        let stateBytes: number | null = null;
        if (prediction.path === "swap" || this.options.measureBoth) {
            file = path.join(this.folder, `${++this.fileCounter}.state`);
            const started = performance.now();
            stateBytes = (await slot.sequence.saveStateToFile(file)).fileSize;
            swapOutMs = performance.now() - started;
        }
        conversation.pending = {prediction, file, swapOutMs, stateBytes};
        return {conversation: key, path: prediction.path, swapOutMs};
    }

    private async restore(slot: KvSlot, conversation: Conversation): Promise<{restoreMs: number; decision: KvRestoreDecision}> {
        const pending = conversation.pending!;
        const {sequence} = slot;
        const swapIn = async (): Promise<number> => {
            const started = performance.now();
            await sequence.loadStateFromFile(pending.file!, {acceptRisk: true});
            return performance.now() - started;
        };
        const recompute = async (): Promise<number> => {
            const started = performance.now();
            await sequence.clearHistory();
            await sequence.evaluateWithoutGeneratingNewTokens(conversation.tokens);
            return performance.now() - started;
        };
        const started = performance.now();
        let swapInMs: number | null = null;
        let recomputeMs: number | null = null;
        // the path not chosen first (benchmark mode), so the chosen one leaves the sequence as it will be used
        if (pending.prediction.path === "swap") {
            if (this.options.measureBoth)
                recomputeMs = await recompute();
            swapInMs = await swapIn();
        } else {
            if (this.options.measureBoth && pending.file != null)
                swapInMs = await swapIn();
            recomputeMs = await recompute();
        }
        const restoreMs = performance.now() - started;
        if (pending.file != null)
            await rm(pending.file, {force: true});
        const decision: KvRestoreDecision = {
            conversation: conversation.key,
            tokens: conversation.tokens.length,
            predicted: pending.prediction,
            measured: {
                swapOutMs: pending.swapOutMs, swapInMs,
                swapMs: pending.swapOutMs != null && swapInMs != null ? pending.swapOutMs + swapInMs : null,
                recomputeMs, stateBytes: pending.stateBytes
            },
            costSource: this.options.costModel.source
        };
        conversation.pending = null;
        this.decisionLog.push(decision);
        this.options.onDecision?.(decision);
        return {restoreMs, decision};
    }

    private forgetBeyondLimit(): void {
        const limit = this.options.maxConversations ?? MAX_CONVERSATIONS;
        // Map order is insertion order and `finished` re-inserts: the first entries are the least recently used
        for (const conversation of this.conversations.values()) {
            if (this.conversations.size <= limit)
                break;
            if (conversation.slot != null)
                continue;
            if (conversation.pending?.file != null)
                void rm(conversation.pending.file, {force: true});
            this.conversations.delete(conversation.key);
        }
    }
}

export type ConversationKvStoreOptions = {
    costModel: KvCostModel;
    /** Measure swap and recompute at every restore, whichever was chosen (benchmark mode). Defaults to `false`. */
    measureBoth?: boolean;
    /** Where the private state folder is made. Defaults to the OS temp dir. */
    dir?: string;
    /** Defaults to {@link MAX_CONVERSATIONS}. */
    maxConversations?: number;
    /** Called with every finished decision. */
    onDecision?: (decision: KvRestoreDecision) => void;
};
