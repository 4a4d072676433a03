/**
 * The web permissions our windows may have: writing plain text to the clipboard (the Copy buttons use
 * `navigator.clipboard.writeText`), from our own page only. Everything else is denied. Pure; no electron import.
 */
import {isAppUrl} from "./appUrl.js";

const ALLOWED_PERMISSIONS: ReadonlySet<string> = new Set(["clipboard-sanitized-write"]);

/** Whether `permission` asked for by `requestingUrl` (a URL or an origin) may be granted or reported as granted. */
export function permissionAllowed(permission: string, requestingUrl: string | undefined): boolean {
    return ALLOWED_PERMISSIONS.has(permission) && requestingUrl != null && isAppUrl(requestingUrl);
}
