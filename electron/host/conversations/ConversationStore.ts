/**
 * Conversations on disk, one JSON file per conversation plus an index, every write atomic (temp file, fsync, rename,
 * fsync of the directory). A kill at any moment leaves each file either at its old or its new content; a leftover
 * temp file is ignored and removed on open. The index is only a cache: it is rebuilt from the conversation files
 * when missing, unreadable or out of step.
 *
 * Files are private to the user (0600, in a 0700 folder). A conversation file is checked like a request
 * (checkStoredConversation.ts); one that is not valid JSON or fails the check is moved, unchanged, into
 * `conversations/damaged/` and reported in {@link ConversationStore.notices}. A data folder that cannot be written
 * (full disk, read-only mount) does not stop the store from opening: it serves what it can read and says why nothing
 * is saved.
 */
import {randomUUID} from "node:crypto";
import {constants as fsConstants, promises as fs} from "node:fs";
import path from "node:path";
import type {ChatMessage, ChatSettings, Conversation, ConversationNotice, ConversationSearchHit, ConversationSummary} from "../../contract/ipc.js";
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import {checkStoredConversation} from "./checkStoredConversation.js";
import {ConversationSearch} from "./ConversationSearch.js";
import {PRIVATE_DIR_MODE} from "../storage/privateDataDir.js";
import {nodeAtomicIo, TEMP_SUFFIX, writeFileAtomic, type AtomicWriteIo} from "../storage/writeFileAtomic.js";
import {storageFailure} from "../storage/storageFailure.js";

const INDEX_FILE = "index.json";
const DEFAULT_TITLE = "New chat";
const TITLE_CHARS = 48;
const ID_PATTERN = /^[A-Za-z0-9-]{1,64}$/;
/** Where conversation files that cannot be read are moved, inside the conversations folder. */
export const DAMAGED_DIR = "damaged";

function summarize(conversation: Conversation): ConversationSummary {
    const {id, title, updatedAt, messages} = conversation;
    return {id, title, updatedAt, messageCount: messages.length};
}

/** A conversation file that cannot be read, and why (for the notice). */
class DamagedFile extends Error {}

/** A UTC time stamp that sorts and is safe in a file name: `2026-11-27T10-31-05-123Z`. */
function fileStamp(): string {
    return new Date().toISOString().replace(/[:.]/g, "-");
}

export class ConversationStore {
    private index = new Map<string, ConversationSummary>();
    /** The title and message texts of every conversation in {@link index}, kept in step with it. */
    private readonly searchable = new ConversationSearch();
    /** Writes per conversation run one after another, so a slow older write never lands over a newer one. */
    private readonly queues = new Map<string, Promise<unknown>>();
    private indexQueue: Promise<unknown> = Promise.resolve();
    /** What the user must be told about the files (see {@link notices}). */
    private readonly noticeList: ConversationNotice[] = [];

    private constructor(readonly dir: string, private readonly io: AtomicWriteIo) {}

    /**
     * Opens (creating if needed) the store under `dataDir/conversations`. `io` defaults to `node:fs` (tests inject
     * failures through it).
     */
    static async open(dataDir: string, io: AtomicWriteIo = nodeAtomicIo): Promise<ConversationStore> {
        const store = new ConversationStore(path.join(dataDir, "conversations"), io);
        try {
            await fs.mkdir(store.dir, {recursive: true, mode: PRIVATE_DIR_MODE});
            // a read-only mount says so here, before the first chat is lost (a full disk only at the first write)
            await fs.access(store.dir, fsConstants.W_OK);
        } catch (error) {
            store.noteWriteFailure(error);
        }
        await store.load();
        return store;
    }

    list(): ConversationSummary[] {
        return [...this.index.values()].sort((a, b) => b.updatedAt - a.updatedAt);
    }

    /** Why chats are not being saved, and which conversation files could not be read; empty when all is well. */
    notices(): ConversationNotice[] {
        return [...this.noticeList];
    }

    async get(id: string): Promise<Conversation> {
        const conversation = await this.readConversation(id);
        if (conversation == null)
            throw new TensorwiseError("not-found", `no conversation with id ${id}`);
        return conversation;
    }

