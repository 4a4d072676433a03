/**
 * Stores a model uploaded from the browser (drag-and-drop in web mode) under the models folder. Streams the body to a
 * hidden temp file while counting and hashing it, and moves it into place only once complete, so an aborted upload, an
 * upload over the cap or a full disk never leaves a partial `.gguf` behind; each gets a clear error. An existing model
 * of the same name is never overwritten: the same content is reused, different content is stored as `name (2).gguf`.
 */
import {createHash, randomUUID} from "node:crypto";
import {createReadStream, createWriteStream, promises as fs} from "node:fs";
import type http from "node:http";
import path from "node:path";
import {Transform, type TransformCallback} from "node:stream";
import {pipeline} from "node:stream/promises";
import type {ErrorCode} from "../contract/errorCodes.js";
import type {Reply} from "../contract/envelope.js";
import {PRIVATE_DIR_MODE, PRIVATE_FILE_MODE} from "../host/storage/privateDataDir.js";
import {storageFailure} from "../host/storage/storageFailure.js";

export type UploadResult = {
    status: number;
    body: Reply<{path: string; bytes: number; reused: boolean}>;
};

export type ReceiveUploadOptions = {
    /** Largest upload accepted, in bytes (answered with 413). Defaults to no cap beyond the free disk space. */
    maxBytes?: number;
    /** Disk space an upload must leave free, in bytes (answered with 507 when it would not). Defaults to 1 GiB. */
    reserveBytes?: number;
    /** Free bytes on the disk holding `dir`, or `null` when unknown. Defaults to `fs.statfs`. */
    freeBytes?: (dir: string) => Promise<number | null>;
    /**
     * The other models folders (each `--model-dir`). A browser cannot say where a dropped file lives, so an upload whose
     * name and content match a regular file directly inside one of them answers with that file (opened where it is,
     * `reused`) and keeps no copy. Defaults to none.
     */
    modelDirs?: readonly string[];
};

const MAX_NAME_CHARS = 200;
const DEFAULT_RESERVE_BYTES = 2 ** 30;
/** While streaming, the free space is probed again after this many bytes (another writer may be filling the disk). */
const REPROBE_EVERY_BYTES = 64 * 2 ** 20;
/** `name (2).gguf` … `name (N).gguf` are tried before giving up. */
const MAX_NAME_VARIANTS = 1000;
/** Temp files of uploads in progress: hidden, random suffix (see {@link cleanStaleUploads}). */
const PARTIAL_SUFFIX = ".partial";
/** Left by earlier versions after a failed write. */
const LEGACY_TEMP_SUFFIX = ".tmp";

/** A safe file name for the models folder, or an error message. */
export function checkUploadName(name: string): {ok: true; name: string} | {ok: false; message: string} {
    if (name === "" || name.length > MAX_NAME_CHARS)
        return {ok: false, message: "the file name is empty or too long"};
    // control characters (C0, DEL, C1) and invisible format characters (bidi overrides such as U+202E, which make
    // "x\u202Efuug.gguf" display as another name) are refused: the name is shown to the user and stored as is
    if (/[/\\\0]/.test(name) || name.startsWith(".") || name !== path.basename(name) || /[\p{Cc}\p{Cf}]/u.test(name))
        return {ok: false, message: `"${name.replace(/[\p{Cc}\p{Cf}]/gu, "?")}" is not a plain file name`};
    if (!name.toLowerCase().endsWith(".gguf"))
        return {ok: false, message: `"${name}" is not a .gguf file: only GGUF models can be opened`};
    return {ok: true, name};
}

/**
 * Deletes what interrupted uploads left in `modelsDir` (hidden `.partial` files, `.tmp` files): call it once when the
 * models folder is set up, before any upload can be in flight. Returns the names it deleted; a missing folder is fine.
 */
export async function cleanStaleUploads(modelsDir: string): Promise<string[]> {
    let names: string[];
    try {
        names = await fs.readdir(modelsDir);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT")
            return [];
        throw error;
    }
    const stale = names.filter((name) => (name.startsWith(".") && name.endsWith(PARTIAL_SUFFIX)) || name.endsWith(LEGACY_TEMP_SUFFIX));
    const deleted: string[] = [];
    for (const name of stale) {
        const file = path.join(modelsDir, name);
        if ((await fs.lstat(file)).isFile()) {
            try {
                await fs.rm(file, {force: true});
            } catch (error) {
                // a read-only disk keeps its leftovers; web mode still starts (and says the folder cannot be written)
                if (storageFailure(error, modelsDir) != null)
                    continue;
                throw error;
            }
            deleted.push(name);
        }
    }
    return deleted;
}

/** Why streaming stopped early; carries the answer to send. */
class UploadRefused extends Error {
    constructor(readonly result: UploadResult) {
        super(result.body.ok ? "refused" : result.body.error.message);
    }
}

