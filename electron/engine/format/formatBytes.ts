/** `1536` → `"1.50 KiB"`; binary units, as llama.cpp prints them. */
export function formatBytes(bytes: number): string {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let value = bytes;
    let unit = 0;
    while (Math.abs(value) >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    return unit === 0 ? `${value} B` : `${value.toFixed(2)} ${units[unit]}`;
}

/** Milliseconds with sensible precision, or "—" for a missing value. */
export function formatMs(ms: number | null): string {
    if (ms == null || !Number.isFinite(ms))
        return "—";
    return ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(2)} ms`;
}

/** Renders rows as an aligned text table (first row = header). */
export function formatTable(rows: readonly (readonly string[])[]): string {
    const widths: number[] = [];
    for (const row of rows)
        row.forEach((cell, index) => {
            widths[index] = Math.max(widths[index] ?? 0, cell.length);
        });
    return rows
        .map((row) => row.map((cell, index) => (index === 0 ? cell.padEnd(widths[index] ?? 0) : cell.padStart(widths[index] ?? 0))).join("  "))
        .join("\n");
}