    async create(title?: string, settings?: ChatSettings): Promise<Conversation> {
        const now = Date.now();
        const conversation: Conversation = {
            id: randomUUID(), title: title?.trim() || DEFAULT_TITLE, updatedAt: now, messageCount: 0, messages: [],
            ...(settings != null && {settings})
        };
        await this.save(conversation);
        return conversation;
    }

    /**
     * Stores `conversation` (already checked, e.g. by importConversation.ts) as a new conversation: a new id, so it
     * never replaces one that exists, and updated now, so it is listed first; its title, messages and settings as given.
     */
    async importConversation(conversation: Conversation): Promise<Conversation> {
        const imported: Conversation = {...conversation, id: randomUUID(), updatedAt: Date.now(), messageCount: conversation.messages.length};
        await this.save(imported);
        return imported;
    }

    /** Conversations whose title or message text contains `query`, ignoring case, newest first (ConversationSearch.ts). */
    search(query: string): ConversationSearchHit[] {
        return this.searchable.search(query, this.list());
    }

    async delete(id: string): Promise<void> {
        this.checkId(id);
        await this.saving(async () => {
            await this.enqueue(id, async () => {
                await fs.rm(this.fileOf(id), {force: true});
                this.index.delete(id);
                this.searchable.remove(id);
            });
            await this.writeIndex();
        });
    }

    async rename(id: string, title: string): Promise<ConversationSummary> {
        const conversation = await this.update(id, (current) => ({...current, title: title.trim() || DEFAULT_TITLE}));
        return summarize(conversation);
    }

    /** Appends a message; the first user message names an untitled conversation. */
    async append(id: string, message: ChatMessage): Promise<Conversation> {
        return await this.update(id, (current) => {
            const title = current.title === DEFAULT_TITLE && message.role === "user" && current.messages.length === 0
                ? titleFrom(message.text)
                : current.title;
            return {...current, title, messages: [...current.messages, message]};
        });
    }

    /** Replaces the message with `message.id` (or appends it): used for a streaming reply's periodic checkpoints. */
    async upsert(id: string, message: ChatMessage): Promise<Conversation> {
        return await this.update(id, (current) => {
            const at = current.messages.findIndex((existing) => existing.id === message.id);
            const messages = [...current.messages];
            if (at === -1)
                messages.push(message);
            else
                messages[at] = message;
            return {...current, messages};
        });
    }

    /** Replaces the conversation's settings. */
    async setSettings(id: string, settings: ChatSettings): Promise<Conversation> {
        return await this.update(id, (current) => ({...current, settings}));
    }

    /** Removes message `messageId`; a clear error when there is none. */
    async deleteMessage(id: string, messageId: string): Promise<Conversation> {
        return await this.update(id, (current) => {
            if (!current.messages.some((message) => message.id === messageId))
                throw new TensorwiseError("not-found", "that message is no longer in this conversation");
            return {...current, messages: current.messages.filter((message) => message.id !== messageId)};
        });
    }

    /**
     * Keeps the messages before user message `messageId` (for an edit and resend: the edited text is appended next).
     * A clear error when it is not a user message of this conversation.
     */
    async truncateBefore(id: string, messageId: string): Promise<Conversation> {
        return await this.update(id, (current) => {
            const at = current.messages.findIndex((message) => message.id === messageId);
            if (at === -1 || current.messages[at]!.role !== "user")
                throw new TensorwiseError("not-found", "that message is no longer in this conversation");
            return {...current, messages: current.messages.slice(0, at)};
        });
    }

    /** Removes the last message if it is the assistant's (before a regenerate). */
    async dropLastAssistant(id: string): Promise<Conversation> {
        return await this.update(id, (current) => {
            const last = current.messages.at(-1);
            return last?.role === "assistant" ? {...current, messages: current.messages.slice(0, -1)} : current;
        });
    }

    /** Waits until every queued write has landed. */
    async flush(): Promise<void> {
        await Promise.allSettled([...this.queues.values(), this.indexQueue]);
    }

