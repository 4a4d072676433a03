import {rm} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type {LlamaContextSequence, Token} from "node-llama-cpp";
import {predictKvRestore, type KvCostModel, type KvRestorePath, type KvRestorePrediction} from "./KvCostModel.js";
import {DEFAULT_KV_DISK_BUDGET, kvDiskBudgetBytes, makeKvStateFolder, type KvDiskBudget} from "./kvStateFolder.js";

/** Conversations remembered (their tokens, and a state file when swapped); the least recently used beyond go. */
export const MAX_CONVERSATIONS = 1024;

/** A sequence the store may fill: one per slot of the scheduler. */
export type KvSlot = {readonly index: number; readonly sequence: LlamaContextSequence};

/**
 * Why a conversation the cost model would swap was recomputed instead: its state file did not fit the disk budget (or
 * was dropped for newer ones), or writing or reading it failed (a full disk: ENOSPC, a quota, an I/O error).
 */
export type KvFallback = "disk-budget" | "disk-error";

/** One finished swap-vs-recompute decision: made when the conversation left its sequence, measured when it came back. */
export type KvRestoreDecision = {
    conversation: string;
    /** Tokens of the conversation's KV cache when it left its sequence. */
    tokens: number;
    predicted: KvRestorePrediction;
    /** The path taken: the predicted one unless {@link fallback} says why not. */
    path: KvRestorePath;
    fallback: KvFallback | null;
    /** The path taken, always; the other one too when the store measures both (benchmark mode). */
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
    /**
     * The conversation this sequence held before, when it had to leave: how, and what saving it took. Another
     * conversation's: for the server's log only, never for a client.
     */
    evicted: {conversation: string; path: KvRestorePath; swapOutMs: number | null} | null;
};

type Pending = {
    prediction: KvRestorePrediction;
    /** The way back: the predicted one, or recompute once the state file is gone (see `fallback`). */
    path: KvRestorePath;
    fallback: KvFallback | null;
    file: string | null;
    /** Bytes of `file` counted against the disk budget. */
    fileBytes: number;
    swapOutMs: number | null;
    stateBytes: number | null;
};

