/**
 * Conversations on disk, one JSON file per conversation plus an index, every write atomic (temp file, fsync, rename,
 * fsync of the directory). A kill at any moment leaves each file either at its old or its new content; a leftover
 * temp file is ignored and removed on open. The index is only a cache: it is rebuilt from the conversation files
 * when missing, unreadable or out of step.
 */
import {randomUUID} from "node:crypto";
import {promises as fs} from "node:fs";
import path from "node:path";
import type {ChatMessage, ChatSettings, Conversation, ConversationSummary} from "../contract/ipc.js";
import {TensorwiseError} from "../contract/TensorwiseError.js";

const INDEX_FILE = "index.json";
const TEMP_SUFFIX = ".tmp";
const DEFAULT_TITLE = "New chat";
const TITLE_CHARS = 48;
const ID_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

/** An open file, as much of `fs.promises.FileHandle` as an atomic write uses. */
export type AtomicWriteHandle = {
    writeFile(data: string, encoding: "utf8"): Promise<void>;
    sync(): Promise<void>;
    close(): Promise<void>;
};

/**
 * The file system calls of {@link writeFileAtomic}. Defaults to `node:fs`; tests pass one that records the calls or
 * fails at a chosen step, to prove what a crash at that step leaves on disk.
 */
export type AtomicWriteIo = {
    open(file: string, flags: "w" | "r"): Promise<AtomicWriteHandle>;
    rename(from: string, to: string): Promise<void>;
    rm(file: string, options: {force: true}): Promise<void>;
};

const nodeIo: AtomicWriteIo = {
    open: (file, flags) => fs.open(file, flags),
    rename: (from, to) => fs.rename(from, to),
    rm: (file, options) => fs.rm(file, options)
};

/** Writes `data` to `file` so that a crash leaves either the old or the new content, never a torn file. */
export async function writeFileAtomic(file: string, data: string, io: AtomicWriteIo = nodeIo): Promise<void> {
    const temp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}${TEMP_SUFFIX}`;
    const handle = await io.open(temp, "w");
    try {
        await handle.writeFile(data, "utf8");
        await handle.sync();
    } finally {
        await handle.close();
    }
    try {
        await io.rename(temp, file);
    } catch (error) {
        await io.rm(temp, {force: true});
        throw error;
    }
    await syncDirectory(path.dirname(file), io);
}

/**
 * Moves a settings file this code cannot read out of the way, beside it as `<name>.unreadable-<ms>.json`, so the
 * user can look at it and the app starts fresh without overwriting it. Returns where it went.
 */
export async function moveAsideUnreadable(file: string): Promise<string> {
    const aside = path.join(path.dirname(file), `${path.basename(file, ".json")}.unreadable-${Date.now()}.json`);
    await fs.rename(file, aside);
    return aside;
}

async function syncDirectory(dir: string, io: AtomicWriteIo): Promise<void> {
    // A directory fsync makes the rename itself durable; not supported on Windows, where rename is already atomic.
    if (process.platform === "win32")
        return;
    const handle = await io.open(dir, "r");
    try {
        await handle.sync();
    } finally {
        await handle.close();
    }
}

function summarize(conversation: Conversation): ConversationSummary {
    const {id, title, updatedAt, messages} = conversation;
    return {id, title, updatedAt, messageCount: messages.length};
}

function isConversation(value: unknown): value is Conversation {
    if (value == null || typeof value !== "object")
        return false;
    const record = value as Record<string, unknown>;
    return typeof record.id === "string" && typeof record.title === "string" && typeof record.updatedAt === "number" &&
        Array.isArray(record.messages);
}

export class ConversationStore {
    private index = new Map<string, ConversationSummary>();
    /** Writes per conversation run one after another, so a slow older write never lands over a newer one. */
    private readonly queues = new Map<string, Promise<unknown>>();
    private indexQueue: Promise<unknown> = Promise.resolve();

    private constructor(readonly dir: string, private readonly io: AtomicWriteIo) {}

    /**
     * Opens (creating if needed) the store under `dataDir/conversations`. `io` defaults to `node:fs` (tests inject
     * failures through it).
     */
    static async open(dataDir: string, io: AtomicWriteIo = nodeIo): Promise<ConversationStore> {
        const store = new ConversationStore(path.join(dataDir, "conversations"), io);
        await fs.mkdir(store.dir, {recursive: true});
        await store.load();
        return store;
    }

    list(): ConversationSummary[] {
        return [...this.index.values()].sort((a, b) => b.updatedAt - a.updatedAt);
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

    async delete(id: string): Promise<void> {
        this.checkId(id);
        await this.enqueue(id, async () => {
            await fs.rm(this.fileOf(id), {force: true});
            this.index.delete(id);
        });
        await this.writeIndex();
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
        const next = await this.enqueue(id, async () => {
            const current = await this.readConversation(id);
            if (current == null)
                throw new TensorwiseError("not-found", `no conversation with id ${id}`);
            const changed = change(current);
            const updated: Conversation = {...changed, updatedAt: Date.now(), messageCount: changed.messages.length};
            await writeFileAtomic(this.fileOf(id), JSON.stringify(updated), this.io);
            this.index.set(id, summarize(updated));
            return updated;
        });
        await this.writeIndex();
        return next;
    }

    private async save(conversation: Conversation): Promise<void> {
        await this.enqueue(conversation.id, async () => {
            await writeFileAtomic(this.fileOf(conversation.id), JSON.stringify(conversation), this.io);
            this.index.set(conversation.id, summarize(conversation));
        });
        await this.writeIndex();
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

    private async readConversation(id: string): Promise<Conversation | null> {
        this.checkId(id);
        let text: string;
        try {
            text = await fs.readFile(this.fileOf(id), "utf8");
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT")
                return null;
            throw error;
        }
        const parsed: unknown = JSON.parse(text);
        return isConversation(parsed) ? parsed : null;
    }

    /** Reads every conversation file (the source of truth), drops temp leftovers, and rewrites a stale index. */
    private async load(): Promise<void> {
        const entries = await fs.readdir(this.dir);
        for (const entry of entries.filter((name) => name.endsWith(TEMP_SUFFIX)))
            await fs.rm(path.join(this.dir, entry), {force: true});

        const fromIndex = await this.readIndexFile();
        const ids = entries.filter((name) => name.endsWith(".json") && name !== INDEX_FILE).map((name) => name.slice(0, -5))
            .filter((id) => ID_PATTERN.test(id));
        for (const id of ids) {
            try {
                const conversation = await this.readConversation(id);
                if (conversation != null)
                    this.index.set(id, summarize(conversation));
            } catch {
                // unreadable file: cannot come from our atomic writes; leave it on disk for the user, skip it here
            }
        }
        const consistent = fromIndex != null && fromIndex.length === this.index.size &&
            fromIndex.every((entry) => {
                const actual = this.index.get(entry.id);
                return actual != null && actual.updatedAt === entry.updatedAt && actual.messageCount === entry.messageCount;
            });
        if (!consistent)
            await this.writeIndex();
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
