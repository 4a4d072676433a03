/**
 * The web origins a browser page may call the server from (CORS), as `tensorwise serve --cors-origin` and the Server
 * screen take them. Each is an exact origin, `http(s)://host[:port]` in the form a browser sends in its `Origin`
 * header (scheme and host in lower case, no default port, no path): requests are matched byte for byte against it, so
 * `http://localhost:5173.evil.com` or `http://LOCALHOST:5173` never pass for `http://localhost:5173`.
 *
 * A leaf: imports nothing, so the CLI, the host, the engine and the renderer can all use it.
 */

/** Origins in one allow-list. */
export const MAX_CORS_ORIGINS = 32;
/** One origin's length, in characters (a DNS name is at most 253, plus scheme and port). */
export const MAX_CORS_ORIGIN_LENGTH = 300;

/**
 * `text` as the origin a browser would send for it (`HTTP://LocalHost:5173` → `http://localhost:5173`), or the
 * sentence saying why it is not one: only http and https, no wildcard, no `null`, no path, query, fragment or user.
 */
export function canonicalCorsOrigin(text: string): {ok: true; origin: string} | {ok: false; message: string} {
    const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
    const bad = (why: string) => ({ok: false as const, message: `${shown} is not a web origin to allow: ${why}.`});
    if (text === "" || text.length > MAX_CORS_ORIGIN_LENGTH)
        return bad(`give 1 to ${MAX_CORS_ORIGIN_LENGTH} characters such as http://localhost:5173`);
    if (text.includes("*"))
        return bad("wildcards are not allowed; list each origin, such as http://localhost:5173");
    if (text.trim().toLowerCase() === "null")
        return bad("the \"null\" origin (files, sandboxed frames) is shared by every such page, so it cannot be allowed");
    let url: URL;
    try {
        url = new URL(text);
    } catch {
        return bad("write it as scheme://host[:port], such as http://localhost:5173");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
        return bad("only http:// and https:// origins can be allowed");
    if (url.username !== "" || url.password !== "" || !/^[a-z]+:\/\/[^/?#@]+\/?$/i.test(text))
        return bad("an origin is only scheme://host[:port], without a path, query, fragment or user name");
    return {ok: true, origin: url.origin};
}

/**
 * A list of origins in canonical form, each checked by {@link canonicalCorsOrigin}; the same origin twice (in any
 * spelling) or more than {@link MAX_CORS_ORIGINS} is refused. Throws one sentence.
 */
export function canonicalCorsOrigins(list: readonly string[]): string[] {
    if (list.length > MAX_CORS_ORIGINS)
        throw new Error(`At most ${MAX_CORS_ORIGINS} web origins can be allowed (got ${list.length}).`);
    const origins: string[] = [];
    for (const text of list) {
        const checked = canonicalCorsOrigin(text);
        if (!checked.ok)
            throw new Error(checked.message);
        if (origins.includes(checked.origin))
            throw new Error(`${checked.origin} is listed twice among the allowed web origins.`);
        origins.push(checked.origin);
    }
    return origins;
}
