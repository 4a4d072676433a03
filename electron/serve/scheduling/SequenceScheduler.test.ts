import {describe, expect, it} from "vitest";
import {fairnessPriority, fairPolicy, fifoPolicy} from "./schedulingPolicies.js";
import {QueueFullError, SequenceScheduler} from "./SequenceScheduler.js";

/** A job that finishes when the test says so, recording when it started. */
function gate() {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return {open, opened};
}

describe("SequenceScheduler", () => {
    it("runs up to one job per slot at once and queues the rest", async () => {
        const scheduler = new SequenceScheduler(["a", "b"], {policy: fifoPolicy, queueLength: 4});
        const gates = [gate(), gate(), gate()];
        const started: string[] = [];
        const runs = gates.map((g, index) => scheduler.run({promptTokens: 10}, async (slot) => {
            started.push(`${index}@${slot}`);
            await g.opened;
            return index;
        }));
        await Promise.resolve();
        expect(started).toEqual(["0@a", "1@b"]);
        expect(scheduler.waitingCount).toBe(1);
        gates[1]!.open();
        expect(await runs[1]).toBe(1);
        await Promise.resolve();
        expect(started).toEqual(["0@a", "1@b", "2@b"]);
        gates[0]!.open();
        gates[2]!.open();
        expect(await Promise.all(runs)).toEqual([0, 1, 2]);
        expect(scheduler.busyCount).toBe(0);
    });

    it("keeps the reserved slots for priority jobs: API jobs queue while one is free, the app's chat starts at once", async () => {
        const scheduler = new SequenceScheduler(["a", "b", "c"], {policy: fifoPolicy, queueLength: 4, reservedForPriority: 1});
        const gates = Array.from({length: 4}, () => gate());
        const started: string[] = [];
        const job = (index: number, priority: boolean) => scheduler.run({promptTokens: 10, priority}, async (slot) => {
            started.push(`${index}@${slot}`);
            await gates[index]!.opened;
            return index;
        });
        const api = [job(0, false), job(1, false), job(2, false)];
        await Promise.resolve();
        expect(started).toEqual(["0@a", "1@b"]);
        expect(scheduler.waitingCount).toBe(1);
        const app = job(3, true);
        await Promise.resolve();
        expect(started).toEqual(["0@a", "1@b", "3@c"]);
        // the app's chat ending frees its slot, but not for an API job beyond the two it may hold
        gates[3]!.open();
        expect(await app).toBe(3);
        await Promise.resolve();
        expect(started).toEqual(["0@a", "1@b", "3@c"]);
        gates[0]!.open();
        expect(await api[0]).toBe(0);
        await Promise.resolve();
        expect(started.slice(3)).toEqual([expect.stringMatching(/^2@[ac]$/)]);
        gates[1]!.open();
        gates[2]!.open();
        expect(await Promise.all(api)).toEqual([0, 1, 2]);
        expect(scheduler.busyCount).toBe(0);
        // one slot: nothing can be reserved, API jobs use it
        const single = new SequenceScheduler(["only"], {policy: fifoPolicy, queueLength: 1, reservedForPriority: 1});
        expect(await single.run({promptTokens: 1}, async (slot) => slot)).toBe("only");
    });

    it("gives a job the free slot its affinity scores highest, also when it was waiting", async () => {
        const scheduler = new SequenceScheduler(["a", "b", "c"], {policy: fifoPolicy, queueLength: 4});
        const prefer = (wanted: string) => (slot: string) => slot === wanted ? 1 : 0;
        expect(await scheduler.run({promptTokens: 1, affinity: prefer("c")}, async (slot) => slot)).toBe("c");
        const gates = [gate(), gate(), gate()];
        const running = gates.map((g, index) => scheduler.run({promptTokens: 1}, async (slot) => {
            await g.opened;
            return `${index}@${slot}`;
        }));
        // affinity chooses among free slots only: a waiting job takes the first that frees
        const waiting = scheduler.run({promptTokens: 1, affinity: prefer("b")}, async (slot) => slot);
        gates[0]!.open();
        expect(await waiting).toBe("a");
        gates[1]!.open();
        gates[2]!.open();
        expect(await Promise.all(running)).toEqual(["0@a", "1@b", "2@c"]);
        expect(await scheduler.run({promptTokens: 1, affinity: prefer("b")}, async (slot) => slot)).toBe("b");
    });

    it("refuses a job when the queue is full, with a Retry-After estimate, and loses no running job", async () => {
        const scheduler = new SequenceScheduler(["a"], {policy: fifoPolicy, queueLength: 1});
        const g = gate();
        const first = scheduler.run({promptTokens: 1}, () => g.opened);
        const second = scheduler.run({promptTokens: 1}, async () => "second");
        const third = scheduler.run({promptTokens: 1}, async () => "third");
        await expect(third).rejects.toBeInstanceOf(QueueFullError);
        await expect(third).rejects.toMatchObject({retryAfterSeconds: expect.any(Number)});
        g.open();
        await first;
        expect(await second).toBe("second");
    });

    it("withdraws a waiting job whose signal aborts, and gives its place to the next", async () => {
        const scheduler = new SequenceScheduler(["a"], {policy: fifoPolicy, queueLength: 2});
        const g = gate();
        const first = scheduler.run({promptTokens: 1}, () => g.opened);
        const controller = new AbortController();
        let ran = false;
        const withdrawn = scheduler.run({promptTokens: 1, signal: controller.signal}, async () => {
            ran = true;
        });
        const next = scheduler.run({promptTokens: 1}, async () => "next");
        controller.abort(new Error("client gone"));
        await expect(withdrawn).rejects.toThrow("client gone");
        expect(scheduler.waitingCount).toBe(1);
        g.open();
        await first;
        expect(await next).toBe("next");
        expect(ran).toBe(false);
    });

    it("admits waiting jobs in the policy's order: FIFO by arrival, fair by waited time per token", async () => {
        for (const [policy, expected] of [[fifoPolicy, ["long", "short"]], [fairPolicy, ["short", "long"]]] as const) {
            let now = 0;
            const scheduler = new SequenceScheduler(["a"], {policy, queueLength: 4, now: () => now});
            const g = gate();
            const order: string[] = [];
            const blocker = scheduler.run({promptTokens: 1}, () => g.opened);
            now = 10;
            const long = scheduler.run({promptTokens: 1000}, async () => void order.push("long"));
            now = 20;
            const short = scheduler.run({promptTokens: 10}, async () => void order.push("short"));
            now = 30;
            g.open();
            await Promise.all([blocker, long, short]);
            expect(order).toEqual(expected);
        }
    });
});

describe("fairness priority", () => {
    it("is time waited ÷ sequence length, so a long request overtakes a short one once it has waited long enough", () => {
        const long = {arrivalMs: 0, promptTokens: 900, generatedTokens: 100};
        const short = {arrivalMs: 900, promptTokens: 10, generatedTokens: 0};
        expect(fairnessPriority(long, 1000)).toBe(1);
        expect(fairnessPriority(short, 1000)).toBe(10);
        expect(fairPolicy.pick([long, short], 1000)).toBe(1);
        // the short one arrived just now: the long one has waited 1 ms per token, the short one nothing yet
        expect(fairPolicy.pick([long, {...short, arrivalMs: 1000}], 1000)).toBe(0);
    });
});
