/**
 * Stores a model uploaded from the browser (drag-and-drop in web mode) under the models folder. Streams the body to a
 * temp file and renames it into place only once complete, so an aborted upload or a full disk never leaves a partial
 * `.gguf` behind; both get a clear error.
 */
import {randomUUID} from "node:crypto";
import {createWriteStream, promises as fs} from "node:fs";
import type http from "node:http";
import path from "node:path";
import {pipeline} from "node:stream/promises";

export type UploadResult = {status: number; body: {ok: true; result: {path: string; bytes: number}} | {ok: false; error: {code: string; message: string}}};

const MAX_NAME_CHARS = 200;

/** A safe file name for the models folder, or an error message. */
export function checkUploadName(name: string): {ok: true; name: string} | {ok: false; message: string} {
    if (name === "" || name.length > MAX_NAME_CHARS)
        return {ok: false, message: "the file name is empty or too long"};
    // eslint-disable-next-line no-control-regex -- control characters are exactly what this rejects
    if (/[/\\\0]/.test(name) || name.startsWith(".") || name !== path.basename(name) || /[\u0000-\u001f]/.test(name))
        return {ok: false, message: `"${name}" is not a plain file name`};
    if (!name.toLowerCase().endsWith(".gguf"))
        return {ok: false, message: `"${name}" is not a .gguf file: only GGUF models can be opened`};
    return {ok: true, name};
}

function failure(status: number, code: string, message: string): UploadResult {
    return {status, body: {ok: false, error: {code, message}}};
}

export async function receiveUpload(request: http.IncomingMessage, response: http.ServerResponse, name: string, modelsDir: string): Promise<UploadResult> {
    const checked = checkUploadName(name);
    if (!checked.ok) {
        request.resume();
        return failure(400, "bad-name", checked.message);
    }
    await fs.mkdir(modelsDir, {recursive: true});

    const declared = Number(request.headers["content-length"] ?? NaN);
    if (Number.isFinite(declared)) {
        const free = await freeBytes(modelsDir);
        if (free != null && declared > free) {
            request.resume();
            return failure(507, "disk-full", `Not enough disk space for ${name}: it needs ${formatMiB(declared)}, ${formatMiB(free)} is free in ${modelsDir}.`);
        }
    }

    const target = path.join(modelsDir, checked.name);
    const temp = path.join(modelsDir, `.${checked.name}.${randomUUID().slice(0, 8)}.partial`);
    let aborted = false;
    request.on("aborted", () => {
        aborted = true;
    });
    response.on("close", () => {
        if (!response.writableFinished)
            aborted = true;
    });
    try {
        await pipeline(request, createWriteStream(temp, {flags: "wx"}));
        if (aborted || (Number.isFinite(declared) && (await fs.stat(temp)).size !== declared))
            throw Object.assign(new Error("the upload ended early"), {code: "ECONNRESET"});
        await fs.rename(temp, target);
        const {size} = await fs.stat(target);
        return {status: 200, body: {ok: true, result: {path: target, bytes: size}}};
    } catch (error) {
        await fs.rm(temp, {force: true});
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOSPC" || code === "EDQUOT")
            return failure(507, "disk-full", `The disk filled up while storing ${name}; the partial file was deleted. Free some space or type the model's path instead.`);
        if (aborted || code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE")
            return failure(400, "upload-aborted", `The upload of ${name} was interrupted; the partial file was deleted.`);
        return failure(500, "upload-failed", `Could not store ${name}: ${(error as Error).message}`);
    }
}

async function freeBytes(dir: string): Promise<number | null> {
    try {
        const stats = await fs.statfs(dir);
        return stats.bavail * stats.bsize;
    } catch {
        return null;
    }
}

function formatMiB(bytes: number): string {
    return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
