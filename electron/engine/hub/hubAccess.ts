/**
 * Where models are pulled from and with which credentials, read from the environment as the huggingface_hub tools
 * read it: `HF_ENDPOINT` (a mirror or a local server; defaults to {@link DEFAULT_HF_ENDPOINT}) and `HF_TOKEN` (sent as
 * `Authorization: Bearer`, for gated and private repositories).
 */
import {HubError} from "./HubError.js";

/** The Hugging Face Hub, where `HF_ENDPOINT` is not set. */
export const DEFAULT_HF_ENDPOINT = "https://huggingface.co";

/** An endpoint and the token for it. */
export type HubAccess = {
    /** Origin and optional path prefix, without a trailing slash. */
    readonly endpoint: string;
    /** Sent only to {@link endpoint}'s origin, never to another host (see {@link authHeaders}). */
    readonly token: string | null;
};

/** Reads `HF_ENDPOINT` and `HF_TOKEN`; a malformed endpoint is refused with a sentence. */
export function hubAccessFromEnv(env: NodeJS.ProcessEnv = process.env): HubAccess {
    const endpoint = checkEndpoint(env.HF_ENDPOINT == null || env.HF_ENDPOINT === "" ? DEFAULT_HF_ENDPOINT : env.HF_ENDPOINT, "HF_ENDPOINT");
    const token = env.HF_TOKEN == null || env.HF_TOKEN.trim() === "" ? null : env.HF_TOKEN.trim();
    // a token travels in a header: a line break in it would smuggle another header
    if (token != null && !/^[\x21-\x7e]{1,1024}$/.test(token))
        throw new HubError("HF_TOKEN is not a token: it must be 1 to 1024 printable ASCII characters without spaces.");
    return {endpoint, token};
}

/** An http(s) URL without credentials, query or fragment, returned without its trailing slash. */
export function checkEndpoint(text: string, what: string): string {
    let url: URL;
    try {
        url = new URL(text);
    } catch {
        throw new HubError(`${what} is not a URL: "${text.slice(0, 200)}".`);
    }
    if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "")
        throw new HubError(`${what} must be a plain http:// or https:// address without credentials, query or fragment: "${text.slice(0, 200)}".`);
    return url.href.replace(/\/+$/, "");
}

/** `Authorization: Bearer …` for a URL on the endpoint's own origin; nothing for any other host. */
export function authHeaders(access: HubAccess, url: string): Record<string, string> {
    return access.token != null && new URL(url).origin === new URL(access.endpoint).origin ? {Authorization: `Bearer ${access.token}`} : {};
}
