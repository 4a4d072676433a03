/** How the CLI prints a load's speculative decoding and what it did in a reply. */
import {acceptanceRate, rejectionsOf, type SpeculativeState, type SpeculativeStats} from "../contract/speculative.js";

/** The plan's sentence, then the reply's counts (proposed, accepted, α measured) where it speculated. */
export function speculativeLine(state: SpeculativeState, stats: SpeculativeStats | null): string {
    const lines = [`speculative: ${state.sentence}`];
    if (stats != null) {
        const alpha = acceptanceRate({accepted: stats.accepted, rejections: rejectionsOf(stats)});
        lines.push(`  this reply: ${stats.accepted} of ${stats.drafted} drafted tokens accepted over ${stats.steps} verification steps (α ${alpha?.toFixed(2) ?? "–"})` +
            (stats.note != null ? `; ${stats.note}` : ""));
    }
    return lines.join("\n");
}
