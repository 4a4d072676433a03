import {describe, expect, it} from "vitest";
import {formatMs, formatMsRange, formatMsTicks} from "./format";

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

describe("formatMsTicks", () => {
    it("keeps milliseconds below 10 s, with the decimals the step needs", () => {
        expect(formatMsTicks([0, 2000, 4000, 6000, 8000])).toEqual({unit: "ms", labels: ["0", "2000", "4000", "6000", "8000"]});
        expect(formatMsTicks([0, 0.5, 1, 1.5])).toEqual({unit: "ms", labels: ["0.0", "0.5", "1.0", "1.5"]});
        expect(formatMsTicks([1.25, 1.5, 1.75])).toEqual({unit: "ms", labels: ["1.25", "1.50", "1.75"]});
        expect(formatMsTicks([9000, 9500, 9999])).toMatchObject({unit: "ms"});
    });

    it("turns to seconds from 10 s on: a TTFT axis of ten minutes reads 600, not 600,000", () => {
        expect(formatMsTicks([0, 200_000, 400_000, 600_000])).toEqual({unit: "s", labels: ["0", "200", "400", "600"]});
        expect(formatMsTicks([10_000])).toEqual({unit: "s", labels: ["10"]});
        expect(formatMsTicks([0, 2500, 5000, 7500, 10_000, 12_500])).toEqual({unit: "s", labels: ["0.0", "2.5", "5.0", "7.5", "10.0", "12.5"]});
        // negative ticks below a zero baseline count by their size
        expect(formatMsTicks([-20_000, 0, 20_000])).toEqual({unit: "s", labels: ["-20", "0", "20"]});
    });

    it("caps the decimals and leaves a tick that is not a number blank", () => {
        expect(formatMsTicks([0.0001, 0.0002]).labels).toEqual(["0.000", "0.000"]);
        expect(formatMsTicks([Number.NaN, 5])).toEqual({unit: "ms", labels: ["", "5"]});
        expect(formatMsTicks([])).toEqual({unit: "ms", labels: []});
    });
});

describe("formatMsRange", () => {
    it("says a range with one unit where both ends share it, else each with its own", () => {
        expect(formatMsRange(1200, 1500)).toBe("about 1.20–1.50 s");
        expect(formatMsRange(80, 95)).toBe("about 80–95 ms");
        expect(formatMsRange(950, 1200)).toBe("about 950 ms–1.20 s");
    });
});
