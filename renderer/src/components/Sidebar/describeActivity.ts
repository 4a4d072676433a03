import {SERVER_STARTUP_STEP_TEXT, type ServerState} from "../../../../electron/contract/server";
import {formatMs} from "../../format/format";
import {formatTimeLeft, streamPromptTimeLeftMs, streamWaitedMs} from "../../format/promptTimeLeft";
import type {LiveStream} from "../../stores/chatStore";

/** What the wait and the time left of a prompt are told from: the time now (`performance.now()`) and the plan's prompt speed. */
export type ActivityClock = {now: number; predictedTokensPerSecond: number | null};

/**
 * What the engine is doing right now, in the sidebar's words, one line per activity: the app's replies (starting, or
 * reading the prompt with its progress, each with — given `clock` — the time waited since the Send and the time left, as
 * the reply itself shows them; or writing with the tokens so far) and the server. Empty
 * when nothing is happening, so "Model ready" is never the only thing said while a long prompt is read.
 */
export function describeActivity(streams: readonly LiveStream[], server: Pick<ServerState, "status" | "served" | "startup"> | null,
    clock?: ActivityClock): string[] {
    const lines: string[] = [];
    const [first, ...others] = streams;
    if (first != null) {
        const more = others.length > 0 ? ` (+${others.length} more)` : "";
        if (first.stopping) lines.push(`Stopping a reply${more}`);
        else if (first.awaiting === "approval") lines.push(`A tool call waits for your approval${more}`);
        else if (first.awaiting === "tool") lines.push(`Running a tool${more}`);
        else if (first.tokens > 0 || first.text !== "") lines.push(`Writing a reply · ${first.tokens} tokens${more}`);
        else {
            const waited = clock == null ? "" : ` · ${formatMs(streamWaitedMs(first, clock.now))}`;
            if (first.prompt != null && first.prompt.total > 0) {
                const left = clock == null ? null : formatTimeLeft(streamPromptTimeLeftMs(first, clock.now, clock.predictedTokensPerSecond));
                lines.push(`Reading the prompt · ${first.prompt.evaluated} / ${first.prompt.total} tokens${waited}${left != null ? ` · ${left}` : ""}${more}`);
            }
            else lines.push(`Starting a reply${waited}${more}`);
        }
    }
    switch (server?.status) {
        case "starting": {
            const step = server.startup?.step;
            const fraction = server.startup?.fraction;
            lines.push(step == null ? "Server starting…"
                : `Server starting: ${SERVER_STARTUP_STEP_TEXT[step]}${fraction != null ? ` · ${Math.round(fraction * 100)}%` : ""}`);
            break;
        }
        case "serving": lines.push(`Serving · ${server.served} ${server.served === 1 ? "request" : "requests"} answered`); break;
        case "waiting-for-model": lines.push("Server waits for a model"); break;
        case "failed": lines.push("Server failed (see Server)"); break;
        default: break;
    }
    return lines;
}
