/** The renderer's origin in Electron, and the check every IPC sender and navigation must pass. No electron import. */
export const APP_ORIGIN = "app://tensorwise";

/** Whether `url` is a page of our own renderer (`app://tensorwise/…`). Custom-scheme origins are opaque ("null") in
 * the URL API, so scheme and host are compared instead. */
export function isAppUrl(url: string): boolean {
    try {
        const parsed = new URL(url);
        return parsed.protocol === "app:" && parsed.host === "tensorwise" && parsed.username === "" && parsed.password === "";
    } catch {
        return false;
    }
}
