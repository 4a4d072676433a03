/**
 * What `tensorwise pull` was asked for: `owner/name[:QUANT]`, or a hub URL — `{origin}/{owner}/{name}` or
 * `{origin}/{owner}/{name}/(resolve|blob)/{revision}/{path}` — whose origin becomes the endpoint (the token is then
 * only sent if it is `HF_ENDPOINT`'s origin, see hubAccess.ts).
 */
import {checkEndpoint, type HubAccess} from "./hubAccess.js";
import {HubError} from "./HubError.js";
import {isSafeRepoPath, REPO_ID_PATTERN} from "./listRepoFiles.js";

/** A parsed target. */
export type PullTarget = {
    readonly access: HubAccess;
    readonly repo: string;
    /** From a URL; `null` for the `--revision` flag or `main`. */
    readonly revision: string | null;
    /** `:QUANT`; `null` when none was named. */
    readonly quant: string | null;
    /** A file named by URL; `null` otherwise. */
    readonly file: string | null;
};

/** Revision names accepted: branch, tag or commit names (`refs/pr/1` included), no `..`. */
export function checkRevision(revision: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,199}$/.test(revision) || revision.includes(".."))
        throw new HubError(`"${revision.slice(0, 200)}" is not a revision name (a branch, tag or commit).`);
    return revision;
}

/** Parses `text` with `access` from the environment. */
export function parsePullTarget(text: string, access: HubAccess): PullTarget {
    if (/^https?:\/\//i.test(text)) {
        const url = new URL(checkEndpoint(text, "the model URL"));
        const parts = url.pathname.split("/").filter((p) => p !== "").map(decodeURIComponent);
        const repo = parts.slice(0, 2).join("/");
        if (!REPO_ID_PATTERN.test(repo) || (parts.length !== 2 && (parts.length < 5 || (parts[2] !== "resolve" && parts[2] !== "blob"))))
            throw new HubError(`${text.slice(0, 200)} is not a model URL: expected ${url.origin}/owner/name or ${url.origin}/owner/name/resolve/revision/file.gguf.`);
        const sameHub = url.origin === new URL(access.endpoint).origin;
        const endpointAccess: HubAccess = {endpoint: url.origin, token: sameHub ? access.token : null};
        if (parts.length === 2) return {access: endpointAccess, repo, revision: null, quant: null, file: null};
        const file = parts.slice(4).join("/");
        if (!isSafeRepoPath(file) || !file.toLowerCase().endsWith(".gguf"))
            throw new HubError(`${text.slice(0, 200)} does not name a .gguf file.`);
        return {access: endpointAccess, repo, revision: checkRevision(parts[3]!), quant: null, file};
    }
    const colon = text.indexOf(":");
    const repo = colon < 0 ? text : text.slice(0, colon);
    const quant = colon < 0 ? null : text.slice(colon + 1);
    if (!REPO_ID_PATTERN.test(repo))
        throw new HubError(`"${text.slice(0, 200)}" is not a model: give owner/name, owner/name:QUANT (e.g. Q4_K_M) or a URL.`);
    if (quant != null && !/^[A-Za-z0-9_.-]{1,64}$/.test(quant))
        throw new HubError(`"${quant.slice(0, 64)}" is not a quant name (letters, digits and _ such as Q4_K_M).`);
    return {access, repo, revision: null, quant, file: null};
}