function failure(status: number, code: ErrorCode, message: string): UploadResult {
    return {status, body: {ok: false, error: {code, message}}};
}

/**
 * Receives one `PUT /api/upload?name=` body into `modelsDir`. Resolves with the answer to send (never rejects).
 * Refusals before the body is read (bad name, declared size over the cap or the free space) leave the body unread;
 * refusals while streaming stop reading and ask for the connection to be closed.
 */
export async function receiveUpload(
    request: http.IncomingMessage, response: http.ServerResponse, name: string, modelsDir: string, options: ReceiveUploadOptions = {}
): Promise<UploadResult> {
    const refuseUnread = (result: UploadResult): UploadResult => {
        // the rest of the body is not wanted: do not keep the connection alive to drain it
        response.setHeader("Connection", "close");
        request.unpipe();
        request.pause();
        return result;
    };
    const checked = checkUploadName(name);
    if (!checked.ok)
        return refuseUnread(failure(400, "bad-name", checked.message));
    try {
        await fs.mkdir(modelsDir, {recursive: true, mode: PRIVATE_DIR_MODE});
    } catch (error) {
        const storage = storageFailure(error, modelsDir);
        if (storage == null)
            throw error;
        return refuseUnread(failure(507, storage.code, `${name} cannot be stored: the models folder ${modelsDir} is on a ${storage.code === "disk-full" ? "full" : "read-only"} disk. ` +
            "Start web mode with --model-dir <the model's folder> and type its path instead: it is opened where it is, without a copy."));
    }

    const probe = options.freeBytes ?? statfsFreeBytes;
    const reserve = options.reserveBytes ?? DEFAULT_RESERVE_BYTES;
    const limits = {maxBytes: options.maxBytes ?? Infinity, name, modelsDir, reserve};
    const declared = Number(request.headers["content-length"] ?? NaN);
    const hasDeclared = Number.isFinite(declared);
    const free = await probe(modelsDir);
    const early = checkSize(hasDeclared ? declared : 0, free, limits);
    if (early != null)
        return refuseUnread(early);

    const temp = path.join(modelsDir, `.${checked.name}.${randomUUID().slice(0, 8)}${PARTIAL_SUFFIX}`);
    const metered = meterUpload(free, limits, () => probe(modelsDir));
    const {meter} = metered;

    let aborted = false;
    request.on("aborted", () => {
        aborted = true;
    });
    response.on("close", () => {
        if (!response.writableFinished)
            aborted = true;
    });
    // The request is piped by hand, not through `pipeline`: an error there would destroy the socket, and a refusal
    // while streaming still has to be answered on it.
    const onRequestError = (error: Error) => meter.destroy(error);
    request.on("error", onRequestError);
    request.on("close", () => {
        if (!request.complete)
            meter.destroy(Object.assign(new Error("the upload ended early"), {code: "ECONNRESET"}));
    });
    request.pipe(meter);
    try {
        await pipeline(meter, createWriteStream(temp, {flags: "wx", mode: PRIVATE_FILE_MODE}));
        const received = metered.received();
        if (aborted || (hasDeclared && received !== declared))
            throw Object.assign(new Error("the upload ended early"), {code: "ECONNRESET"});
        const sha256 = metered.digest();
        const stored = await inModelDirs(temp, checked.name, options.modelDirs ?? [], received, sha256) ??
            await placeWithoutOverwrite(temp, checked.name, modelsDir, received, sha256);
        return {status: 200, body: {ok: true, result: {path: stored.path, bytes: received, reused: stored.reused}}};
    } catch (error) {
        await fs.rm(temp, {force: true});
        const failed = uploadFailure(error, name, aborted);
        return failed.bodyUnread ? refuseUnread(failed.result) : failed.result;
    } finally {
        request.off("error", onRequestError);
    }
}

type SizeLimits = {maxBytes: number; reserve: number; name: string; modelsDir: string};

/**
 * The stream an upload passes through: counts and hashes it, and fails with {@link UploadRefused} as soon as it goes
 * over the cap or the free space, which is probed again every REPROBE_EVERY_BYTES.
 */
function meterUpload(freeAtStart: number | null, limits: SizeLimits, probe: () => Promise<number | null>): {meter: Transform; received(): number; digest(): string} {
    const hash = createHash("sha256");
    let free = freeAtStart;
    let received = 0;
    let nextProbeAt = REPROBE_EVERY_BYTES;
    const meter = new Transform({
        transform(chunk: Buffer, _encoding, callback: TransformCallback) {
            received += chunk.length;
            const refused = checkSize(received, free, limits);
            if (refused != null) {
                callback(new UploadRefused(refused));
                return;
            }
            hash.update(chunk);
            if (received < nextProbeAt) {
                callback(null, chunk);
                return;
            }
            nextProbeAt = received + REPROBE_EVERY_BYTES;
            // free space now, plus what this upload already holds (so the check stays about the whole upload)
            void probe().then((now) => {
                free = now == null ? free : now + received;
                const late = checkSize(received, free, limits);
                callback(late == null ? null : new UploadRefused(late), late == null ? chunk : undefined);
            }, () => callback(null, chunk));
        }
    });
    return {meter, received: () => received, digest: () => hash.digest("hex")};
}

