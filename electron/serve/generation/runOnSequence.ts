/**
 * One request's turn on a sequence, as both the API's replies (generateReply.ts) and the app's own
 * (scheduledChatReply.ts) take it: wait for a sequence from the scheduler, get the conversation's KV cache into it
 * (ConversationKvStore.prepare: still resident, swapped in or recomputed), run the work, and tell the store the
 * conversation now sits there (ConversationKvStore.finished) however the work ended.
 */
import type {ConversationKvStore, KvPreparation} from "../kv/ConversationKvStore.js";
import type {ScheduledJob, SequenceScheduler} from "../scheduling/SequenceScheduler.js";
import type {ServeSlot} from "./ServeSlot.js";

export type SequenceTurn = {slot: ServeSlot; restored: KvPreparation; waitedMs: number};

export function runOnSequence<T>(scheduler: SequenceScheduler<ServeSlot>, kv: ConversationKvStore, job: ScheduledJob<ServeSlot>,
    conversation: string | null, work: (turn: SequenceTurn) => Promise<T>, options: {onSlot?: (slot: ServeSlot) => void} = {}): Promise<T> {
    return scheduler.run(job, async (slot, waitedMs) => {
        options.onSlot?.(slot);
        const restored = await kv.prepare(slot, conversation);
        try {
            return await work({slot, restored, waitedMs});
        } finally {
            kv.finished(slot, conversation);
        }
    });
}
