/**
 * Downloads one file into a `.partial` file with resume: what a partial already holds is kept and only the rest is
 * asked for (HTTP `Range: bytes=N-`), the free disk space is checked first (`statfs`), the transfer gives up after a
 * stall, and the sha256 the repository lists is checked at the end (a mismatch deletes the partial). The caller
 * renames the verified partial into place.
 *
 * Written on node's `fetch` rather than node-llama-cpp's `createModelDownloader`: that downloader (ipull) honours
 * `HF_ENDPOINT` and resumes, but checks no sha256, has no free-disk check or stall timeout a caller can set, and keeps
 * its own progress metadata beside the file; each of those is a promise `tensorwise pull` makes.
 */
import {createHash} from "node:crypto";
import {createReadStream, promises as fs} from "node:fs";
import path from "node:path";
import type {HubAccess} from "./hubAccess.js";
import {hubFetch} from "./hubFetch.js";
import {HubError} from "./HubError.js";
import {formatBytes} from "../format/formatBytes.js";

/** Disk space a download must leave free. */
export const DOWNLOAD_RESERVE_BYTES = 512 * 2 ** 20;
/** How often progress is reported. */
const PROGRESS_EVERY_MS = 500;

/** One progress report. */
export type DownloadProgress = {
    readonly doneBytes: number;
    readonly totalBytes: number;
    /** Bytes this run already had in its partial when it started. */
    readonly resumedFromBytes: number;
    /** Over this run's transfer; `null` before a second has passed. */
    readonly bytesPerSecond: number | null;
    readonly secondsLeft: number | null;
};

/** Options of {@link downloadFile}. */
export type DownloadFileOptions = {
    readonly url: string;
    readonly access: HubAccess;
    /** The file in words, for sentences (`org/repo: model-Q4_K_M.gguf`). */
    readonly what: string;
    readonly partialPath: string;
    /** The size the repository lists. */
    readonly bytes: number;
    /** The sha256 the repository lists (hex), or `null` when it lists none (then only the size is checked). */
    readonly sha256: string | null;
    readonly stallMs?: number;
    readonly signal?: AbortSignal;
    readonly onProgress?: (progress: DownloadProgress) => void;
    /** Free bytes on the disk holding a folder. Defaults to `fs.statfs`. */
    readonly freeBytes?: (dir: string) => Promise<number>;
    /** Defaults to {@link DOWNLOAD_RESERVE_BYTES}. */
    readonly reserveBytes?: number;
    /** Bytes of the files still to come after this one (the later parts of a split model): the free space must hold them too. Defaults to 0. */
    readonly laterBytes?: number;
};

/** What a finished download did. */
export type DownloadResult = {
    /** Bytes the partial held before this run (0: a fresh download). */
    readonly resumedFromBytes: number;
    /** Bytes fetched by this run. */
    readonly fetchedBytes: number;
};

/** Free bytes for an unprivileged writer on the disk holding `dir`. */
export async function statfsFreeBytes(dir: string): Promise<number> {
    const stat = await fs.statfs(dir);
    return stat.bavail * stat.bsize;
}

/**
 * Brings `partialPath` to the whole file, verified. Rejects with a {@link HubError} sentence (the partial kept for a
 * resume, except when its content is wrong), or with the signal's reason when aborted (the partial kept).
 */
