/**
 * A repository's files from the hub's tree API (`GET {endpoint}/api/models/{repo}/tree/{revision}?recursive=true`,
 * answered as `[{type, path, size, lfs: {oid, size}}]`, further pages through `Link: <…>; rel="next"`). The answer is
 * untrusted: its size, entry count and every field are checked before anything uses them.
 */
import {hubFetch, type HubFetchOptions} from "./hubFetch.js";
import {HubError} from "./HubError.js";
import type {HubAccess} from "./hubAccess.js";

/** One file of a repository. */
export type RepoFile = {
    /** Path inside the repository (`/`-separated, no `.`/`..` segments). */
    readonly path: string;
    readonly bytes: number;
    /** The LFS object id: the file's sha256, hex. `null` for a file not stored in LFS (no checksum is published). */
    readonly sha256: string | null;
};

/** Bytes of one page of the listing read at most. */
export const MAX_LISTING_BYTES = 16 * 2 ** 20;
/** Pages followed at most. */
export const MAX_LISTING_PAGES = 20;
/** Files listed at most. */
export const MAX_REPO_FILES = 50_000;
/** Largest file size believed (1 PiB): past it, a listing is corrupt. */
const MAX_FILE_BYTES = 2 ** 50;

/** A repository id as the hub writes it: `owner/name`. */
export const REPO_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}\/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$/;

/** `{endpoint}/api/models/{repo}/tree/{revision}?recursive=true`. */
export function treeUrl(endpoint: string, repo: string, revision: string): string {
    return `${endpoint}/api/models/${repo}/tree/${encodeURIComponent(revision)}?recursive=true`;
}

/** `{endpoint}/{repo}/resolve/{revision}/{path}`. */
export function resolveUrl(endpoint: string, repo: string, revision: string, filePath: string): string {
    return `${endpoint}/${repo}/resolve/${encodeURIComponent(revision)}/${filePath.split("/").map(encodeURIComponent).join("/")}`;
}

/** Every file of `repo` at `revision`. */
export async function listRepoFiles(access: HubAccess, repo: string, revision: string,
    options: Omit<HubFetchOptions, "access" | "what"> = {}): Promise<RepoFile[]> {
    const files: RepoFile[] = [];
    let url: string | null = treeUrl(access.endpoint, repo, revision);
    const what = `the file list of ${repo} (revision ${revision})`;
    for (let page = 0; url != null; page++) {
        if (page >= MAX_LISTING_PAGES)
            throw new HubError(`${what}: more than ${MAX_LISTING_PAGES} pages; refusing to read on.`);
        let answer;
        try {
            answer = await hubFetch(url, {...options, access, what});
        } catch (error) {
            throw page === 0 && error instanceof HubError && error.status === 404 ? await whyNotFound(access, repo, revision, options) : error;
        }
        const chunks: Uint8Array[] = [];
        let bytes = 0;
        for await (const chunk of answer.readBody()) {
            bytes += chunk.byteLength;
            if (bytes > MAX_LISTING_BYTES) {
                answer.cancel();
                throw new HubError(`${what}: the answer is larger than ${MAX_LISTING_BYTES / 2 ** 20} MiB; refusing to read on.`);
            }
            chunks.push(chunk);
        }
        files.push(...parseTreePage(Buffer.concat(chunks).toString("utf8"), what));
        if (files.length > MAX_REPO_FILES)
            throw new HubError(`${what}: more than ${MAX_REPO_FILES} files; refusing to read on.`);
        url = nextPage(answer.response.headers.get("link"), access.endpoint);
    }
    return files;
}

/** `GET {endpoint}/api/models/{repo}` after the tree's 404: is the repository missing, or only the revision? */
async function whyNotFound(access: HubAccess, repo: string, revision: string, options: Omit<HubFetchOptions, "access" | "what">): Promise<HubError> {
    try {
        const answer = await hubFetch(`${access.endpoint}/api/models/${repo}`, {...options, access, what: repo});
        answer.cancel();
        return new HubError(`${repo} has no revision "${revision}" (no branch, tag or commit of that name).`, 404);
    } catch (error) {
        if (error instanceof HubError && error.status === 404)
            return new HubError(`${access.endpoint} has no model repository ${repo}${access.token == null ? " (or it is private: set HF_TOKEN)" : ""}.`, 404);
        throw error;
    }
}

/** The files of one page of the tree API's answer (directories skipped); a malformed answer is refused. */
export function parseTreePage(text: string, what: string): RepoFile[] {
    let entries: unknown;
    try {
        entries = JSON.parse(text);
    } catch {
        throw new HubError(`${what}: the server's answer is not JSON.`);
    }
    if (!Array.isArray(entries))
        throw new HubError(`${what}: the server's answer is not a list of files.`);
    const files: RepoFile[] = [];
    for (const [index, entry] of entries.entries()) {
        const bad = (why: string): HubError => new HubError(`${what}: entry ${index} of the server's answer ${why}.`);
        if (entry == null || typeof entry !== "object") throw bad("is not an object");
        const {type, path, size, lfs} = entry as Record<string, unknown>;
        if (type === "directory") continue;
        if (type !== "file") throw bad("is neither a file nor a directory");
        if (typeof path !== "string" || !isSafeRepoPath(path)) throw bad("has a path that is not a plain relative path");
        if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0 || size > MAX_FILE_BYTES) throw bad("has no valid size");
        let sha256: string | null = null;
        if (lfs != null) {
            const {oid, size: lfsSize} = lfs as Record<string, unknown>;
            if (typeof oid !== "string" || !/^[0-9a-f]{64}$/.test(oid)) throw bad("has an LFS object id that is not a sha256");
            if (lfsSize !== size) throw bad("has an LFS size that differs from its size");
            sha256 = oid;
        }
        files.push({path, bytes: size, sha256});
    }
    return files;
}

/** A path that stays inside the folder it is joined to: `/`-separated names, none empty, `.` or `..`, no control characters or backslashes. */
export function isSafeRepoPath(path: string): boolean {
    return path.length > 0 && path.length <= 1024 && !/[\p{Cc}\p{Cf}\\]/u.test(path) &&
        path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

/** The `rel="next"` URL of a `Link` header, only on the endpoint's own origin. */
function nextPage(link: string | null, endpoint: string): string | null {
    const match = link?.match(/<([^>]+)>\s*;\s*rel="?next"?/);
    if (match == null) return null;
    const next = new URL(match[1]!, endpoint);
    if (next.origin !== new URL(endpoint).origin)
        throw new HubError(`the file list's next page is on another host (${next.origin}); refusing to follow it.`);
    return next.href;
}
