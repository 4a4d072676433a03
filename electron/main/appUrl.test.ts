import {describe, expect, it} from "vitest";
import {isAppUrl} from "./appUrl.js";

describe("isAppUrl", () => {
    it("accepts our renderer's pages", () => {
        expect(isAppUrl("app://tensorwise/index.html")).toBe(true);
        expect(isAppUrl("app://tensorwise/")).toBe(true);
    });

    it("refuses everything else a frame could be showing", () => {
        for (const url of ["app://evil/index.html", "app://tensorwise.evil/", "http://tensorwise/", "file:///index.html",
            "https://example.com/", "app://user@tensorwise/", "about:blank", "data:text/html,x", "", "javascript:alert(1)"])
            expect(isAppUrl(url), url).toBe(false);
    });
});
