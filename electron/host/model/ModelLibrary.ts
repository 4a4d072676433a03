/**
 * The model library: the models a user opened recently, newest first, with how each was last loaded so that Load
 * repeats it. Kept in one JSON file in the app's data folder (beside `conversations/`), every write atomic
 * ({@link writeFileAtomic}). A file that cannot be read as a library is moved aside (never overwritten) and the
 * library starts empty, so nothing the user had is lost to a bug or a torn disk.
 */
import {promises as fs} from "node:fs";
import type {LibraryLoad, ModelCard, RecentModel} from "../../contract/ipc.js";
import {readJsonFile, writeJsonFile} from "../storage/JsonFileStore.js";

/** The library's file name in the data folder. */
export const LIBRARY_FILE = "recent-models.json";
/** Models kept; opening one more forgets the one opened longest ago. */
export const MAX_RECENT_MODELS = 20;
const FORMAT_VERSION = 1;

function isRecentModel(value: unknown): value is RecentModel {
    if (value == null || typeof value !== "object")
        return false;
    const entry = value as Record<string, unknown>;
    return typeof entry.path === "string" && typeof entry.fileName === "string" && typeof entry.architecture === "string" &&
        typeof entry.fileBytes === "number" && typeof entry.openedAt === "number" &&
        (entry.name === null || typeof entry.name === "string") &&
        (entry.loadedAt === null || typeof entry.loadedAt === "number") &&
        (entry.lastLoad === null || (typeof entry.lastLoad === "object" && entry.lastLoad != null));
}

export class ModelLibrary {
    private models: RecentModel[] = [];
    private reading: Promise<void> | null = null;
    /** The file's mtime when this object last read or wrote it: another writer (`tensorwise pull`) changes it. */
    private knownMtimeMs: number | null = null;
    private writes: Promise<unknown> = Promise.resolve();

    /** `file`: where the library is kept (see {@link LIBRARY_FILE}); read on first use. */
    constructor(readonly file: string) {}

    /** The recent models, newest first, each marked `missing` when its file is gone. */
    async list(): Promise<RecentModel[]> {
        await this.ready();
        return await Promise.all(this.models.map(async (model) => ({
            ...model, missing: !(await fs.stat(model.path).then((stat) => stat.isFile(), () => false))
        })));
    }

    /** A model was opened (inspected): it moves to the top, keeping how it was last loaded. */
    async opened(card: ModelCard): Promise<void> {
        await this.change((models) => {
            const previous = models.find((model) => model.path === card.path);
            const entry: RecentModel = {
                path: card.path, fileName: card.fileName, name: card.name, architecture: card.architecture, fileBytes: card.fileBytes,
                openedAt: Date.now(), loadedAt: previous?.loadedAt ?? null, lastLoad: previous?.lastLoad ?? null
            };
            return [entry, ...models.filter((model) => model !== previous)];
        });
    }

    /** A model was loaded with `load`: it moves to the top and Load will repeat `load`. */
    async loaded(card: ModelCard, load: LibraryLoad): Promise<void> {
        await this.change((models) => {
            const now = Date.now();
            const entry: RecentModel = {
                path: card.path, fileName: card.fileName, name: card.name, architecture: card.architecture, fileBytes: card.fileBytes,
                openedAt: now, loadedAt: now, lastLoad: load
            };
            return [entry, ...models.filter((model) => model.path !== card.path)];
        });
    }

    /** How `modelPath` was last loaded, or `null` when it never was (or is not in the library). */
    async lastLoad(modelPath: string): Promise<LibraryLoad | null> {
        await this.ready();
        return this.models.find((model) => model.path === modelPath)?.lastLoad ?? null;
    }

    /** Removes `modelPath` from the library (the file itself stays where it is). */
    async forget(modelPath: string): Promise<void> {
        await this.change((models) => models.filter((model) => model.path !== modelPath));
    }

    private async change(update: (models: RecentModel[]) => RecentModel[]): Promise<void> {
        const write = this.writes.catch(() => {}).then(async () => {
            // read again where another process wrote since: its entries are kept, not overwritten with ours
            await this.ready();
            const next = update(this.models).slice(0, MAX_RECENT_MODELS);
            await writeJsonFile(this.file, FORMAT_VERSION, {models: next});
            this.models = next;
            this.knownMtimeMs = await this.mtimeMs();
        });
        this.writes = write;
        await write;
    }

    private async ready(): Promise<void> {
        const mtime = await this.mtimeMs();
        if (this.reading == null || (mtime != null && mtime !== this.knownMtimeMs))
            this.reading = this.read().then(() => {
                this.knownMtimeMs = mtime;
            });
        await this.reading;
    }

    private async mtimeMs(): Promise<number | null> {
        return await fs.stat(this.file).then((stat) => stat.mtimeMs, () => null);
    }

    private async read(): Promise<void> {
        const models = await readJsonFile(this.file, "the model library", (parsed) => {
            const kept = (parsed as {models?: unknown} | null)?.models;
            return Array.isArray(kept) && kept.every(isRecentModel) ? kept : null;
        });
        if (models != null)
            this.models = models.slice(0, MAX_RECENT_MODELS);
    }
}
