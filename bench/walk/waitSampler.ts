/**
 * What the app tells a user while they wait, sampled in the page every 200 ms: the engine's state, the sidebar's
 * activity lines, every visible progress bar, and a streaming reply's token count. A sample "explains" the wait when
 * any of those says something is under way; the walk (newcomerWalk.walk.ts) reports, per step, the longest stretch
 * without such a sample — an unexplained wait — and the longest stretch in which what was shown did not change.
 */
import type {Page} from "playwright-core";

/** One look at the page. */
export type WaitSample = {
    /** ms since the sampler started (the page's `performance.now()` clock) */
    t: number;
    engine: string;
    activity: string[];
    /** the label and value of each visible progress bar (`role="progressbar"`) */
    progress: string[];
    /** tokens of the reply being streamed, or null when none is */
    streamingTokens: number | null;
};

/** Whether a sample says something is under way: what makes a wait explained. */
export function explains(sample: WaitSample): boolean {
    return /^(busy|starting)/i.test(sample.engine) || sample.activity.length > 0 || sample.progress.length > 0 || sample.streamingTokens != null;
}

/** What the sample shows, as one string: two samples with the same text looked the same to the user. */
export function shownText(sample: WaitSample): string {
    return [sample.engine, ...sample.activity, ...sample.progress, sample.streamingTokens ?? ""].join(" | ");
}

/** How one step's wait went: its length, its longest unexplained stretch, its longest unchanged stretch, and what was shown. */
export type StepWait = {durationMs: number; longestUnexplainedMs: number; longestUnchangedMs: number; shown: string[]};

/** Summarises the samples taken between `startMs` and `endMs`. */
export function summariseWait(samples: readonly WaitSample[], startMs: number, endMs: number): StepWait {
    const inside = samples.filter((sample) => sample.t >= startMs && sample.t <= endMs);
    let longestUnexplainedMs = 0;
    let longestUnchangedMs = 0;
    let unexplainedSince: number | null = startMs;
    let unchangedSince = startMs;
    let previous: string | null = null;
    const shown: string[] = [];
    for (const sample of inside) {
        const text = shownText(sample);
        if (text !== previous) {
            if (previous != null) longestUnchangedMs = Math.max(longestUnchangedMs, sample.t - unchangedSince);
            unchangedSince = sample.t;
            previous = text;
            if (explains(sample) && !shown.includes(text)) shown.push(text);
        }
        if (explains(sample)) {
            if (unexplainedSince != null) longestUnexplainedMs = Math.max(longestUnexplainedMs, sample.t - unexplainedSince);
            unexplainedSince = null;
        } else
            unexplainedSince ??= sample.t;
    }
    if (unexplainedSince != null) longestUnexplainedMs = Math.max(longestUnexplainedMs, endMs - unexplainedSince);
    longestUnchangedMs = Math.max(longestUnchangedMs, endMs - unchangedSince);
    return {durationMs: endMs - startMs, longestUnexplainedMs, longestUnchangedMs, shown};
}

/** Starts sampling in the page; samples stay in the page until {@link readSamples}. */
export async function startSampler(page: Page): Promise<void> {
    await page.evaluate(() => {
        const target = window as unknown as {__walkSamples?: unknown[]; __walkTimer?: number};
        target.__walkSamples = [];
        const visible = (element: Element) => (element as HTMLElement).offsetParent != null;
        target.__walkTimer = window.setInterval(() => {
            const engine = document.querySelector("[data-testid='engine-status']");
            const streaming = document.querySelector("[data-testid='message-streaming']");
            target.__walkSamples!.push({
                t: performance.now(),
                engine: `${engine?.getAttribute("data-state") ?? ""}: ${engine?.textContent ?? ""}`,
                activity: [...document.querySelectorAll("[data-testid='sidebar-activity']")].map((line) => line.textContent ?? ""),
                // a bar's own labels (components/ProgressBar), else the heading of the panel it is in, and its value
                progress: [...document.querySelectorAll("[role='progressbar']")].filter(visible).map((bar) => {
                    const labels = bar.parentElement?.querySelector(".progress-labels")?.textContent ?? bar.closest("section")?.querySelector("h2,h3")?.textContent ?? "";
                    return `${labels} ${bar.getAttribute("aria-valuenow") ?? "…"}`;
                }),
                streamingTokens: streaming == null ? null : Number(streaming.getAttribute("data-tokens") ?? 0)
            });
        }, 200);
    });
}

/** The page's clock now (the samples' clock). */
export async function pageNow(page: Page): Promise<number> {
    return await page.evaluate(() => performance.now());
}

export async function readSamples(page: Page): Promise<WaitSample[]> {
    return await page.evaluate(() => (window as unknown as {__walkSamples?: WaitSample[]}).__walkSamples ?? []);
}
