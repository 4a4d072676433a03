/** Number formatting shared by the screens. */

export function formatBytes(bytes: number | null | undefined): string {
    if (bytes == null || !Number.isFinite(bytes))
        return "—";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let value = Math.abs(bytes);
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    const digits = unit === 0 ? 0 : value >= 100 ? 0 : value >= 10 ? 1 : 2;
    return `${bytes < 0 ? "-" : ""}${value.toFixed(digits)} ${units[unit]}`;
}

export function formatCount(count: number | null | undefined): string {
    if (count == null || !Number.isFinite(count))
        return "—";
    if (count >= 1e9)
        return `${(count / 1e9).toFixed(2)} B`;
    if (count >= 1e6)
        return `${(count / 1e6).toFixed(1)} M`;
    if (count >= 1e3)
        return `${(count / 1e3).toFixed(1)} K`;
    return String(count);
}

/**
 * A duration for people, one rule everywhere: milliseconds below one second (one decimal below 10 ms), otherwise
 * seconds with three significant digits (1.23 s, 12.3 s, 123 s; whole seconds from 1000 s).
 */
export function formatMs(ms: number | null | undefined): string {
    if (ms == null || !Number.isFinite(ms))
        return "—";
    const rounded = Number(ms.toPrecision(3));
    if (rounded < 1000)
        return ms < 9.95 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
    const seconds = ms / 1000;
    return seconds >= 999.5 ? `${Math.round(seconds)} s` : `${Number(seconds.toPrecision(3)).toPrecision(3)} s`;
}

/**
 * A predicted range for people: "about 1.2–1.5 s", "about 80–95 ms" (one unit where both ends share it, else each
 * with its own: "about 950 ms–1.2 s").
 */
export function formatMsRange(lowMs: number, highMs: number): string {
    const low = formatMs(lowMs);
    const high = formatMs(highMs);
    const unit = (text: string) => text.slice(text.lastIndexOf(" ") + 1);
    return unit(low) === unit(high) ? `about ${low.slice(0, low.lastIndexOf(" "))}–${high}` : `about ${low}–${high}`;
}

/** Tokens per second from a time per output token. */
export function tokensPerSecond(tpotMs: number | null | undefined): number | null {
    return tpotMs == null || tpotMs <= 0 ? null : 1000 / tpotMs;
}

export function formatRate(perSecond: number | null): string {
    return perSecond == null ? "—" : `${perSecond >= 100 ? perSecond.toFixed(0) : perSecond.toFixed(1)} tok/s`;
}

export function formatRelativeTime(at: number, now = Date.now()): string {
    const seconds = Math.max(0, Math.round((now - at) / 1000));
    if (seconds < 60)
        return "just now";
    if (seconds < 3600)
        return `${Math.floor(seconds / 60)} min ago`;
    if (seconds < 86_400)
        return `${Math.floor(seconds / 3600)} h ago`;
    return new Date(at).toLocaleDateString();
}

/** Where a time axis turns from milliseconds to seconds: from 10 s on, "12 s" reads better than "12,000 ms". */
export const AXIS_SECONDS_FROM_MS = 10_000;

/** The most decimals a tick label gets (a step finer than 1 ms, or 1 µs of a second, is not worth telling apart). */
const MAX_TICK_DECIMALS = 3;

/**
 * Labels for the ticks of an axis whose values are milliseconds, all in one unit: ms while the largest tick is below
 * AXIS_SECONDS_FROM_MS, s from there on; with the fewest decimals that tell the ticks apart and no digit grouping.
 * The unit goes in the axis label (see durationAxis.ts).
 */
export function formatMsTicks(ticks: readonly number[]): {unit: "ms" | "s"; labels: string[]} {
    const largest = Math.max(0, ...ticks.filter(Number.isFinite).map(Math.abs));
    const unit = largest >= AXIS_SECONDS_FROM_MS ? "s" : "ms";
    const values = ticks.map((tick) => unit === "s" ? tick / 1000 : tick);
    let decimals = 0;
    while (decimals < MAX_TICK_DECIMALS &&
        values.some((value) => Number.isFinite(value) && Math.abs(value - Number(value.toFixed(decimals))) > 1e-9 * Math.max(1, Math.abs(value))))
        decimals++;
    return {unit, labels: values.map((value) => Number.isFinite(value) ? value.toFixed(decimals) : "")};
}
