/** Speed of one generation, from engine-side timestamps (never from UI updates). */
export type GenerationTiming = {
    promptTokens: number;
    generatedTokens: number;
    /** Time to first token: from the request to the first generated token (prompt processing + one decode step). */
    ttftMs: number;
    /** Time per output token after the first (mean decode step), or `null` when fewer than two tokens came. */
    tpotMs: number | null;
    totalMs: number;
};

/** Collects token timestamps and turns them into a {@link GenerationTiming}. */
export class TokenClock {
    private readonly started = performance.now();
    private first: number | null = null;
    private last: number | null = null;
    private count = 0;

    /** Marks `n` tokens arriving now (or at `at`, a `performance.now()` time); returns ms since the request started. */
    tick(n = 1, at?: number): number {
        const now = at ?? performance.now();
        if (n <= 0)
            return now - this.started;
        if (this.first == null) {
            this.first = now;
            this.count = n;
        } else
            this.count += n;
        this.last = now;
        return now - this.started;
    }

    get tokens(): number {
        return this.count;
    }

    timing(promptTokens: number): GenerationTiming {
        const end = performance.now();
        const ttftMs = this.first == null ? end - this.started : this.first - this.started;
        const tpotMs = this.first != null && this.last != null && this.count > 1
            ? (this.last - this.first) / (this.count - 1)
            : null;
        return {promptTokens, generatedTokens: this.count, ttftMs, tpotMs, totalMs: end - this.started};
    }
}
