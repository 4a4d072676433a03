import {describe, expect, it} from "vitest";
import {terminalSafe} from "./terminalSafe.js";

describe("terminalSafe", () => {
    it("neutralises escape sequences and control characters but keeps text, newlines and tabs", () => {
        expect(terminalSafe("ok\n\tfine")).toBe("ok\n\tfine");
        // eslint-disable-next-line no-control-regex -- asserting the escape characters are gone
        expect(terminalSafe("\u001b]0;pwned\u0007red\u001b[31m")).not.toMatch(/[\u001b\u0007]/);
        expect(terminalSafe("a\u009bb")).toBe("a\ufffdb");
        expect(terminalSafe("日本語 ✓")).toBe("日本語 ✓");
    });
});
