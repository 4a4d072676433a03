/**
 * What a reply does when its conversation no longer fits in the model's context (LM Studio's "context overflow"
 * policies): refuse, leave out the oldest exchanges after the first, or leave out the oldest exchanges. The engine
 * applies it before the prompt is evaluated (electron/engine/runtime/fitConversation.ts); the conversation itself is
 * never changed, only what the model sees for that reply.
 */

/** Every policy, in the order the chat's settings list them. */
export const CONTEXT_OVERFLOW_POLICIES = ["truncateMiddle", "rollingWindow", "stop"] as const;

export type ContextOverflowPolicy = typeof CONTEXT_OVERFLOW_POLICIES[number];

/** The policy of a conversation that never chose one: the chat goes on, keeping its first exchange. */
export const DEFAULT_CONTEXT_OVERFLOW: ContextOverflowPolicy = "truncateMiddle";

/** Each policy as the chat's settings name it. */
export const CONTEXT_OVERFLOW_LABELS: {readonly [Policy in ContextOverflowPolicy]: string} = {
    truncateMiddle: "Truncate the middle (keep the first exchange)",
    rollingWindow: "Rolling window (keep the newest messages)",
    stop: "Stop (refuse the reply)"
};

export function isContextOverflowPolicy(value: unknown): value is ContextOverflowPolicy {
    return typeof value === "string" && (CONTEXT_OVERFLOW_POLICIES as readonly string[]).includes(value);
}

/**
 * The share of the context a reply is given room for when earlier messages are left out: the reply's max tokens, but
 * never more than this part of the context, so a long max tokens does not push every earlier message out.
 */
export const REPLY_SHARE_OF_CONTEXT = 0.25;

/** How many tokens of the context are kept free for the reply when a conversation is trimmed to fit. */
export function replyReserve(maxTokens: number, contextSize: number): number {
    return Math.max(1, Math.min(maxTokens, Math.floor(contextSize * REPLY_SHARE_OF_CONTEXT)));
}

/** The note on a reply whose model did not see `count` earlier messages. */
export function leftOutNote(count: number): string {
    return `${count} earlier message${count === 1 ? " was" : "s were"} outside the model's context`;
}

/**
 * The context "Reload with a larger context" offers: twice the loaded one, at most what the model was trained for;
 * `null` when the loaded context already holds the trained one (or the model does not say it).
 */
export function largerContextSize(loaded: number, trained: number | null): number | null {
    if (trained == null || trained <= loaded)
        return null;
    return Math.min(trained, loaded * 2);
}
