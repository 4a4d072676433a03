import {describe, expect, it} from "vitest";
import {permissionAllowed} from "./permissionAllowed.js";

describe("permissionAllowed", () => {
    it("lets our own page write text to the clipboard (the Copy buttons)", () => {
        expect(permissionAllowed("clipboard-sanitized-write", "app://tensorwise/index.html")).toBe(true);
        expect(permissionAllowed("clipboard-sanitized-write", "app://tensorwise")).toBe(true);
    });

    it("denies everything else, and the clipboard to any other origin", () => {
        for (const permission of ["clipboard-read", "media", "geolocation", "notifications", "openExternal", "fileSystem",
            "fullscreen", "hid", "usb", "serial", "deprecated-sync-clipboard-read", "unknown"])
            expect(permissionAllowed(permission, "app://tensorwise/index.html"), permission).toBe(false);
        for (const origin of ["https://example.com", "app://evil", "file:///", "", undefined])
            expect(permissionAllowed("clipboard-sanitized-write", origin), String(origin)).toBe(false);
    });
});
