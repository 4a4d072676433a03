/** A small, dependency-free SVG line chart (log or linear axes) for the self-contained HTML report. */

/** One line of a chart. */
export type ChartSeries = {
    readonly name: string;
    readonly color: string;
    readonly dashed?: boolean;
    readonly points: readonly {readonly x: number; readonly y: number}[];
};

/** Options of {@link lineChartSvg}. */
export type LineChartOptions = {
    readonly title: string;
    readonly xLabel: string;
    readonly yLabel: string;
    /** Defaults to `false`. */
    readonly logX?: boolean;
    /** Defaults to `false`. */
    readonly logY?: boolean;
    /** Tick labels for x (defaults to the distinct x values of the series). */
    readonly xTicks?: readonly {readonly value: number; readonly label: string}[];
    /** Defaults to 460 × 300. */
    readonly width?: number;
    readonly height?: number;
};

/** Escapes text for HTML/SVG. */
export function escapeHtml(text: string): string {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** Compact number: 1234 → "1.23k", 0.0123 → "0.0123". */
export function formatNumber(value: number): string {
    const abs = Math.abs(value);
    if (abs >= 1e6) return (value / 1e6).toPrecision(3) + "M";
    if (abs >= 1e4) return (value / 1e3).toPrecision(3) + "k";
    if (abs >= 100) return value.toFixed(0);
    if (abs >= 1) return value.toPrecision(3);
    return value.toPrecision(2);
}

/**
 * Round tick values inside [min, max]: on a log axis 1-2-5 per decade, else every whole 1…9 per decade, else (a range
 * inside one decade) the linear steps; never the raw ends of the range (a tick reads 2000, not 2097).
 */
export function niceTicks(min: number, max: number, log: boolean): number[] {
    if (log) {
        for (const mantissas of [[1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]]) {
            const ticks: number[] = [];
            for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++)
                for (const m of mantissas) {
                    const v = Number((m * 10 ** e).toPrecision(12));
                    if (v >= min * 0.999 && v <= max * 1.001) ticks.push(v);
                }
            if (ticks.length >= 2) return ticks;
        }
        return niceTicks(min, max, false).filter((v) => v > 0);
    }
    const span = max - min || Math.abs(max) || 1;
    const step = 10 ** Math.floor(Math.log10(span / 4));
    const nice = [1, 2, 2.5, 5, 10].map((m) => m * step).find((s) => span / s <= 6) ?? step * 10;
    const ticks: number[] = [];
    for (let v = Math.ceil(min / nice) * nice; v <= max + nice * 1e-9; v += nice) ticks.push(Number(v.toPrecision(10)));
    return ticks;
}

/** Renders a line chart with markers, grid, axis labels and a legend; every marker has a `<title>` tooltip. */
export function lineChartSvg(series: readonly ChartSeries[], options: LineChartOptions): string {
    const width = options.width ?? 460;
    const height = options.height ?? 300;
    const margin = {left: 58, right: 12, top: 30, bottom: 78};
    const plotW = width - margin.left - margin.right;
    const plotH = height - margin.top - margin.bottom;
    const all = series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y) &&
        (!options.logX || p.x > 0) && (!options.logY || p.y > 0));
    const head = `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" class="chart">` +
        `<text x="${width / 2}" y="18" class="chart-title" text-anchor="middle">${escapeHtml(options.title)}</text>`;
    if (all.length === 0)
        return head + `<text x="${width / 2}" y="${height / 2}" text-anchor="middle" class="chart-empty">no data</text></svg>`;

    const xs = all.map((p) => p.x);
    const ys = all.map((p) => p.y);
    let [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
    let [yMin, yMax] = [Math.min(...ys), Math.max(...ys)];
    if (xMin === xMax) { xMin = options.logX ? xMin / 2 : xMin - 1; xMax = options.logX ? xMax * 2 : xMax + 1; }
    if (options.logY) { yMin /= 1.25; yMax *= 1.25; } else { yMin = Math.min(0, yMin); yMax = yMax === yMin ? yMin + 1 : yMax * 1.08; }
    const tx = (x: number) => options.logX ? Math.log(x) : x;
    const ty = (y: number) => options.logY ? Math.log(y) : y;
    const px = (x: number) => margin.left + (tx(x) - tx(xMin)) / (tx(xMax) - tx(xMin)) * plotW;
    const py = (y: number) => margin.top + plotH - (ty(y) - ty(yMin)) / (ty(yMax) - ty(yMin)) * plotH;

    const parts: string[] = [head];
    for (const tick of niceTicks(yMin, yMax, options.logY ?? false)) {
        const y = py(tick).toFixed(1);
        parts.push(`<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${y}" y2="${y}" class="grid"/>`,
            `<text x="${margin.left - 6}" y="${y}" class="tick" text-anchor="end" dominant-baseline="middle">${formatNumber(tick)}</text>`);
    }
    const xTicks = options.xTicks ?? [...new Set(xs)].sort((a, b) => a - b).map((value) => ({value, label: formatNumber(value)}));
    for (const tick of xTicks) {
        const x = px(tick.value).toFixed(1);
        parts.push(`<line x1="${x}" x2="${x}" y1="${margin.top}" y2="${margin.top + plotH}" class="grid"/>`,
            `<text x="${x}" y="${margin.top + plotH + 15}" class="tick" text-anchor="middle">${escapeHtml(tick.label)}</text>`);
    }
    parts.push(`<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" class="frame"/>`,
        `<text x="${margin.left + plotW / 2}" y="${margin.top + plotH + 32}" class="axis-label" text-anchor="middle">${escapeHtml(options.xLabel)}</text>`,
        `<text transform="translate(14 ${margin.top + plotH / 2}) rotate(-90)" class="axis-label" text-anchor="middle">${escapeHtml(options.yLabel)}</text>`);

    for (const s of series) {
        const points = s.points.filter((p) => all.includes(p)).sort((a, b) => a.x - b.x);
        if (points.length === 0) continue;
        const d = points.map((p, i) => `${i === 0 ? "M" : "L"}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(" ");
        parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? " stroke-dasharray=\"5 3\"" : ""}/>`);
        for (const p of points)
            parts.push(`<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3.2" fill="${s.color}">` +
                `<title>${escapeHtml(`${s.name}: ${formatNumber(p.y)} at ${formatNumber(p.x)}`)}</title></circle>`);
    }
    // Legend below the x-axis label, wrapped into rows.
    let lx = margin.left;
    let ly = margin.top + plotH + 50;
    for (const s of series) {
        const w = 22 + s.name.length * 6.6 + 14;
        if (lx + w > width - margin.right) { lx = margin.left; ly += 15; }
        parts.push(`<line x1="${lx}" x2="${lx + 16}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2.5"${s.dashed ? " stroke-dasharray=\"5 3\"" : ""}/>`,
            `<text x="${lx + 20}" y="${ly}" class="legend" dominant-baseline="middle">${escapeHtml(s.name)}</text>`);
        lx += w;
    }
    parts.push("</svg>");
    return parts.join("");
}
