/** The allow-list of web origins as `tensorwise serve --cors-origin` takes it (no model needed). */
import {describe, expect, it} from "vitest";
import {main} from "../main.js";

describe("tensorwise serve --cors-origin", () => {
    it("tensorwise serve --cors-origin refuses wildcards, null, paths and non-http origins in one sentence, before loading", async () => {
        for (const [flag, message] of [
            ["*", /--cors-origin: "\*" is not a web origin to allow: wildcards are not allowed/],
            ["http://localhost:5173,null", /"null" origin .* cannot be allowed/],
            ["http://localhost:5173/app", /without a path, query, fragment or user name/],
            ["file:///tmp", /only http:\/\/ and https:\/\/ origins/],
            ["http://a.example,HTTP://A.example", /http:\/\/a\.example is listed twice/],
            ["localhost:5173", /only http:\/\/ and https:\/\/|write it as scheme/]
        ] as const) {
            const err: string[] = [];
            expect(await main(["serve", "missing.gguf", "--cors-origin", flag], {out: () => {}, err: (line) => err.push(line)}), flag).toBe(2);
            expect(err.join("\n"), flag).toMatch(message);
        }
    });
});
