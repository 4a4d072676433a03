const known: Record<string, string> = {
    F32: "#94a3b8", F16: "#6ea8fe", BF16: "#818cf8", Q8_0: "#2dd4bf", Q6_K: "#34d399", Q5_K: "#a3e635", Q4_K: "#fbbf24",
    Q4_0: "#f59e0b", Q3_K: "#fb923c", Q2_K: "#f87171"
};

/** A stable colour per ggml type. */
export function quantColor(type: string): string {
    const upper = type.toUpperCase();
    if (known[upper] != null)
        return known[upper];
    let hash = 0;
    for (const char of upper)
        hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    return `hsl(${hash % 360} 65% 62%)`;
}
