/**
 * One Auto-offload may profile the machine several times: every device, the CPU again as a load without the GPU lays
 * out its weights, and the CPU at each other thread count the planner compares (planner/autoPlan.ts). Each is a pass
 * of profileMachine with its own time limit; numbered, they share one progress bar and one time left instead of a bar
 * that fills and empties once per pass.
 */

/** Pass `index` (0-based) of `count`. */
export type ProfilePass = {readonly index: number; readonly count: number};

/**
 * The progress of all passes while pass `pass` has run `elapsedMs` of its `boundMs`: the fraction done (this pass
 * never counted as finished before it ends) and the time left, every later pass taking about its bound (a cached one
 * takes nothing, so this is an upper bound).
 */
export function passProgress(pass: ProfilePass | undefined, elapsedMs: number, boundMs: number): {fraction: number; leftMs: number} {
    const {index, count} = pass ?? {index: 0, count: 1};
    const within = boundMs > 0 ? Math.min(0.99, Math.max(0, elapsedMs) / boundMs) : 0.99;
    return {fraction: (index + within) / count, leftMs: Math.max(0, boundMs - elapsedMs) + Math.max(0, count - 1 - index) * boundMs};
}

/** The fraction of all passes done once pass `pass` has ended (or started, with `ended` false). */
export function passBoundary(pass: ProfilePass | undefined, ended: boolean): number {
    const {index, count} = pass ?? {index: 0, count: 1};
    return (index + (ended ? 1 : 0)) / count;
}

/** " (pass 2 of 4)", or nothing for a lone pass. */
export function passLabel(pass: ProfilePass | undefined): string {
    return pass == null || pass.count <= 1 ? "" : ` (pass ${pass.index + 1} of ${pass.count})`;
}