    private async update(id: string, change: (current: Conversation) => Conversation): Promise<Conversation> {
        this.checkId(id);
        return await this.saving(async () => {
            const next = await this.enqueue(id, async () => {
            const current = await this.readConversation(id);
            if (current == null)
                throw new TensorwiseError("not-found", `no conversation with id ${id}`);
                const changed = change(current);
                const updated: Conversation = {...changed, updatedAt: Date.now(), messageCount: changed.messages.length};
                await writeFileAtomic(this.fileOf(id), JSON.stringify(updated), this.io);
                this.index.set(id, summarize(updated));
                this.searchable.put(updated);
                return updated;
            });
            await this.writeIndex();
            return next;
        });
    }

    private async save(conversation: Conversation): Promise<void> {
        await this.saving(async () => {
            await this.enqueue(conversation.id, async () => {
                await writeFileAtomic(this.fileOf(conversation.id), JSON.stringify(conversation), this.io);
                this.index.set(conversation.id, summarize(conversation));
                this.searchable.put(conversation);
            });
            await this.writeIndex();
        });
    }

    /**
     * Runs a write; a full disk or an unwritable folder becomes a coded error whose sentence says so (and a notice),
     * instead of a bare `ENOSPC`.
     */
    private async saving<T>(write: () => Promise<T>): Promise<T> {
        try {
            return await write();
        } catch (error) {
            const failure = storageFailure(error, path.dirname(this.dir));
            if (failure == null)
                throw error;
            this.note(failure);
            throw new TensorwiseError(failure.code, failure.message);
        }
    }

    /** Records a failed write as a notice; rethrows anything that is not about the disk. */
    private noteWriteFailure(error: unknown): void {
        const failure = storageFailure(error, path.dirname(this.dir));
        if (failure == null)
            throw error;
        this.note(failure);
    }

    /** Adds a notice once (a notice about the disk replaces the previous one about the disk). */
    private note(notice: ConversationNotice): void {
        if (notice.code !== "damaged-conversation") {
            const at = this.noticeList.findIndex((entry) => entry.code !== "damaged-conversation");
            if (at !== -1) {
                this.noticeList[at] = notice;
                return;
            }
        }
        if (!this.noticeList.some((entry) => entry.message === notice.message))
            this.noticeList.push(notice);
    }

    private enqueue<T>(id: string, job: () => Promise<T>): Promise<T> {
        const previous = this.queues.get(id) ?? Promise.resolve();
        const next = previous.catch(() => {}).then(job);
        this.queues.set(id, next);
        void next.catch(() => {}).finally(() => {
            if (this.queues.get(id) === next)
                this.queues.delete(id);
        });
        return next;
    }

    private writeIndex(): Promise<void> {
        const next = this.indexQueue.catch(() => {}).then(() =>
            writeFileAtomic(path.join(this.dir, INDEX_FILE), JSON.stringify({version: 1, conversations: this.list()}), this.io));
        this.indexQueue = next;
        return next;
    }

    /**
     * The conversation `id` as checked from its file, `null` when there is none. A file that cannot be read is moved
     * aside (see {@link setAside}) and answered with a `damaged-conversation` error saying so.
     */
    private async readConversation(id: string): Promise<Conversation | null> {
        this.checkId(id);
        try {
            return await this.readChecked(id);
        } catch (error) {
            if (!(error instanceof DamagedFile))
                throw error;
            const notice = await this.setAside(id, error.message);
            this.index.delete(id);
            this.searchable.remove(id);
            await this.writeIndex().catch((indexError: unknown) => this.noteWriteFailure(indexError));
            throw new TensorwiseError("damaged-conversation", notice.message);
        }
    }

