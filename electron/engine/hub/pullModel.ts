/**
 * Brings one quant of a repository into a models folder: each file (one, or every part of a split model) downloaded
 * into `<modelsDir>/.pull/` with resume and its sha256 checked (downloadFile.ts), a single-file model validated by our
 * GGUF validator, then linked into place (never over another file). What `tensorwise pull` and the app's "Get a model"
 * screen share; registering the model in a library is the caller's.
 */
import {createHash} from "node:crypto";
import {createReadStream, promises as fs} from "node:fs";
import path from "node:path";
import {GgufValidationError} from "../gguf/errors/GgufValidationError.js";
import {validateGgufOutOfProcess} from "../gguf/validateGgufOutOfProcess.js";
import {downloadFile, type DownloadProgress} from "./downloadFile.js";
import type {GgufQuant} from "./ggufQuants.js";
import type {HubAccess} from "./hubAccess.js";
import {HubError} from "./HubError.js";
import {resolveUrl, type RepoFile} from "./listRepoFiles.js";

/** Where partial downloads wait, inside the models folder (same disk, so the final link is atomic; a folder, so web
 * mode's clean-up of stale hidden upload files, receiveUpload.ts, leaves it alone). */
export const PARTIAL_DIR = ".pull";

/** One file brought into the models folder. */
export type PulledFile = {
    readonly path: string;
    readonly bytes: number;
    readonly sha256: string | null;
    readonly resumedFromBytes: number;
    readonly fetchedBytes: number;
    /** It was already there with the same size and sha256: nothing was fetched. */
    readonly existed: boolean;
};

/** Options of {@link pullModel}. */
export type PullModelOptions = {
    readonly access: HubAccess;
    readonly repo: string;
    readonly revision: string;
    readonly modelsDir: string;
    readonly stallMs?: number;
    readonly signal?: AbortSignal;
    readonly onProgress?: (file: string, progress: DownloadProgress) => void;
};

/** Downloads, checks and places every file of `quant`; the files in load order (part 1 first). */
export async function pullModel(quant: GgufQuant, options: PullModelOptions): Promise<PulledFile[]> {
    const saved: PulledFile[] = [];
    for (const [index, file] of quant.files.entries()) {
        const name = file.path.split("/").at(-1)!;
        const dest = path.join(options.modelsDir, name);
        if (await sameFileExists(dest, file)) {
            saved.push({path: dest, bytes: file.bytes, sha256: file.sha256, resumedFromBytes: file.bytes, fetchedBytes: 0, existed: true});
            continue;
        }
        const partial = path.join(options.modelsDir, PARTIAL_DIR, `${name}.${file.sha256?.slice(0, 16) ?? `${file.bytes}`}.partial`);
        const what = `${options.repo}: ${file.path}`;
        const result = await downloadFile({
            url: resolveUrl(options.access.endpoint, options.repo, options.revision, file.path), access: options.access, what,
            partialPath: partial, bytes: file.bytes, sha256: file.sha256, stallMs: options.stallMs, signal: options.signal,
            laterBytes: quant.files.slice(index + 1).reduce((sum, later) => sum + later.bytes, 0),
            onProgress: options.onProgress == null ? undefined : (p) => options.onProgress!(name, p)
        });
        if (quant.files.length === 1) await checkModel(partial, what);
        try {
            // link, then unlink: never replaces a file of the same name that appeared meanwhile
            await fs.link(partial, dest);
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "EEXIST")
                throw new HubError(`${dest} already exists with other content; the verified download stays in ${partial}: move the old file away and try again.`);
            throw error;
        }
        await fs.rm(partial, {force: true});
        saved.push({path: dest, bytes: file.bytes, sha256: file.sha256, ...result, existed: false});
    }
    return saved;
}

/** The downloaded file must pass our validator before it is a model: a file that fails is deleted. */
async function checkModel(partial: string, what: string): Promise<void> {
    try {
        await validateGgufOutOfProcess(partial, {timeoutMs: 30_000});
    } catch (error) {
        if (!(error instanceof GgufValidationError)) throw error;
        await fs.rm(partial, {force: true});
        throw new HubError(`${what} is not a model tensorwise can open (${error.message}); the download was deleted.`);
    }
}

/** A file already at `dest` is the same when its size and sha256 match (then nothing is fetched); another is refused. */
async function sameFileExists(dest: string, file: RepoFile): Promise<boolean> {
    const stat = await fs.stat(dest).catch(() => null);
    if (stat == null) return false;
    if (stat.size === file.bytes && file.sha256 != null) {
        const hash = createHash("sha256");
        for await (const chunk of createReadStream(dest)) hash.update(chunk as Buffer);
        if (hash.digest("hex") === file.sha256) return true;
    }
    throw new HubError(`${dest} already exists with other content; move it away or choose another folder.`);
}
