/**
 * HTTP for the model hub on node's own `fetch`, with what a pull needs around it: the token only for the endpoint's
 * origin, a stall timeout (no response, or no bytes, for `stallMs`) that ends with a sentence instead of hanging, and
 * status codes turned into sentences.
 */
import {authHeaders, type HubAccess} from "./hubAccess.js";
import {HubError} from "./HubError.js";

/** How long a server may send nothing (no response headers, or no body bytes) before the request is given up. */
export const DEFAULT_STALL_MS = 30_000;

/** Options of {@link hubFetch}. */
export type HubFetchOptions = {
    readonly access: HubAccess;
    /** What the request is for, in words ("the file list of org/repo"), for the error sentences. */
    readonly what: string;
    readonly headers?: Record<string, string>;
    /** Defaults to {@link DEFAULT_STALL_MS}. */
    readonly stallMs?: number;
    readonly signal?: AbortSignal;
    /** Said after a stall (a download's "run the same command again to resume"). Defaults to nothing. */
    readonly afterStall?: string;
};

/** A response whose body is read through {@link readBody}, which keeps the stall timeout. */
export type HubResponse = {
    readonly response: Response;
    /** The body in chunks; rejects with a stall sentence when no chunk comes for `stallMs`, or when aborted. */
    readBody(): AsyncGenerator<Uint8Array>;
    /** Stops the transfer (the rest of the body is not read). */
    cancel(): void;
};

/**
 * GET `url`. Resolves for 2xx answers; rejects with a {@link HubError} sentence for the rest (401/403: gated or
 * private; 404: not there), for a stall, and for a refused connection; rejects with the signal's reason when aborted.
 */
export async function hubFetch(url: string, options: HubFetchOptions): Promise<HubResponse> {
    const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
    const controller = new AbortController();
    let stalled = false;
    const onAbort = (): void => controller.abort(options.signal?.reason);
    options.signal?.throwIfAborted();
    options.signal?.addEventListener("abort", onAbort, {once: true});
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
        clearTimeout(timer);
        timer = setTimeout(() => {
            stalled = true;
            controller.abort(new HubError(stallSentence(options, stallMs)));
        }, stallMs);
    };
    const done = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
    };
    arm();
    let response: Response;
    try {
        response = await fetch(url, {headers: {...options.headers, ...authHeaders(options.access, url)}, signal: controller.signal, redirect: "follow"});
    } catch (error) {
        done();
        throw failure(error, stalled, options, url);
    }
    if (!response.ok) {
        done();
        await response.body?.cancel().catch(() => {});
        throw statusError(response.status, options.what, options.access);
    }
    return {
        response,
        cancel: () => {
            done();
            controller.abort(new HubError(`${options.what}: cancelled`));
        },
        async *readBody() {
            const reader = response.body?.getReader();
            if (reader == null) {
                done();
                return;
            }
            try {
                for (;;) {
                    arm();
                    const {value, done: ended} = await reader.read();
                    if (ended) return;
                    yield value;
                }
            } catch (error) {
                throw failure(error, stalled, options, url);
            } finally {
                done();
                reader.releaseLock();
            }
        }
    };
}

function stallSentence(options: HubFetchOptions, stallMs: number): string {
    return `${options.what}: the server sent nothing for ${Math.round(stallMs / 1000)} s, so tensorwise gave up${options.afterStall != null ? ` ${options.afterStall}` : ""}.`;
}

function failure(error: unknown, stalled: boolean, options: HubFetchOptions, url: string): unknown {
    if (options.signal?.aborted === true) return options.signal.reason;
    if (stalled) return new HubError(stallSentence(options, options.stallMs ?? DEFAULT_STALL_MS));
    if (error instanceof HubError) return error;
    const cause = (error as {cause?: {code?: string; message?: string}}).cause;
    return new HubError(`${options.what}: cannot reach ${new URL(url).origin} (${cause?.code ?? cause?.message ?? String(error)}).`);
}

function statusError(status: number, what: string, access: HubAccess): HubError {
    if (status === 401 || status === 403)
        return new HubError(access.token == null
            ? `${what}: the server refused access (HTTP ${status}); the repository is gated or private: set HF_TOKEN to a token that may read it.`
            : `${what}: the server refused access with this HF_TOKEN (HTTP ${status}); accept the model's terms on its page, or use a token that may read it.`, status);
    if (status === 404)
        return new HubError(`${what}: not found (HTTP 404); check the repository name, the revision and the file name.`, status);
    if (status === 416)
        return new HubError(`${what}: the server refused the byte range asked for (HTTP 416).`, status);
    if (status === 429)
        return new HubError(`${what}: the server asks to slow down (HTTP 429); try again in a minute.`, status);
    return new HubError(`${what}: the server answered HTTP ${status}.`, status);
}