    /** Reads and checks one file; throws {@link DamagedFile} with the reason when it is not a conversation. */
    private async readChecked(id: string): Promise<Conversation | null> {
        let text: string;
        try {
            text = await fs.readFile(this.fileOf(id), "utf8");
        } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (code === "ENOENT")
                return null;
            throw new DamagedFile(`it cannot be read: ${code ?? (error as Error).message}`);
        }
        let parsed: unknown;
        try {
            parsed = JSON.parse(text);
        } catch (error) {
            throw new DamagedFile(`it is not valid JSON: ${(error as Error).message}`);
        }
        try {
            return checkStoredConversation(parsed, id);
        } catch (error) {
            throw new DamagedFile(`it is not a conversation this app can show: ${(error as Error).message}`);
        }
    }

    /**
     * Moves the file of `id` unchanged into {@link DAMAGED_DIR} (as `<id>.<time>.json`, never over another file) and
     * records the notice; where the folder cannot be written the file stays where it is and the notice says so.
     */
    private async setAside(id: string, reason: string): Promise<ConversationNotice> {
        const file = this.fileOf(id);
        const damagedDir = path.join(this.dir, DAMAGED_DIR);
        const aside = path.join(damagedDir, `${id}.${fileStamp()}.json`);
        let notice: ConversationNotice;
        try {
            await fs.mkdir(damagedDir, {recursive: true, mode: PRIVATE_DIR_MODE});
            await fs.rename(file, aside);
            notice = {code: "damaged-conversation", message: `The conversation file ${id}.json could not be read (${reason}); it was moved, unchanged, to ${aside}.`};
        } catch (error) {
            const code = (error as NodeJS.ErrnoException).code ?? String(error);
            notice = {code: "damaged-conversation", message: `The conversation file ${file} could not be read (${reason}); it was left where it is (moving it failed: ${code}).`};
        }
        this.note(notice);
        return notice;
    }

    /** Reads every conversation file (the source of truth), drops temp leftovers, and rewrites a stale index. */
    private async load(): Promise<void> {
        let entries: string[];
        try {
            entries = await fs.readdir(this.dir);
        } catch (error) {
            // a read-only disk where the folder was never created: nothing saved yet, nothing can be
            if ((error as NodeJS.ErrnoException).code !== "ENOENT")
                throw error;
            entries = [];
        }
        for (const entry of entries.filter((name) => name.endsWith(TEMP_SUFFIX)))
            await fs.rm(path.join(this.dir, entry), {force: true}).catch((error: unknown) => this.noteWriteFailure(error));

        const fromIndex = await this.readIndexFile();
        const ids = entries.filter((name) => name.endsWith(".json") && name !== INDEX_FILE).map((name) => name.slice(0, -5))
            .filter((id) => ID_PATTERN.test(id));
        for (const id of ids) {
            try {
                const conversation = await this.readChecked(id);
                if (conversation != null) {
                    this.index.set(id, summarize(conversation));
                    this.searchable.put(conversation);
                }
            } catch (error) {
                if (!(error instanceof DamagedFile))
                    throw error;
                // cannot come from our atomic writes: kept for the user, out of the way, and reported
                await this.setAside(id, error.message);
            }
        }
        const consistent = fromIndex != null && fromIndex.length === this.index.size &&
            fromIndex.every((entry) => {
                const actual = this.index.get(entry.id);
                return actual != null && actual.updatedAt === entry.updatedAt && actual.messageCount === entry.messageCount;
            });
        if (!consistent)
            await this.writeIndex().catch((error: unknown) => this.noteWriteFailure(error));
    }

    private async readIndexFile(): Promise<ConversationSummary[] | null> {
        try {
            const parsed = JSON.parse(await fs.readFile(path.join(this.dir, INDEX_FILE), "utf8")) as {conversations?: unknown};
            return Array.isArray(parsed.conversations) ? parsed.conversations as ConversationSummary[] : null;
        } catch {
            return null;
        }
    }

    private fileOf(id: string): string {
        return path.join(this.dir, `${id}.json`);
    }

    private checkId(id: string): void {
        if (!ID_PATTERN.test(id))
            throw new TensorwiseError("bad-request", `invalid conversation id ${JSON.stringify(id)}`);
    }
}

function titleFrom(text: string): string {
    const oneLine = text.replace(/\s+/g, " ").trim();
    if (oneLine === "")
        return DEFAULT_TITLE;
    return oneLine.length <= TITLE_CHARS ? oneLine : `${oneLine.slice(0, TITLE_CHARS - 1).trimEnd()}…`;
}
