/**
 * The models folders' contents: every `.gguf` file directly inside the app's own models folder and each `--model-dir`
 * (ModelAccess.ts), kept current while the app runs. Only a folder's top level is listed — the place uploads, pulls
 * and `--model-dir` point — so `.pull/` partials (electron/engine/hub/pullModel.ts) and other subfolders stay out,
 * and one `fs.watch` per folder (not recursive: that is not supported on every platform Node runs on) sees every
 * change. A file is listed only where {@link ModelAccess.check} would open it and it can be read, so a symbolic link
 * that leads outside its folder is never offered.
 */
import {watch, promises as fs, type FSWatcher} from "node:fs";
import path from "node:path";
import type {FolderModel, FolderModels} from "../../contract/ipc.js";
import type {ModelAccess} from "./ModelAccess.js";

/** How long a folder must be quiet before it is read again: a copy writes many times. */
export const FOLDER_SETTLE_MS = 150;
/** How often a folder that is gone is looked for again (`fs.watch` cannot watch what does not exist). */
export const MISSING_FOLDER_RETRY_MS = 2000;

export type ModelFoldersOptions = {
    /** The app's own models folder first (made when missing, as an upload or pull would), then each `--model-dir`. */
    folders: readonly string[];
    access: ModelAccess;
    /** When each model was last used (the library's recent models), by path. */
    lastUsed: () => Promise<ReadonlyMap<string, number>>;
    /** Called with every model after a folder changed. */
    onChange: (models: FolderModels) => void;
};

export class ModelFolders {
    private readonly watchers = new Map<string, FSWatcher>();
    private settle: NodeJS.Timeout | null = null;
    private retry: NodeJS.Timeout | null = null;
    private watching = false;
    private closed = false;
    private last = "";

    constructor(private readonly options: ModelFoldersOptions) {}

    /** Every `.gguf` in the folders now, own folder first, each folder's by name; starts watching on first call. */
    async list(): Promise<FolderModels> {
        if (!this.watching && !this.closed) {
            this.watching = true;
            await fs.mkdir(this.options.folders[0]!, {recursive: true}).catch(() => {});
            this.watchFolders();
        }
        const lastUsed = await this.options.lastUsed().catch(() => new Map<string, number>());
        const models: FolderModel[] = [];
        const notices: string[] = [];
        for (const folder of this.options.folders) {
            let names: string[];
            try {
                names = (await fs.readdir(folder)).sort();
            } catch (error) {
                notices.push((error as NodeJS.ErrnoException).code === "ENOENT"
                    ? `The models folder ${folder} is not there (moved, deleted or unmounted); its models are listed again once it is back.`
                    : `The models folder ${folder} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}); its models are not listed.`);
                continue;
            }
            for (const fileName of names) {
                if (!fileName.toLowerCase().endsWith(".gguf"))
                    continue;
                const model = await this.describe(folder, fileName, lastUsed);
                if (model != null)
                    models.push(model);
            }
        }
        const result = {models, notices};
        this.last = JSON.stringify(result);
        return result;
    }

    /** Stops watching. */
    close(): void {
        this.closed = true;
        for (const watcher of this.watchers.values())
            watcher.close();
        this.watchers.clear();
        if (this.settle != null)
            clearTimeout(this.settle);
        if (this.retry != null)
            clearTimeout(this.retry);
    }

    private async describe(folder: string, fileName: string, lastUsed: ReadonlyMap<string, number>): Promise<FolderModel | null> {
        const modelPath = path.join(folder, fileName);
        try {
            // the one rule for what a client may open: a link that leads outside the models folders is not offered
            await this.options.access.check(modelPath);
            await fs.access(modelPath, fs.constants.R_OK);
            const stat = await fs.stat(modelPath);
            return {path: modelPath, fileName, folder, fileBytes: stat.size, lastUsedAt: lastUsed.get(modelPath) ?? null};
        } catch {
            return null;
        }
    }

    private watchFolders(): void {
        let missing = false;
        for (const folder of this.options.folders) {
            if (this.watchers.has(folder))
                continue;
            try {
                const watcher = watch(folder, {persistent: false}, () => this.changed());
                watcher.on("error", () => {
                    // the folder went away (or its file system did): looked for again until it is back
                    watcher.close();
                    this.watchers.delete(folder);
                    this.changed();
                });
                this.watchers.set(folder, watcher);
            } catch {
                missing = true;
            }
        }
        if (missing && this.retry == null && !this.closed)
            this.retry = setTimeout(() => {
                this.retry = null;
                this.watchFolders();
                this.changed();
            }, MISSING_FOLDER_RETRY_MS).unref();
    }

    private changed(): void {
        if (this.closed)
            return;
        if (this.settle != null)
            clearTimeout(this.settle);
        this.settle = setTimeout(() => {
            this.settle = null;
            void this.refresh();
        }, FOLDER_SETTLE_MS).unref();
    }

    private async refresh(): Promise<void> {
        // a folder removed and made again has a new inode: its old watcher sees nothing more
        for (const [folder, watcher] of this.watchers)
            if (!(await fs.stat(folder).then((stat) => stat.isDirectory(), () => false))) {
                watcher.close();
                this.watchers.delete(folder);
            }
        this.watchFolders();
        const before = this.last;
        const now = await this.list();
        if (!this.closed && JSON.stringify(now) !== before)
            this.options.onChange(now);
    }
}
