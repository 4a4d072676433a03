import {useEffect, useRef} from "react";
import uPlot from "uplot";
import {useChartColors} from "../../../../App/useChartColors";
import {durationAxis} from "../../../../format/durationAxis";
import {formatMs} from "../../../../format/format";
import "./BenchChart.css";

export type BenchSeries = {label: string; color: string; dashed: boolean; values: (number | null)[]};

const FONT = "11px DejaVu Sans, sans-serif";
const HEIGHT = 230;

/**
 * Measured milliseconds against a token count (prompt or generation length), one line per strategy, on a log₂ x axis
 * like the paper's figures. Rebuilt when its set of series changes, updated in place otherwise.
 */
export function BenchChart({title, xLabel, x, series, testId}: {title: string; xLabel: string; x: number[]; series: BenchSeries[]; testId: string}) {
    const host = useRef<HTMLDivElement>(null);
    const plot = useRef<uPlot | null>(null);
    const colors = useChartColors();
    const key = series.map((entry) => `${entry.label}:${entry.color}:${entry.dashed}`).join("|");

    useEffect(() => {
        const element = host.current;
        if (element == null)
            return;
        const axis = {stroke: colors.text, grid: {stroke: colors.grid, width: 1}, ticks: {stroke: colors.grid, width: 1}, font: FONT, labelFont: FONT, labelSize: 16};
        plot.current = new uPlot({
            width: Math.max(220, element.clientWidth),
            height: HEIGHT,
            legend: {show: true},
            cursor: {points: {size: 7}},
            scales: {x: {time: false, distr: 3, log: 2}, y: {range: (_plot: uPlot, _min: number, max: number) => [0, max > 0 ? max * 1.1 : 1]}},
            axes: [
                {...axis, label: xLabel, values: (_plot: uPlot, ticks: number[]) => ticks.map((tick) => Number.isInteger(tick) ? String(tick) : "")},
                {...axis, size: 56, ...durationAxis("time")}
            ],
            series: [
                {label: xLabel, value: (_plot: uPlot, value: number | null) => value == null ? "–" : String(value)},
                ...series.map((entry) => ({
                    label: entry.label, stroke: entry.color, width: 2, dash: entry.dashed ? [6, 4] : undefined, spanGaps: true,
                    points: {show: true, size: 6, fill: entry.color},
                    value: (_plot: uPlot, value: number | null) => value == null ? "–" : formatMs(value)
                }))
            ]
        }, [x, ...series.map((entry) => entry.values)] as uPlot.AlignedData, element);
        const observer = new ResizeObserver(() => plot.current?.setSize({width: Math.max(220, element.clientWidth), height: HEIGHT}));
        observer.observe(element);
        return () => {
            observer.disconnect();
            plot.current?.destroy();
            plot.current = null;
        };
        // rebuilt only when the set of series or the theme changes
        // eslint-disable-next-line react-hooks/exhaustive-deps
    }, [key, xLabel, colors]);

    useEffect(() => {
        plot.current?.setData([x, ...series.map((entry) => entry.values)] as uPlot.AlignedData);
    }, [x, series]);

    return (
        <section className="panel bench-chart" data-testid={testId} data-points={x.length} data-series={series.length}>
            <h2>{title}</h2>
            {x.length === 0 ? <div className="faint bench-chart-empty">No measurements yet.</div> : null}
            <div ref={host} className="bench-chart-plot" hidden={x.length === 0}/>
        </section>
    );
}
