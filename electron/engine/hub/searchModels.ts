/**
 * GGUF repositories on the hub whose name matches a text: `GET {endpoint}/api/models?search=…&filter=gguf&sort=downloads`
 * (the Hub's model search, as its web page uses it). The answer is untrusted and checked entry by entry.
 */
import type {HubSearchResult} from "../../contract/hub.js";
import type {HubAccess} from "./hubAccess.js";
import {hubFetch} from "./hubFetch.js";
import {HubError} from "./HubError.js";
import {REPO_ID_PATTERN} from "./listRepoFiles.js";

/** Results asked for. */
export const SEARCH_LIMIT = 30;
/** Bytes of the answer read at most. */
const MAX_SEARCH_BYTES = 4 * 2 ** 20;

/** The repositories matching `query`, most downloaded first. */
export async function searchModels(access: HubAccess, query: string, options: {stallMs?: number; signal?: AbortSignal} = {}): Promise<HubSearchResult[]> {
    const url = `${access.endpoint}/api/models?search=${encodeURIComponent(query)}&filter=gguf&sort=downloads&direction=-1&limit=${SEARCH_LIMIT}`;
    const what = `the search for "${query}"`;
    const answer = await hubFetch(url, {...options, access, what});
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    for await (const chunk of answer.readBody()) {
        bytes += chunk.byteLength;
        if (bytes > MAX_SEARCH_BYTES) {
            answer.cancel();
            throw new HubError(`${what}: the answer is larger than ${MAX_SEARCH_BYTES / 2 ** 20} MiB; refusing to read on.`);
        }
        chunks.push(chunk);
    }
    let entries: unknown;
    try {
        entries = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
        throw new HubError(`${what}: the server's answer is not JSON.`);
    }
    if (!Array.isArray(entries)) throw new HubError(`${what}: the server's answer is not a list of models.`);
    const count = (value: unknown): number | null => typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
    const results: HubSearchResult[] = [];
    for (const entry of entries.slice(0, SEARCH_LIMIT)) {
        const {id, modelId, downloads, likes} = (entry ?? {}) as Record<string, unknown>;
        const name = typeof id === "string" ? id : modelId;
        // an entry that is not a plain owner/name is left out: it could not be pulled anyway
        if (typeof name !== "string" || !REPO_ID_PATTERN.test(name)) continue;
        results.push({id: name, downloads: count(downloads), likes: count(likes)});
    }
    return results;
}
