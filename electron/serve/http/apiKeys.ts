/**
 * The server's API keys: where they come from (a file, an environment variable, the `--api-key` flag), what a valid
 * key looks like, and which tenant (conversationKey.ts) a request's key belongs to. Several keys may be given, one per
 * client: each is its own tenant, so one client can never reach another's conversations.
 */
import {createHash, timingSafeEqual} from "node:crypto";
import type http from "node:http";
import {TEXT_LIMITS} from "../../contract/limits.js";
import {keyTenant, type Tenant} from "../common/conversationKey.js";
import {OpenAiError} from "../common/OpenAiError.js";

/** The environment variable that may hold the key(s) (whitespace-separated), out of sight of `ps`. */
export const API_KEY_ENV = "TENSORWISE_API_KEY";

/** Keys in a list: at most this many (one per client). */
export const MAX_API_KEYS = 256;

/** Why a key is not acceptable, or `null` for a good one: 1 to {@link TEXT_LIMITS.apiKey} visible ASCII characters. */
export function badApiKey(key: string): string | null {
    return key === "" || key.length > TEXT_LIMITS.apiKey || /[^\x21-\x7e]/.test(key)
        ? `must be 1 to ${TEXT_LIMITS.apiKey} visible ASCII characters without spaces` : null;
}

/**
 * The keys in a key file or the environment variable: separated by whitespace (one a line in a file), `#` starting a
 * comment line. Throws one sentence naming `source` and the line when a key is malformed, repeated, or none is there.
 */
export function parseApiKeys(text: string, source: string): string[] {
    const keys: string[] = [];
    text.split(/\r?\n/).forEach((line, index) => {
        if (line.trimStart().startsWith("#"))
            return;
        for (const key of line.split(/[ \t]+/).filter((part) => part !== "")) {
            const bad = badApiKey(key);
            if (bad != null)
                throw new Error(`${source}, line ${index + 1}: an API key ${bad}.`);
            if (keys.includes(key))
                throw new Error(`${source}, line ${index + 1}: this API key is listed twice; give each client its own key.`);
            keys.push(key);
        }
    });
    if (keys.length === 0)
        throw new Error(`${source} holds no API key (one key a line; lines starting with # are comments).`);
    if (keys.length > MAX_API_KEYS)
        throw new Error(`${source} holds ${keys.length} API keys; at most ${MAX_API_KEYS} are allowed.`);
    return keys;
}

/**
 * Which tenant a request's key belongs to. Every key is compared, always all of them and in constant time over
 * SHA-256 digests (so neither the position of a mismatch nor a key's length shows in the time taken).
 */
export class ApiKeyList {
    private readonly digests: {digest: Buffer; tenant: Tenant}[];

    constructor(keys: readonly string[]) {
        this.digests = keys.map((key) => ({digest: digest(key), tenant: keyTenant(key)}));
    }

    get size(): number {
        return this.digests.length;
    }

    /**
     * The tenant of the key sent as `Authorization: Bearer <key>` (the scheme in any letter case, RFC 7235 §2.1) or as
     * `X-Api-Key: <key>`; both may be sent when they carry the same key. Throws a 401 naming what was wrong.
     */
    tenantOf(headers: http.IncomingHttpHeaders): Tenant {
        const authorization = headers.authorization;
        const apiKeyHeader = headers["x-api-key"];
        if (authorization == null && apiKeyHeader == null)
            throw unauthorized("No API key was sent: send it as \"Authorization: Bearer <key>\".");
        let bearer: string | null = null;
        if (authorization != null) {
            bearer = /^bearer +([\x21-\x7e]+)$/i.exec(authorization)?.[1] ?? null;
            if (bearer == null)
                throw unauthorized("The Authorization header must be \"Bearer <key>\" (one key, no spaces in it).");
        }
        if (apiKeyHeader != null && (Array.isArray(apiKeyHeader) || (bearer != null && apiKeyHeader !== bearer)))
            throw unauthorized("The X-Api-Key header must be sent once, and carry the same key as the Authorization header when both are sent.");
        const given = digest(bearer ?? (apiKeyHeader as string));
        let found: Tenant | null = null;
        for (const {digest: known, tenant} of this.digests) {
            // no early exit: every key is compared whichever matches
            if (timingSafeEqual(given, known))
                found = tenant;
        }
        if (found == null)
            throw unauthorized("Incorrect API key provided: send one of the keys this server was started with as \"Authorization: Bearer <key>\".");
        return found;
    }
}

function digest(key: string): Buffer {
    return createHash("sha256").update(key).digest();
}

function unauthorized(message: string): OpenAiError {
    return new OpenAiError(401, message, "invalid_request_error", "invalid_api_key");
}
