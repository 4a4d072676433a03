import type uPlot from "uplot";
import {formatMsTicks} from "./format";

/**
 * The value axis of a chart of milliseconds (TTFT, TPOT, benchmark timings): tick labels from formatMsTicks and an
 * axis label naming `quantity` with the unit those ticks use ("TTFT (s)"), so every chart of times reads the same way.
 */
export function durationAxis(quantity: string): Pick<uPlot.Axis, "values" | "label"> {
    // uPlot computes the tick labels before it draws the axis label: the label shows the unit the labels were given in
    let unit: "ms" | "s" = "ms";
    return {
        values: (_plot: uPlot, ticks: number[]) => {
            const formatted = formatMsTicks(ticks);
            unit = formatted.unit;
            return formatted.labels;
        },
        label: () => `${quantity} (${unit})`
    };
}
