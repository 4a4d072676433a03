import type {LlamaModel, Token} from "node-llama-cpp";

/** Stop texts of a reply (see {@link ReplyText}). */
export type ReplyStops = {
    /** Matched against the reply rendered with its special tokens (the chat template's end-of-turn markers). */
    readonly specialStops: readonly string[];
    /** Matched against the reply's plain text (the user's stop strings). */
    readonly stops: readonly string[];
};

/** What one more token changed: the text safe to show now, and whether a stop text has just appeared. */
export type ReplyStep = {readonly delta: string; readonly stopped: boolean};

/**
 * The text of a reply as its tokens arrive: detokenized as a whole (a character split over several tokens shows once
 * complete), handed out in deltas that never contain the start of a possible stop text, and cut before the first stop
 * text once one appears (the stop text itself is never part of the reply).
 */
export class ReplyText {
    private readonly tokens: Token[] = [];
    private shown = 0;
    private full = "";
    private cutAt: number | null = null;

    constructor(private readonly model: LlamaModel, private readonly stops: ReplyStops) {}

    /** The reply so far: everything up to a stop text, or all of it. */
    get text(): string {
        return this.cutAt == null ? this.full : this.full.slice(0, this.cutAt);
    }

    /** Adds one generated token. */
    push(token: Token): ReplyStep {
        this.tokens.push(token);
        this.full = this.model.detokenize(this.tokens, false);
        const plainStop = firstIndexOf(this.full, [...this.stops.stops, ...this.stops.specialStops]);
        const special = this.stops.specialStops.length > 0 && firstIndexOf(this.model.detokenize(this.tokens, true), this.stops.specialStops) != null;
        if (plainStop != null || special) {
            // a special stop is made of special tokens that the plain text leaves out: the reply ends where it is now
            this.cutAt = plainStop ?? this.full.length;
            return {delta: this.take(this.cutAt), stopped: true};
        }
        // hold back an incomplete character and any tail that may still become a stop text
        const complete = this.full.endsWith("\uFFFD") ? this.full.length - 1 : this.full.length;
        const held = heldBack(this.full.slice(0, complete), [...this.stops.stops, ...this.stops.specialStops]);
        return {delta: this.take(complete - held), stopped: false};
    }

    /** Whatever was held back, once the reply has ended without a stop text. */
    flush(): string {
        return this.take(this.text.length);
    }

    private take(upTo: number): string {
        if (upTo <= this.shown) return "";
        const delta = this.full.slice(this.shown, upTo);
        this.shown = upTo;
        return delta;
    }
}

function firstIndexOf(text: string, needles: readonly string[]): number | null {
    let first: number | null = null;
    for (const needle of needles) {
        const at = text.indexOf(needle);
        if (at >= 0 && (first == null || at < first)) first = at;
    }
    return first;
}

/** Length of the longest end of `text` that is the start of some stop text. */
function heldBack(text: string, stops: readonly string[]): number {
    let longest = 0;
    for (const stop of stops)
        for (let n = Math.min(stop.length - 1, text.length); n > longest; n--)
            if (text.endsWith(stop.slice(0, n))) {
                longest = n;
                break;
            }
    return longest;
}
