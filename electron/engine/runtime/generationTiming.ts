import type {GenerationTiming} from "../../contract/timing.js";

/** Collects token timestamps and turns them into a {@link GenerationTiming}. */
export class TokenClock {
    /** `performance.now()` when the request started. */
    readonly started = performance.now();
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
