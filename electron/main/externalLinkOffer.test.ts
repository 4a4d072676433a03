import {describe, expect, it} from "vitest";
import {externalLinkOffer, MAX_EXTERNAL_URL_CHARS} from "./externalLinkOffer.js";

describe("externalLinkOffer", () => {
    it("offers http and https links, opening exactly what it shows", () => {
        expect(externalLinkOffer("https://example.com/docs?q=1#top")).toEqual({url: "https://example.com/docs?q=1#top", display: "https://example.com/docs?q=1#top"});
        expect(externalLinkOffer("HTTP://Example.COM")).toEqual({url: "http://example.com/", display: "http://example.com/"});
    });

    it("never offers other schemes", () => {
        for (const url of ["file:///etc/passwd", "javascript:alert(1)", "data:text/html,<b>x</b>", "app://tensorwise/index.html",
            "ftp://example.com/", "mailto:a@example.com", "ms-settings:privacy", "smb://host/share", "vscode://file/x", "about:blank",
            "not a url", "", "//example.com/"])
            expect(externalLinkOffer(url), url).toBeNull();
    });

    it("shows an internationalised host in punycode, so a look-alike cannot pass for the real site", () => {
        // Cyrillic "а" (U+0430) in place of the Latin "a"
        const offer = externalLinkOffer("https://ex\u0430mple.com/login");
        expect(offer?.display).toBe("https://xn--exmple-4nf.com/login");
        expect(offer?.url).toBe(offer?.display);
    });

    it("shows the whole URL in ASCII: control, bidi and non-ASCII characters in the path are percent-encoded", () => {
        const offer = externalLinkOffer("https://example.com/\u202Egpj.exe?name=\u00e9t\u00e9#\u0000x");
        expect(offer?.display).toBe("https://example.com/%E2%80%AEgpj.exe?name=%C3%A9t%C3%A9#%00x");
    });

    it("refuses URLs with credentials, which make one site read as another", () => {
        expect(externalLinkOffer("https://bank.example.com@evil.example/")).toBeNull();
        expect(externalLinkOffer("https://user:pass@example.com/")).toBeNull();
    });

    it("refuses URLs too long to show in full", () => {
        const base = "https://example.com/";
        expect(externalLinkOffer(base + "a".repeat(MAX_EXTERNAL_URL_CHARS - base.length))).not.toBeNull();
        expect(externalLinkOffer(base + "a".repeat(MAX_EXTERNAL_URL_CHARS - base.length + 1))).toBeNull();
    });
});
