/**
 * How busy other programs kept the CPU while this process timed something: the machine's busy CPU time (every core,
 * from `os.cpus()`) minus this process's own (`process.cpuUsage()`, every thread of it: the profiler's worker and
 * ggml's threads, llvmpipe's too), over the wall time. ggml's threads wait for each other at every graph node, so one
 * of them losing its core to another program for a scheduler tick (several ms) makes a µs operator time ms: a
 * profile taken on a busy machine prices this model's work orders of magnitude too slow (measured on this project's
 * 2-core VM: a 128×128 F16 mat-vec timed at 3.9 ms while a test suite ran, against 1.3 µs idle).
 */
import os from "node:os";
import type {CpuContention} from "../../contract/cpuContention.js";

export type {CpuContention};

/** A point in time of the machine's and this process's CPU use. */
export type CpuSnapshot = {readonly atMs: number; readonly machineBusyMs: number; readonly ownMs: number; readonly cores: number};

/** Now: the machine's busy CPU time (user, nice, sys, irq of every core) and this process's, ms. */
export function cpuSnapshot(): CpuSnapshot {
    const cpus = os.cpus();
    const machineBusyMs = cpus.reduce((sum, cpu) => sum + cpu.times.user + cpu.times.nice + cpu.times.sys + cpu.times.irq, 0);
    const own = process.cpuUsage();
    return {atMs: performance.now(), machineBusyMs, ownMs: (own.user + own.system) / 1000, cores: cpus.length};
}

/**
 * Other programs' average use between two snapshots, of work on `threads` threads; `null` when too little time
 * passed to tell (under 200 ms).
 */
export function contentionBetween(start: CpuSnapshot, end: CpuSnapshot, threads: number): CpuContention | null {
    const wallMs = end.atMs - start.atMs;
    if (!(wallMs >= 200) || end.cores <= 0) return null;
    const otherMs = (end.machineBusyMs - start.machineBusyMs) - (end.ownMs - start.ownMs);
    // the two clocks tick apart (os.cpus() in 10 ms jiffies): clamp to what the machine has
    return {otherCores: Math.min(end.cores, Math.max(0, otherMs / wallMs)), cores: end.cores, threads};
}

/** Noise in the counters on an idle machine is well under this (0.00 of 2 cores measured on this project's VM). */
const CONTENTION_MARGIN_CORES = 0.25;

/**
 * Whether other programs took CPU the timed threads needed. The scheduler shares the cores among every runnable
 * thread, so other programs measured above the cores the timing left free took some of its threads' time: with 1
 * thread on 2 cores and two busy programs, they get 1.33 cores and the timing 0.67 of its one (measured on this
 * project's VM: 1.48–1.52 beside a 1-thread profile). A quarter core of margin keeps counter noise out.
 */
export function isContended(contention: CpuContention): boolean {
    return contention.otherCores > Math.max(0, contention.cores - contention.threads) + CONTENTION_MARGIN_CORES;
}

/** Of two records, the one other programs disturbed more (the one further beyond the cores its timing left free). */
export function busier(a: CpuContention | undefined, b: CpuContention | undefined): CpuContention | undefined {
    if (a == null || b == null) return a ?? b;
    const over = (c: CpuContention): number => c.otherCores - Math.max(0, c.cores - c.threads);
    return over(b) > over(a) ? b : a;
}

/** "other programs kept 1.2 of 2 CPU cores busy": the words every message about contention uses. */
export function otherProgramsBusy(contention: CpuContention): string {
    return `other programs kept ${contention.otherCores.toFixed(1)} of ${contention.cores} CPU cores busy`;
}

/** One sentence for the user, or `null` when the machine was quiet enough. */
export function describeContention(contention: CpuContention | undefined): string | null {
    if (contention == null || !isContended(contention)) return null;
    return `While it was measured, ${otherProgramsBusy(contention)}, ` +
        "so its timings may be much slower than this machine is; re-profile when the machine is idle.";
}

/** `{cpuContention}` to spread into a record, or nothing when there is none (optional fields stay absent, not undefined). */
export function withContention(contention: CpuContention | undefined): {cpuContention?: CpuContention} {
    return contention != null ? {cpuContention: contention} : {};
}
