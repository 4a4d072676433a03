/**
 * Writes a file of the measurement cache (electron/engine/profiler/profileMachine.ts defaultProfileCacheDir): private
 * to its owner as the app's data folder is (electron/host/storage/privateDataDir.ts: 0600 files in a 0700 folder), and whole
 * or not at all (a temporary file renamed over the old one), so a crash mid-write leaves no half file to be read.
 */
import fs from "node:fs/promises";
import path from "node:path";

/** Cache files: owner read/write only. */
export const CACHE_FILE_MODE = 0o600;
/** The cache folder: owner only. */
export const CACHE_DIR_MODE = 0o700;

export async function writeCacheFile(file: string, text: string): Promise<void> {
    const dir = path.dirname(file);
    await fs.mkdir(dir, {recursive: true, mode: CACHE_DIR_MODE});
    // a folder made by an older version (or under another umask) is tightened: it holds only this app's measurements
    await fs.chmod(dir, CACHE_DIR_MODE);
    const temporary = `${file}.${process.pid}.tmp`;
    try {
        await fs.writeFile(temporary, text, {mode: CACHE_FILE_MODE});
        await fs.chmod(temporary, CACHE_FILE_MODE);
        await fs.rename(temporary, file);
    } catch (error) {
        await fs.rm(temporary, {force: true});
        throw error;
    }
}
