import {describe, expect, it} from "vitest";
import {formatMs} from "./format";

describe("formatMs", () => {
    it("shows milliseconds below one second and seconds with three significant digits above", () => {
        expect(formatMs(2.345)).toBe("2.3 ms");
        expect(formatMs(42.4)).toBe("42 ms");
        expect(formatMs(999.4)).toBe("999 ms");
        expect(formatMs(999.7)).toBe("1.00 s");
        expect(formatMs(1234)).toBe("1.23 s");
        expect(formatMs(9876)).toBe("9.88 s");
        expect(formatMs(12_400)).toBe("12.4 s");
        expect(formatMs(184_800)).toBe("185 s");
        expect(formatMs(1_234_567)).toBe("1235 s");
        expect(formatMs(null)).toBe("—");
    });
});
