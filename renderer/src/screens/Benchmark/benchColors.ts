/** One colour per strategy, shared by the charts and tables of the Benchmark screen. */
const STRATEGY_COLORS: Record<string, string> = {
    cpu: "#a78bfa", layers: "#fbbf24", fit: "#f472b6", oato: "#2dd4bf", optimal: "#6ea8fe",
    "layers-tuned": "#fb923c", "fit-tuned": "#e879f9"
};

export function strategyColor(label: string): string {
    return STRATEGY_COLORS[label] ?? "#8d96aa";
}