/** The answer to an upload that failed while streaming, and whether the rest of its body is left unread. */
function uploadFailure(error: unknown, name: string, aborted: boolean): {result: UploadResult; bodyUnread: boolean} {
    if (error instanceof UploadRefused)
        return {result: error.result, bodyUnread: true};
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOSPC" || code === "EDQUOT")
        return {result: failure(507, "disk-full", `The disk filled up while storing ${name}; the partial file was deleted. Free some space, or start web mode with --model-dir <the model's folder> and type its path instead (it is opened where it is).`), bodyUnread: true};
    if (aborted || code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE")
        return {result: failure(400, "upload-aborted", `The upload of ${name} was interrupted; the partial file was deleted.`), bodyUnread: false};
    return {result: failure(500, "upload-failed", `Could not store ${name}: ${(error as Error).message}`), bodyUnread: true};
}

/** The refusal for an upload of `bytes` (declared, or received so far), or `null` when it still fits. */
function checkSize(bytes: number, free: number | null, limits: SizeLimits): UploadResult | null {
    if (bytes > limits.maxBytes)
        return failure(413, "too-large", `${limits.name} is larger than the upload limit of ${formatBytes(limits.maxBytes)}; ` +
            "the partial file was deleted. Start web mode with --model-dir <the model's folder> and type its path instead: it is opened where it is, without a copy.");
    if (free != null && bytes > free - limits.reserve)
        return failure(507, "disk-full", `Not enough disk space for ${limits.name}: it needs more than ${formatBytes(Math.max(0, free - limits.reserve))}, ` +
            `the space free in ${limits.modelsDir} less ${formatBytes(limits.reserve)} kept free; nothing was stored. ` +
            "Free some space, or start web mode with --model-dir <the model's folder> and type its path instead (it is opened where it is).");
    return null;
}

/** The same file directly inside one of `modelDirs` (the temp copy deleted), or `null`; a link there is not followed. */
async function inModelDirs(temp: string, name: string, modelDirs: readonly string[], bytes: number, sha256: string): Promise<{path: string; reused: boolean} | null> {
    for (const dir of modelDirs) {
        const candidate = path.join(dir, name);
        if (!(await fs.lstat(candidate).then((stat) => stat.isFile(), () => false)) || !(await sameContent(candidate, bytes, sha256).catch(() => false)))
            continue;
        await fs.rm(temp, {force: true});
        return {path: candidate, reused: true};
    }
    return null;
}

/**
 * Moves the finished temp file to `name`, or reuses an existing file there with the same content, or else takes the
 * first free `name (N).gguf`. Never replaces a file: the move is a hard link, which fails on an existing name.
 */
async function placeWithoutOverwrite(temp: string, name: string, modelsDir: string, bytes: number, sha256: string): Promise<{path: string; reused: boolean}> {
    const extension = path.extname(name);
    const stem = name.slice(0, name.length - extension.length);
    for (let variant = 1; variant <= MAX_NAME_VARIANTS; variant++) {
        const candidate = path.join(modelsDir, variant === 1 ? name : `${stem} (${variant})${extension}`);
        if (await sameContent(candidate, bytes, sha256)) {
            await fs.rm(temp, {force: true});
            return {path: candidate, reused: true};
        }
        if (await moveIfFree(temp, candidate))
            return {path: candidate, reused: false};
    }
    throw new Error(`${MAX_NAME_VARIANTS} files named like ${name} already exist in ${modelsDir}`);
}

async function sameContent(file: string, bytes: number, sha256: string): Promise<boolean> {
    try {
        const stat = await fs.stat(file);
        if (!stat.isFile() || stat.size !== bytes)
            return false;
        const hash = createHash("sha256");
        await pipeline(createReadStream(file), hash);
        return hash.digest("hex") === sha256;
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT")
            return false;
        throw error;
    }
}

/** Renames `from` to `to` unless `to` exists; `false` when it does. */
async function moveIfFree(from: string, to: string): Promise<boolean> {
    try {
        await fs.link(from, to);
    } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EEXIST")
            return false;
        if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EXDEV")
            throw error;
        // a file system without hard links (FAT, exFAT): check, then rename (racy only against another upload)
        if (await fs.stat(to).then(() => true, () => false))
            return false;
        await fs.rename(from, to);
        return true;
    }
    await fs.rm(from, {force: true});
    return true;
}

async function statfsFreeBytes(dir: string): Promise<number | null> {
    try {
        const stats = await fs.statfs(dir);
        return stats.bavail * stats.bsize;
    } catch {
        return null;
    }
}

function formatBytes(bytes: number): string {
    return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
