import type uPlot from "uplot";
import {describe, expect, it} from "vitest";
import {durationAxis} from "./durationAxis";

/** Draws the axis as uPlot does: tick labels first, then the axis label. */
function draw(quantity: string, ticks: number[]): {labels: unknown; label: unknown} {
    const axis = durationAxis(quantity);
    const plot = {} as uPlot;
    const labels = typeof axis.values === "function" ? axis.values(plot, ticks, 1, 50, 1) : axis.values;
    const label = typeof axis.label === "function" ? axis.label(plot, 1, 1, 50) : axis.label;
    return {labels, label};
}

describe("durationAxis", () => {
    it("labels a TTFT axis of minutes in seconds and says so", () => {
        expect(draw("TTFT", [0, 200_000, 400_000, 600_000])).toEqual({labels: ["0", "200", "400", "600"], label: "TTFT (s)"});
    });

    it("labels an axis of short times in milliseconds and says so, following the data as it changes", () => {
        const axis = durationAxis("TPOT");
        const plot = {} as uPlot;
        const valuesOf = axis.values as (plot: uPlot, ticks: number[], ...rest: number[]) => string[];
        const labelOf = axis.label as (plot: uPlot, ...rest: number[]) => string;
        expect(valuesOf(plot, [0, 20, 40], 1, 50, 20)).toEqual(["0", "20", "40"]);
        expect(labelOf(plot, 1, 20, 50)).toBe("TPOT (ms)");
        expect(valuesOf(plot, [0, 30_000, 60_000], 1, 50, 30_000)).toEqual(["0", "30", "60"]);
        expect(labelOf(plot, 1, 30_000, 50)).toBe("TPOT (s)");
    });
});
