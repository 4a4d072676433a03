import type {SchedulingPolicy, WaitingRequest} from "./schedulingPolicies.js";

/** The queue is full; `retryAfterSeconds` estimates when a place frees up. */
export class QueueFullError extends Error {
    readonly code = "queue-full";
    constructor(readonly retryAfterSeconds: number, queueLength: number) {
        super(`The server is busy: every sequence open to API requests is generating and all ${queueLength} queue places are taken; retry in about ${retryAfterSeconds} s.`);
    }
}

/** A request to run: its scheduling facts, and a signal that withdraws it (while waiting) or stops it (while running). */
export type ScheduledJob<Slot = unknown> = {
    promptTokens: number;
    signal?: AbortSignal;
    /** Which free slot it would rather have (highest score wins, the longest-free on a tie). Defaults to any. */
    affinity?: (slot: Slot) => number;
    /**
     * The app's own chat: never refused for a full queue (it does not count against the queue length) and admitted to
     * the next free slot ahead of every other waiting request. Defaults to `false`.
     */
    priority?: boolean;
};

type Waiting<Slot> = WaitingRequest & {affinity?: (slot: Slot) => number; priority: boolean; admit(slot: number): void};

/** Retry-After is clamped to this range, in seconds. */
const RETRY_AFTER_SECONDS = {min: 1, max: 600} as const;
/** Weight of the newest service time in the running mean used for Retry-After. */
const SERVICE_TIME_SMOOTHING = 0.2;

/**
 * Hands out a fixed set of slots (the sequences of one context) to requests: a free slot is taken at once; otherwise
 * the request waits in a bounded queue and, whenever a slot frees, the policy picks who gets it (among the priority
 * jobs first, when any wait). Admission only: a running request keeps its slot until it ends, so a policy decides
 * order, not preemption.
 */
export class SequenceScheduler<Slot> {
    private readonly free: number[];
    private readonly waiting: Waiting<Slot>[] = [];
    /** Slots running jobs without priority (API requests). */
    private busyOthers = 0;
    private meanServiceMs: number | null = null;

    /**
     * @param slots one per sequence.
     * @param options.queueLength requests that may wait when every slot is busy (0: none).
     * @param options.reservedForPriority slots jobs without priority never take, so the app's own chat starts at once
     *   however many API requests run (at most all slots but one). Defaults to 0.
     * @param options.now the clock; defaults to `performance.now`.
     */
    constructor(private readonly slots: readonly Slot[], private readonly options: {
        policy: SchedulingPolicy; queueLength: number; reservedForPriority?: number; now?: () => number;
    }) {
        this.free = slots.map((_slot, index) => index);
    }

    get policy(): SchedulingPolicy {
        return this.options.policy;
    }

    /** Requests waiting for a slot. */
    get waitingCount(): number {
        return this.waiting.length;
    }

    /** Slots generating now. */
    get busyCount(): number {
        return this.slots.length - this.free.length;
    }

    /**
     * Runs `work` on a slot once the job is admitted, then frees the slot. Rejects with {@link QueueFullError} at once
     * when no slot is free and the queue is full, and with the signal's reason when it aborts while waiting.
     * `work` gets the slot and the ms the job waited.
     */
    async run<T>(job: ScheduledJob<Slot>, work: (slot: Slot, waitedMs: number) => Promise<T>): Promise<T> {
        const now = this.now();
        job.signal?.throwIfAborted();
        const priority = job.priority === true;
        const slotIndex = priority ? (this.free.length > 0 ? this.takeFree(job.affinity) : await this.enqueue(job, now))
            : this.waiting.length === 0 && this.roomForOthers() ? this.takeFree(job.affinity, false) : await this.enqueue(job, now);
        const admitted = this.now();
        try {
            return await work(this.slots[slotIndex]!, admitted - now);
        } finally {
            this.recordService(this.now() - admitted);
            if (!priority)
                this.busyOthers--;
            this.free.push(slotIndex);
            this.dispatch();
        }
    }

    /** Whether a job without priority may take a free slot now: one is free beyond the slots kept for priority. */
    private roomForOthers(): boolean {
        const reserved = Math.min(this.options.reservedForPriority ?? 0, this.slots.length - 1);
        return this.free.length > 0 && this.busyOthers < this.slots.length - reserved;
    }

    private enqueue(job: ScheduledJob<Slot>, arrivalMs: number): Promise<number> {
        if (job.priority !== true && this.waiting.filter((entry) => !entry.priority).length >= this.options.queueLength)
            throw new QueueFullError(this.retryAfterSeconds(), this.options.queueLength);
        return new Promise<number>((resolve, reject) => {
            const onAbort = () => {
                const index = this.waiting.indexOf(entry);
                if (index >= 0)
                    this.waiting.splice(index, 1);
                reject(job.signal?.reason);
            };
            const entry: Waiting<Slot> = {
                arrivalMs, promptTokens: job.promptTokens, generatedTokens: 0, affinity: job.affinity, priority: job.priority === true,
                admit: (slot) => {
                    job.signal?.removeEventListener("abort", onAbort);
                    resolve(slot);
                }
            };
            job.signal?.addEventListener("abort", onAbort, {once: true});
            this.waiting.push(entry);
        });
    }

    /** Gives free slots to waiting requests, in the policy's order. */
    private dispatch(): void {
        while (this.free.length > 0 && this.waiting.length > 0) {
            const first = this.waiting.filter((entry) => entry.priority);
            if (first.length === 0 && !this.roomForOthers())
                return;
            const candidates = first.length > 0 ? first : this.waiting;
            const chosen = candidates[this.options.policy.pick(candidates, this.now())]!;
            const [entry] = this.waiting.splice(this.waiting.indexOf(chosen), 1);
            entry!.admit(this.takeFree(entry!.affinity, entry!.priority));
        }
    }

    /** Removes and returns the free slot `affinity` scores highest (the longest-free among equals), for a job of `priority`. */
    private takeFree(affinity: ((slot: Slot) => number) | undefined, priority = true): number {
        if (!priority)
            this.busyOthers++;
        let best = 0;
        if (affinity != null) {
            let bestScore = -Infinity;
            this.free.forEach((slotIndex, position) => {
                const score = affinity(this.slots[slotIndex]!);
                if (score > bestScore) {
                    bestScore = score;
                    best = position;
                }
            });
        }
        return this.free.splice(best, 1)[0]!;
    }

    private recordService(ms: number): void {
        this.meanServiceMs = this.meanServiceMs == null ? ms : this.meanServiceMs + SERVICE_TIME_SMOOTHING * (ms - this.meanServiceMs);
    }

    /** About when the queue's head would get a slot: the waiting requests ahead, served `slots` at a time. */
    private retryAfterSeconds(): number {
        const perRequest = this.meanServiceMs ?? 1000;
        const seconds = Math.ceil(perRequest * (this.waiting.length / this.slots.length + 1) / 1000);
        return Math.min(RETRY_AFTER_SECONDS.max, Math.max(RETRY_AFTER_SECONDS.min, seconds));
    }

    private now(): number {
        return (this.options.now ?? performance.now.bind(performance))();
    }
}