export async function downloadFile(options: DownloadFileOptions): Promise<DownloadResult> {
    const {partialPath, bytes, what} = options;
    const dir = path.dirname(partialPath);
    await fs.mkdir(dir, {recursive: true, mode: 0o700});
    let have = await fs.stat(partialPath).then((s) => s.size, () => 0);
    if (have > bytes) {
        await fs.rm(partialPath, {force: true});
        have = 0;
    }
    const free = await (options.freeBytes ?? statfsFreeBytes)(dir);
    const reserve = options.reserveBytes ?? DOWNLOAD_RESERVE_BYTES;
    const needed = bytes - have + (options.laterBytes ?? 0);
    if (needed + reserve > free)
        throw new HubError(`${what}: not enough disk space in ${dir}: it needs ${formatBytes(needed)} more and ${formatBytes(free)} is free ` +
            `(a download leaves ${formatBytes(reserve)} free); free some space or choose another folder with --dir.`);
    const resumedFromBytes = have;
    let hasher = createHash("sha256");
    if (have > 0)
        for await (const chunk of createReadStream(partialPath, {start: 0, end: have - 1}))
            hasher.update(chunk as Buffer);
    let fetched = 0;
    if (have < bytes) {
        const answer = await hubFetch(options.url, {
            access: options.access, what, stallMs: options.stallMs, signal: options.signal, afterStall: "(run the same command again to resume)",
            headers: have > 0 ? {Range: `bytes=${have}-`} : {}
        });
        const {response} = answer;
        let append = true;
        if (have > 0 && response.status !== 206) {
            // the server ignored the range: start over rather than append the file's beginning to its middle
            append = false;
            hasher = createHash("sha256");
            have = 0;
        }
        const start = have;
        checkAnswerSize(response, start, bytes, what, () => answer.cancel());
        const file = await fs.open(partialPath, append ? "a" : "w", 0o600);
        const started = performance.now();
        let lastReport = 0;
        try {
            for await (const chunk of answer.readBody()) {
                if (have + chunk.byteLength > bytes) {
                    answer.cancel();
                    await file.close().catch(() => {});
                    await fs.rm(partialPath, {force: true});
                    throw new HubError(`${what}: the server sent more than the ${bytes} bytes the repository lists; the download was deleted.`);
                }
                await file.write(chunk);
                hasher.update(chunk);
                have += chunk.byteLength;
                fetched += chunk.byteLength;
                const now = performance.now();
                if (options.onProgress != null && (now - lastReport >= PROGRESS_EVERY_MS || have === bytes)) {
                    lastReport = now;
                    const seconds = (now - started) / 1000;
                    const rate = seconds >= 1 ? (have - start) / seconds : null;
                    options.onProgress({doneBytes: have, totalBytes: bytes, resumedFromBytes, bytesPerSecond: rate,
                        secondsLeft: rate != null && rate > 0 ? (bytes - have) / rate : null});
                }
            }
            await file.sync();
        } finally {
            await file.close().catch(() => {});
        }
        if (have < bytes)
            throw new HubError(`${what}: the server closed the connection after ${have} of ${bytes} bytes; run the same command again to resume.`);
    }
    return await finish(hasher);

    async function finish(digest: ReturnType<typeof createHash>): Promise<DownloadResult> {
        const actual = digest.digest("hex");
        if (options.sha256 != null && actual !== options.sha256) {
            await fs.rm(partialPath, {force: true});
            throw new HubError(`${what}: the downloaded file's sha256 is ${actual}, not the ${options.sha256} the repository lists; ` +
                "the download was deleted (run again to fetch it anew).");
        }
        return {resumedFromBytes, fetchedBytes: fetched};
    }
}

/** Refuses an answer whose declared length or range does not fit the listed size. */
function checkAnswerSize(response: Response, start: number, bytes: number, what: string, cancel: () => void): void {
    const refuse = (why: string): never => {
        cancel();
        throw new HubError(`${what}: ${why}`);
    };
    if (response.status === 206) {
        const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get("content-range") ?? "");
        if (range == null || Number(range[1]) !== start || (range[3] !== "*" && Number(range[3]) !== bytes))
            refuse(`the server answered a different byte range (${response.headers.get("content-range") ?? "none"}) than asked for (from byte ${start} of ${bytes}).`);
    }
    const length = response.headers.get("content-length");
    if (length != null && Number(length) !== bytes - start)
        refuse(`the server sends ${length} bytes where the repository lists ${bytes - start} more; nothing was kept from this answer.`);
}
