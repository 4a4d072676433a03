import {useEffect, useState} from "react";

/** The colours a canvas chart draws its axes with, read from the theme's CSS variables (styles/theme.css). */
export type ChartColors = {
    /** Tick labels and axis titles. */
    text: string;
    /** Grid lines and tick marks. */
    grid: string;
};

function readChartColors(): ChartColors {
    const style = getComputedStyle(document.documentElement);
    const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
    return {text: read("--text-muted", "#8d96aa"), grid: read("--border", "#262d3b")};
}

/**
 * Axis colours for canvas charts (uPlot draws on a canvas, which CSS cannot restyle), re-read whenever useTheme.ts
 * switches `data-theme` on the document element, so a chart can rebuild in the new theme's colours.
 */
export function useChartColors(): ChartColors {
    const [colors, setColors] = useState(readChartColors);
    useEffect(() => {
        const observer = new MutationObserver(() => {
            const next = readChartColors();
            setColors((current) => current.text === next.text && current.grid === next.grid ? current : next);
        });
        observer.observe(document.documentElement, {attributes: true, attributeFilter: ["data-theme"]});
        return () => observer.disconnect();
    }, []);
    return colors;
}
