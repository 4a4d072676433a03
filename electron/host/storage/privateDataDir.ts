/**
 * The app's data folder holds every conversation, the server's API key (server.json), model paths and uploaded
 * models: nobody but its owner may read it. New files are written 0600 in 0700 folders ({@link PRIVATE_FILE_MODE},
 * {@link PRIVATE_DIR_MODE}, and the process umask of {@link makeDataDirPrivate}); folders and files left readable by
 * older versions are fixed at start.
 */
import {promises as fs} from "node:fs";
import os from "node:os";
import path from "node:path";
import {storageFailure} from "./storageFailure.js";

/** Files in the data folder: owner read/write only. */
export const PRIVATE_FILE_MODE = 0o600;
/** Folders in the data folder: owner only. */
export const PRIVATE_DIR_MODE = 0o700;
/** The umask that gives every file this process and its children create no group or other access. */
const PRIVATE_UMASK = 0o077;
/** The data folder's own entries: the app's folders, and its `*.json` files at the top (settings, keys, lists). */
const APP_FOLDERS = ["conversations", "bench", "models"];

/**
 * Creates `dataDir` (0700) or tightens it, and tightens what the app keeps in it: its folders recursively, its
 * top-level `*.json` files. Other entries are left alone (Electron keeps its own caches in the same folder), and so
 * is a folder shared by design — the home folder, `/`, a sticky folder such as /tmp — given as the data folder.
 * Sets the process umask to 0077 so later files (the engine child's benchmark reports too) are private from the start.
 * Returns the one-sentence reason when the folder cannot be written (a read-only or full disk), else `null`.
 */
export async function makeDataDirPrivate(dataDir: string): Promise<string | null> {
    process.umask(PRIVATE_UMASK);
    try {
        await fs.mkdir(dataDir, {recursive: true, mode: PRIVATE_DIR_MODE});
        const stat = await fs.stat(dataDir);
        const shared = (stat.mode & 0o1000) !== 0 || dataDir === os.homedir() || dataDir === path.parse(dataDir).root;
        if (!shared)
            await tighten(dataDir, PRIVATE_DIR_MODE, stat.mode);
        for (const entry of await fs.readdir(dataDir, {withFileTypes: true})) {
            const full = path.join(dataDir, entry.name);
            if (entry.isDirectory() && APP_FOLDERS.includes(entry.name))
                await tightenTree(full);
            else if (entry.isFile() && entry.name.endsWith(".json"))
                await tighten(full, PRIVATE_FILE_MODE);
        }
        return null;
    } catch (error) {
        const failure = storageFailure(error, dataDir);
        if (failure == null)
            throw error;
        return failure.message;
    }
}

/** `dir` and everything under it (symbolic links are not followed: what they point at is not the app's). */
async function tightenTree(dir: string): Promise<void> {
    await tighten(dir, PRIVATE_DIR_MODE);
    for (const entry of await fs.readdir(dir, {withFileTypes: true})) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory())
            await tightenTree(full);
        else if (entry.isFile())
            await tighten(full, PRIVATE_FILE_MODE);
    }
}

/** Sets `mode` where `file` gives group or others any access (only a change is written: a read-only disk with private files is fine). */
async function tighten(file: string, mode: number, knownMode?: number): Promise<void> {
    const current = knownMode ?? (await fs.lstat(file)).mode;
    if ((current & 0o077) !== 0)
        await fs.chmod(file, mode);
}