type Conversation = {
    key: string;
    /** The tokens its KV cache held when its last request ended. */
    tokens: Token[];
    /** The slot whose sequence holds them, or `null` once another conversation took it. */
    slot: KvSlot | null;
    /** Decided when it left its sequence. */
    pending: Pending | null;
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
 * Isolation: a sequence handed to another conversation is cleared before the new one runs (or filled with that
 * conversation's own saved state), so a request's prefix cache only ever holds its own conversation's tokens: how many
 * prompt tokens it evaluates says nothing about other conversations. Conversation ids are per tenant
 * (conversationKey.ts), so this also separates clients with different API keys and the app's own chat.
 *
 * Disk: state files live in a private folder under the OS temp dir (or `dir`), named for this process
 * (kvStateFolder.ts: a later start removes it if this process is killed), each deleted once loaded or forgotten, the
 * folder at {@link close}. They may take at most the disk budget: the least recently used files are dropped to make
 * room (those conversations are recomputed when they return), a state larger than the whole budget is never written,
 * and a write or read that fails (a full disk) falls back to recompute instead of failing the request.
 */
export class ConversationKvStore {
    private readonly conversations = new Map<string, Conversation>();
    /** Which conversation each slot's sequence holds (by slot index). */
    private readonly resident = new Map<number, string>();
    private readonly decisionLog: KvRestoreDecision[] = [];
    private fileCounter = 0;
    /** Bytes of the state files now on disk. */
    private diskBytes = 0;

    private constructor(private readonly folder: string, readonly diskBudgetBytes: number, private readonly options: ConversationKvStoreOptions) {}

    static async create(options: ConversationKvStoreOptions): Promise<ConversationKvStore> {
        const {folder, removed} = await makeKvStateFolder(options.dir ?? os.tmpdir());
        if (removed.length > 0)
            options.log?.(`removed ${removed.length} KV state folder(s) left by processes that no longer run: ${removed.join(", ")}`);
        try {
            const budget = await kvDiskBudgetBytes(folder, options.diskBudget ?? DEFAULT_KV_DISK_BUDGET);
            return new ConversationKvStore(folder, budget, options);
        } catch (error) {
            await rm(folder, {recursive: true, force: true});
            throw error;
        }
    }

    get costModel(): KvCostModel {
        return this.options.costModel;
    }

    /** Every finished decision so far, oldest first. */
    get decisions(): readonly KvRestoreDecision[] {
        return this.decisionLog;
    }

    /** Bytes the state files on disk take now (at most {@link diskBudgetBytes}). */
    get stateFileBytes(): number {
        return this.diskBytes;
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
     * holds, if another, and brings `key`'s tokens back in when they left a sequence earlier; otherwise leaves the
     * sequence empty, so nothing of another conversation is reused.
     */
    async prepare(slot: KvSlot, key: string | null): Promise<KvPreparation> {
        const held = this.resident.get(slot.index);
        if (key != null && held === key)
            return {path: "resident", decision: null, restoreMs: 0, evicted: null};
        const conversation = key != null ? this.conversations.get(key) : undefined;
        // the incoming conversation's own file is about to be read: never dropped to make room for the outgoing one's
        const evicted = held != null ? await this.evict(slot, held, conversation) : null;
        this.resident.delete(slot.index);
        if (conversation?.pending == null || conversation.slot != null) {
            await slot.sequence.clearHistory();
            return {path: "new", decision: null, restoreMs: 0, evicted};
        }
        const {restoreMs, decision} = await this.restore(slot, conversation);
        return {path: decision.path, decision, restoreMs, evicted};
    }

    /** After a request of conversation `key` ran on `slot`: the slot's sequence now holds its tokens. */
    finished(slot: KvSlot, key: string | null): void {
        if (key == null) {
            this.resident.delete(slot.index);
            return;
        }
        const previous = this.conversations.get(key);
        if (previous != null)
            this.dropFile(previous, null);
        this.conversations.delete(key);
        this.conversations.set(key, {key, tokens: [...slot.sequence.contextTokens], slot, pending: null, lastUsed: performance.now()});
        this.resident.set(slot.index, key);
        this.forgetBeyondLimit();
    }

    /** Deletes every state file. */
    async close(): Promise<void> {
        this.diskBytes = 0;
        await rm(this.folder, {recursive: true, force: true});
    }

    private async evict(slot: KvSlot, key: string, incoming: Conversation | undefined): Promise<KvPreparation["evicted"]> {
        const conversation = this.conversations.get(key);
        if (conversation == null || conversation.slot !== slot)
            return null;
        conversation.slot = null;
        const prediction = predictKvRestore(this.options.costModel, conversation.tokens.length);
        const pending: Pending = {prediction, path: prediction.path, fallback: null, file: null, fileBytes: 0, swapOutMs: null, stateBytes: null};
        conversation.pending = pending;
        if (prediction.path === "swap" || this.options.measureBoth)
            await this.swapOut(slot, conversation, pending, incoming);
        if (pending.path === "swap" && pending.file == null)
            pending.path = "recompute";
        return {conversation: key, path: pending.path, swapOutMs: pending.swapOutMs};
    }

    /** Saves the slot's state for `conversation` when the budget allows (making room first); records why not otherwise. */
    private async swapOut(slot: KvSlot, conversation: Conversation, pending: Pending, incoming: Conversation | undefined): Promise<void> {
        const wanted = pending.prediction.stateBytes;
        const keep = [conversation, incoming];
        if (wanted > this.diskBudgetBytes || !this.makeRoom(wanted, keep)) {
            if (pending.path === "swap")
                pending.fallback = "disk-budget";
            return;
        }
        const file = path.join(this.folder, `${++this.fileCounter}.state`);
        const started = performance.now();
        try {
            const {fileSize} = await slot.sequence.saveStateToFile(file);
            pending.swapOutMs = performance.now() - started;
            pending.stateBytes = fileSize;
            pending.file = file;
            pending.fileBytes = fileSize;
            this.diskBytes += fileSize;
            // the prediction may have been short: older files make room, or this one goes
            if (this.diskBytes > this.diskBudgetBytes && !this.makeRoom(0, keep))
                this.dropFile(conversation, "disk-budget");
        } catch (error) {
            // node-llama-cpp reports a failed llama_state_seq_save_file without an errno: whatever failed, the state is
            // still in the sequence until the next request takes it, and recompute needs only the tokens
            await rm(file, {force: true}).catch(() => {});
            if (pending.path === "swap")
                pending.fallback = "disk-error";
            this.options.log?.(`kv ${conversation.key}: saving its state failed (${(error as Error).message}); it will be recomputed`);
        }
    }

    /**
     * Drops the least recently used state files (never those of `keep`) until `bytes` more fit the budget; `false`
     * when they cannot.
     */
    private makeRoom(bytes: number, keep: readonly (Conversation | undefined)[]): boolean {
        for (const conversation of this.conversations.values()) {
            if (this.diskBytes + bytes <= this.diskBudgetBytes)
                break;
            if (!keep.includes(conversation))
                this.dropFile(conversation, "disk-budget");
        }
        return this.diskBytes + bytes <= this.diskBudgetBytes;
    }

    /** Deletes `conversation`'s state file, if any; when it was to be swapped in, it will be recomputed (`fallback`). */
    private dropFile(conversation: Conversation, fallback: KvFallback | null): void {
        const pending = conversation.pending;
        if (pending?.file == null)
            return;
        void rm(pending.file, {force: true}).catch(() => {});
        this.diskBytes -= pending.fileBytes;
        pending.file = null;
        pending.fileBytes = 0;
        if (pending.path === "swap" && fallback != null) {
            pending.path = "recompute";
            pending.fallback = fallback;
        }
    }

    private async restore(slot: KvSlot, conversation: Conversation): Promise<{restoreMs: number; decision: KvRestoreDecision}> {
        const pending = conversation.pending!;
        const {sequence} = slot;
        const swapIn = async (): Promise<number | null> => {
            const started = performance.now();
            try {
                // emptied first: node-llama-cpp forgets the sequence's tokens before reading the file, so after a failed
                // read (a missing file) its clearHistory would not erase the KV cells still there; a read failing part
                // way is cleared by llama.cpp itself (llama_kv_cache::state_read_sinfo)
                await sequence.clearHistory();
                await sequence.loadStateFromFile(pending.file!, {acceptRisk: true});
                return performance.now() - started;
            } catch (error) {
                this.options.log?.(`kv ${conversation.key}: loading its state failed (${(error as Error).message}); recomputing it`);
                return null;
            }
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
        if (pending.path === "swap") {
            if (this.options.measureBoth)
                recomputeMs = await recompute();
            swapInMs = await swapIn();
            if (swapInMs == null) {
                pending.path = "recompute";
                pending.fallback = "disk-error";
                recomputeMs = await recompute();
            }
        } else {
            if (this.options.measureBoth && pending.file != null)
                swapInMs = await swapIn();
            recomputeMs = await recompute();
        }
        const restoreMs = performance.now() - started;
        this.dropFile(conversation, null);
        const decision: KvRestoreDecision = {
            conversation: conversation.key,
            tokens: conversation.tokens.length,
            predicted: pending.prediction,
            path: pending.path,
            fallback: pending.fallback,
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
            this.dropFile(conversation, null);
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
    /** How much disk the state files may take. Defaults to {@link DEFAULT_KV_DISK_BUDGET}. */
    diskBudget?: KvDiskBudget;
    /** Defaults to {@link MAX_CONVERSATIONS}. */
    maxConversations?: number;
    /** Called with every finished decision. */
    onDecision?: (decision: KvRestoreDecision) => void;
    /** The server's log: folders cleaned up at start, state files that could not be written or read. */
    log?: (line: string) => void;
};
