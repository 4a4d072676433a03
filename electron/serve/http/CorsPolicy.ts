/**
 * CORS for the server, from an allow-list of exact origins (contract/corsOrigins.ts). With an empty list nothing is
 * added: no browser page on another origin can read an answer or send a preflighted request (JSON bodies and API
 * keys always need one). With a list, a preflight (`OPTIONS` with `Access-Control-Request-Method`) from a listed
 * origin is answered 204 before any key is checked (browsers send preflights without credentials), one from any other
 * origin is refused 403 without CORS headers, and every other answer to a listed origin — errors and event streams
 * included — carries `Access-Control-Allow-Origin` with that origin. `Vary: Origin` is on every answer, so a cache
 * never hands one origin's answer to another.
 *
 * Written here rather than with the `cors` package: that package answers every preflight 204 (only leaving the headers
 * out for an origin it does not allow) and knows nothing of the DNS-rebinding `Host` check or the key check that must
 * run around it; the matching itself is one exact string comparison.
 */
import type http from "node:http";
import {canonicalCorsOrigins} from "../../contract/corsOrigins.js";
import {CONVERSATION_HEADER} from "../common/conversationKey.js";
import {OpenAiError} from "../common/OpenAiError.js";

/** Request headers a page may send: the keys (both schemes), JSON, Anthropic's version and beta headers, ours. */
export const CORS_ALLOWED_HEADERS = [
    "authorization", "content-type", "x-api-key", "anthropic-version", "anthropic-beta", "anthropic-dangerous-direct-browser-access",
    CONVERSATION_HEADER
] as const;
/** The `openai` and `@anthropic-ai/sdk` packages also send `X-Stainless-*` headers describing themselves. */
const SDK_HEADER_PATTERN = /^x-stainless-[a-z0-9-]{1,40}$/;
/** A preflight answer is kept this long by the browser (Chromium caps it at 7200 s). */
export const CORS_MAX_AGE_SECONDS = 600;
/** Response headers a page may read besides the safelisted ones (a 429's wait). */
const EXPOSED_HEADERS = "Retry-After";
const ALLOWED_METHODS = "GET, POST, OPTIONS";

export class CorsPolicy {
    private readonly origins: ReadonlySet<string>;

    /** Throws one sentence when an entry is not a web origin (contract/corsOrigins.ts). */
    constructor(origins: readonly string[]) {
        this.origins = new Set(canonicalCorsOrigins(origins));
    }

    get enabled(): boolean {
        return this.origins.size > 0;
    }

    /** The request's `Origin` when it is exactly one listed origin, else `null` (absent, repeated, `null`, unlisted). */
    allowedOrigin(request: http.IncomingMessage): string | null {
        const origin = request.headers.origin;
        return typeof origin === "string" && this.origins.has(origin) ? origin : null;
    }

    /** Whether the request is a CORS preflight (only with a list; without one `OPTIONS` is answered as before). */
    isPreflight(request: http.IncomingMessage): boolean {
        return this.enabled && request.method === "OPTIONS" && request.headers["access-control-request-method"] != null;
    }

    /** Sets the headers every answer to `request` carries (call before anything is written). */
    decorate(request: http.IncomingMessage, response: http.ServerResponse): void {
        if (!this.enabled)
            return;
        response.setHeader("Vary", "Origin");
        const origin = this.allowedOrigin(request);
        if (origin != null) {
            response.setHeader("Access-Control-Allow-Origin", origin);
            response.setHeader("Access-Control-Expose-Headers", EXPOSED_HEADERS);
        }
    }

    /**
     * Answers a preflight: 204 with what may be sent for a listed origin (the same for every path: it tells nothing
     * about the server), or a 403 error naming why for any other origin or a header not on the list.
     */
    answerPreflight(request: http.IncomingMessage, response: http.ServerResponse): void {
        const origin = this.allowedOrigin(request);
        if (origin == null)
            throw new OpenAiError(403, `This server does not allow requests from the web origin ${JSON.stringify(String(request.headers.origin ?? "none").slice(0, 100))}: ` +
                "add it to the server's allowed origins (--cors-origin).", "invalid_request_error", "origin_not_allowed");
        const requested = String(request.headers["access-control-request-headers"] ?? "").split(",").map((name) => name.trim().toLowerCase()).filter((name) => name !== "");
        const refused = requested.find((name) => !(CORS_ALLOWED_HEADERS as readonly string[]).includes(name) && !SDK_HEADER_PATTERN.test(name));
        if (refused != null)
            throw new OpenAiError(403, `This server does not accept the request header ${JSON.stringify(refused.slice(0, 60))} from web pages.`,
                "invalid_request_error", "header_not_allowed");
        const sdkHeaders = requested.filter((name) => SDK_HEADER_PATTERN.test(name));
        response.writeHead(204, {
            "Access-Control-Allow-Methods": ALLOWED_METHODS,
            "Access-Control-Allow-Headers": [...CORS_ALLOWED_HEADERS, ...new Set(sdkHeaders)].join(", "),
            "Access-Control-Max-Age": String(CORS_MAX_AGE_SECONDS)
        });
        response.end();
    }
}
