/**
 * Atomic writes of the app's data files (conversations, the model library, the rpc-server list, the server's
 * settings): a temp file written and fsynced, renamed over the old one, then the directory fsynced, so a kill at any
 * moment leaves either the old or the new content; and the one way a file this code cannot read is put aside.
 */
import {randomUUID} from "node:crypto";
import {promises as fs} from "node:fs";
import path from "node:path";
import {PRIVATE_FILE_MODE} from "./privateDataDir.js";

/** The ending of a write's temp file; one left by a crash is ignored (and removed by the store that finds it). */
export const TEMP_SUFFIX = ".tmp";

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
    /** `mode` is given for a new file ("w"): {@link PRIVATE_FILE_MODE}. */
    open(file: string, flags: "w" | "r", mode?: number): Promise<AtomicWriteHandle>;
    rename(from: string, to: string): Promise<void>;
    rm(file: string, options: {force: true}): Promise<void>;
};

/** {@link AtomicWriteIo} through `node:fs`. */
export const nodeAtomicIo: AtomicWriteIo = {
    open: (file, flags, mode) => fs.open(file, flags, mode),
    rename: (from, to) => fs.rename(from, to),
    rm: (file, options) => fs.rm(file, options)
};

/**
 * Writes `data` to `file` so that a crash leaves either the old or the new content, never a torn file. The file is
 * readable by its owner only ({@link PRIVATE_FILE_MODE}): these files hold chats, keys and paths.
 */
export async function writeFileAtomic(file: string, data: string, io: AtomicWriteIo = nodeAtomicIo): Promise<void> {
    const temp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}${TEMP_SUFFIX}`;
    const handle = await io.open(temp, "w", PRIVATE_FILE_MODE);
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
