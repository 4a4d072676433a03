import {useEffect, useRef} from "react";
import uPlot from "uplot";
import {useChartColors} from "../../../../App/useChartColors";
import {durationAxis} from "../../../../format/durationAxis";
import "./LiveChart.css";

export type Series = {label: string; color: string; values: (number | null)[]};

/**
 * A uPlot line chart that updates in place as data arrives (no re-creation per point). `unit` is what the values are
 * in: milliseconds get the shared time axis (ms or s, as the values call for), other units are named as given;
 * `quantity` names the value axis ("TTFT").
 */
export function LiveChart({title, quantity, unit, x, series, testId}: {
    title: string; quantity: string; unit: "ms" | "tok/s"; x: number[]; series: Series[]; testId?: string;
}) {
    const host = useRef<HTMLDivElement>(null);
    const plot = useRef<uPlot | null>(null);
    const colors = useChartColors();
    const seriesKey = series.map((entry) => entry.label).join("|");

    useEffect(() => {
        const element = host.current;
        if (element == null)
            return;
        const axis = {stroke: colors.text, grid: {stroke: colors.grid, width: 1}, ticks: {stroke: colors.grid, width: 1}, font: "11px DejaVu Sans, sans-serif"};
        plot.current = new uPlot({
            width: Math.max(200, element.clientWidth),
            height: 220,
            legend: {show: true},
            cursor: {points: {size: 7}},
            scales: {x: {time: false, range: (_plot: uPlot, min: number, max: number) => [Math.min(min, 1) - 0.2, Math.max(max, 2) + 0.2]}},
            axes: [
                // replies are whole numbers: integer ticks only
                {...axis, label: "reply #", labelSize: 16, labelFont: "11px DejaVu Sans, sans-serif", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500],
                    values: (_plot: uPlot, ticks: number[]) => ticks.map((tick) => Number.isInteger(tick) ? String(tick) : "")},
                {...axis, labelSize: 16, labelFont: "11px DejaVu Sans, sans-serif", size: 56,
                    ...(unit === "ms" ? durationAxis(quantity) : {label: `${quantity} (${unit})`})}
            ],
            series: [
                {label: "reply #", value: (_plot: uPlot, value: number | null) => value == null ? "–" : String(value)},
                ...series.map((entry) => ({label: entry.label, stroke: entry.color, width: 2, points: {show: true, size: 6, fill: entry.color}, spanGaps: true}))
            ]
        }, [x, ...series.map((entry) => entry.values)] as uPlot.AlignedData, element);
        const observer = new ResizeObserver(() => plot.current?.setSize({width: Math.max(200, element.clientWidth), height: 220}));
        observer.observe(element);
        return () => {
            observer.disconnect();
            plot.current?.destroy();
            plot.current = null;
        };
        // the chart is rebuilt only when its set of series or the theme changes
        // eslint-disable-next-line react-hooks/exhaustive-deps
    }, [seriesKey, quantity, unit, colors]);

    useEffect(() => {
        plot.current?.setData([x, ...series.map((entry) => entry.values)] as uPlot.AlignedData);
    }, [x, series]);

    return (
        <section className="panel live-chart" data-testid={testId} data-points={x.length}>
            <h2>{title}</h2>
            <div ref={host} className="live-chart-plot"/>
        </section>
    );
}
