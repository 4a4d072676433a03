/**
 * The time cap of the planner-regret benchmark. Without one, a brute force over llama.cpp's flags on a slow GPU spends
 * most of its time finishing configurations that lost long ago (on llvmpipe one prompt can take minutes where the best
 * configuration takes a second). The rule: once a cell has a best median, a configuration is stopped as soon as ONE of
 * its phases — the warm-up run, or one timed repetition — has run longer than `factor` × that best median (+ a slack
 * for the warm-up, which also pays one-time costs such as pipeline compilation). It is then recorded as "pruned" with
 * the time it had spent, a lower bound on its time. A repetition that long makes it at least `factor` × slower in that
 * repetition; with the default factor of 2 it would need its other repetitions to run faster than the best to win.
 *
 * Phases are read from llama-bench's `--progress` lines on stderr (source: tools/llama-bench/llama-bench.cpp main:
 * "benchmark i/N: starting", "warmup prompt run", "warmup generation run", "prompt run i/r", "generation run i/r").
 */
import type {RegretCell} from "./regretConfig.js";

/** The cap's parameters. */
export type PruneOptions = {
    /** Stop a phase after this many times the best median. Defaults to {@link DEFAULT_PRUNE_FACTOR}. */
    readonly factor?: number;
    /** Added to the warm-up's cap (one-time costs). Defaults to {@link DEFAULT_WARMUP_SLACK_MS}. */
    readonly warmupSlackMs?: number;
    /** Loading the model and creating the context (before the warm-up). Defaults to {@link DEFAULT_LOAD_LIMIT_MS}. */
    readonly loadLimitMs?: number;
    /** A cap for every phase while the cell has no best yet. Defaults to {@link DEFAULT_UNBOUNDED_PHASE_MS}. */
    readonly unboundedPhaseMs?: number;
    /**
     * No phase is cut shorter than this: the cap is checked every few tens of ms from pipe timestamps, and a sub-ms best
     * (a tiny model) would otherwise prune on scheduler jitter. Defaults to {@link DEFAULT_MIN_PHASE_LIMIT_MS}.
     */
    readonly minPhaseLimitMs?: number;
};

export const DEFAULT_PRUNE_FACTOR = 2;
export const DEFAULT_WARMUP_SLACK_MS = 2000;
export const DEFAULT_LOAD_LIMIT_MS = 300_000;
export const DEFAULT_UNBOUNDED_PHASE_MS = 600_000;
export const DEFAULT_MIN_PHASE_LIMIT_MS = 250;

/** What llama-bench is doing, from its progress lines; `done` once it printed its results (freeing and exiting). */
export type BenchPhase = "load" | "warmup" | "run" | "done";

/** The phase a progress line starts, or `null` for other lines. */
export function phaseOfLine(line: string): BenchPhase | null {
    const m = /^llama-bench: benchmark \d+\/\d+: (starting|warmup (?:prompt|generation) run|(?:prompt|generation) run \d+\/\d+|depth run.*)$/.exec(line.trim());
    if (m == null) return null;
    const what = m[1]!;
    if (what === "starting") return "load";
    if (what.startsWith("warmup")) return "warmup";
    return "run";
}

/**
 * How long a phase may last: a timed repetition `factor` × the best whole-run time (the prompt for ttft, every
 * generated token for tpot); the warm-up — the whole prompt for ttft, ONE token for tpot — `factor` × its share plus
 * the slack; loading its own limit. `bestMs` is the best median per cell: whole prompt (ttft), per token (tpot).
 */
export function phaseLimitMs(phase: BenchPhase, cell: RegretCell, bestMs: number | null, options: PruneOptions = {}): number {
    const factor = options.factor ?? DEFAULT_PRUNE_FACTOR;
    if (!(factor >= 1)) throw new RangeError(`the prune factor must be at least 1, got ${factor}`);
    if (phase === "load" || phase === "done") return options.loadLimitMs ?? DEFAULT_LOAD_LIMIT_MS;
    if (bestMs == null) return options.unboundedPhaseMs ?? DEFAULT_UNBOUNDED_PHASE_MS;
    const floor = options.minPhaseLimitMs ?? DEFAULT_MIN_PHASE_LIMIT_MS;
    const runMs = cell.kind === "ttft" ? bestMs : bestMs * cell.tokens;
    if (phase === "run") return Math.max(floor, factor * runMs);
    // the warm-up does the whole prompt (ttft) or one token (tpot): bestMs either way
    return Math.max(floor, factor * bestMs) + (options.warmupSlackMs ?? DEFAULT_WARMUP_SLACK_MS);
}

/** A decision to stop a configuration. */
export type PruneVerdict = {readonly phase: BenchPhase; readonly elapsedMs: number; readonly limitMs: number; readonly reason: string};

/**
 * Follows one llama-bench process: feed it every stderr line with the time it arrived, and ask it at any time whether
 * the process has overrun. Pure (the caller owns clocks and processes), so the rule is tested without timing.
 */
export class PruneMonitor {
    private phase: BenchPhase = "load";
    private phaseStartMs: number;
    private readonly runsMs: number[] = [];

    constructor(private readonly cell: RegretCell, private readonly bestMs: number | null, startMs: number, private readonly options: PruneOptions = {}) {
        this.phaseStartMs = startMs;
    }

    /** Notes a stderr line that arrived at `nowMs`. */
    line(text: string, nowMs: number): void {
        const next = phaseOfLine(text);
        if (next == null) return;
        if (this.phase === "run") this.runsMs.push(nowMs - this.phaseStartMs);
        this.phase = next;
        this.phaseStartMs = nowMs;
    }

    /** Notes that llama-bench printed its results at `nowMs`: what follows is freeing and exiting, not timed. */
    done(nowMs: number): void {
        if (this.phase === "done") return;
        if (this.phase === "run") this.runsMs.push(nowMs - this.phaseStartMs);
        this.phase = "done";
        this.phaseStartMs = nowMs;
    }

    /** Whether to stop the process now, and why. */
    check(nowMs: number): PruneVerdict | null {
        const limitMs = phaseLimitMs(this.phase, this.cell, this.bestMs, this.options);
        const elapsedMs = nowMs - this.phaseStartMs;
        if (elapsedMs <= limitMs) return null;
        const what = this.phase === "load" ? "loading" : this.phase === "done" ? "exiting" : this.phase === "warmup" ? "the warm-up run" : `timed repetition ${this.runsMs.length + 1}`;
        const against = this.bestMs == null || this.phase === "load" || this.phase === "done" ? `the ${(limitMs / 1000).toFixed(0)} s limit` : `${this.options.factor ?? DEFAULT_PRUNE_FACTOR}× the best so far`;
        return {phase: this.phase, elapsedMs, limitMs, reason: `${what} ran ${(elapsedMs / 1000).toFixed(2)} s, over ${against} (${(limitMs / 1000).toFixed(2)} s)`};
    }

    /**
     * During a timed repetition, what it has taken so far in the cell's unit (ms per prompt, or per token): a lower bound
     * on that repetition. `null` in other phases.
     */
    lowerBoundMs(nowMs: number): number | null {
        if (this.phase !== "run") return null;
        const elapsed = nowMs - this.phaseStartMs;
        return this.cell.kind === "ttft" ? elapsed : elapsed / this.cell.tokens;
    }
}
