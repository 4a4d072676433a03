/**
 * Which links from the page (model output is untrusted text) may be offered to the user's browser, and how the offer
 * shows them. Pure; the confirmation dialog itself is in main.ts. No electron import.
 */

/** Longer URLs are not offered: a dialog cannot show them in full, and no answer needs one. */
export const MAX_EXTERNAL_URL_CHARS = 2048;

/** A link the user may be asked to open: `url` is what gets opened, `display` exactly what the dialog shows. */
export type ExternalLinkOffer = {url: string; display: string};

/**
 * The offer for `raw`, or `null` when it must not be opened outside the app at all: anything but http(s), URLs with
 * credentials (`https://bank.example@evil.example/` reads as the bank), and URLs too long to show in full.
 * The URL is normalised by the WHATWG parser, so the host is in punycode (`xn--…`, no look-alike letters) and every
 * non-ASCII or control character in path, query and fragment is percent-encoded; the opened URL is the displayed one.
 */
export function externalLinkOffer(raw: string): ExternalLinkOffer | null {
    let parsed: URL;
    try {
        parsed = new URL(raw);
    } catch {
        return null;
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
        return null;
    if (parsed.username !== "" || parsed.password !== "" || parsed.hostname === "")
        return null;
    const url = parsed.href;
    // the parser's output is ASCII; this guards the dialog text should that ever change
    if (url.length > MAX_EXTERNAL_URL_CHARS || !/^[\x21-\x7e]+$/.test(url))
        return null;
    return {url, display: url};
}
