import {describe, expect, it} from "vitest";
import {whileCoresBusy} from "../testing/busyCores.js";
import {contentionBetween, cpuSnapshot, describeContention, isContended, quieterNow, type CpuSnapshot} from "./cpuContention.js";

const at = (atMs: number, machineBusyMs: number, ownMs: number, cores = 2): CpuSnapshot => ({atMs, machineBusyMs, ownMs, cores});

describe("other programs' CPU use while a profile is measured", () => {
    it("is the machine's busy time less this process's own, per wall time", () => {
        // 1 s: the machine was busy 1.8 core-seconds, 1.5 of them this process's profile threads
        expect(contentionBetween(at(0, 100, 50), at(1000, 1900, 1550))!.otherCores).toBeCloseTo(0.3);
        // this process alone keeping both cores busy is no contention
        expect(contentionBetween(at(0, 0, 0), at(1000, 2000, 2000))!.otherCores).toBe(0);
    });

    it("stays within the machine's cores whatever the clocks' ticks, and says nothing from a too-short window", () => {
        expect(contentionBetween(at(0, 0, 0), at(1000, 0, 30))!.otherCores).toBe(0);
        expect(contentionBetween(at(0, 0, 0), at(1000, 9000, 0))!.otherCores).toBe(2);
        expect(contentionBetween(at(0, 0, 0), at(150, 300, 0))).toBeNull();
        expect(contentionBetween(at(0, 0, 0), at(Number.NaN, 300, 0))).toBeNull();
    });

    it("counts as contended only when other programs take the cores the profile's threads needed", () => {
        // every core timed: half a core of other work already stalls its threads at each barrier
        expect(isContended({otherCores: 0.4, cores: 2}, 2)).toBe(false);
        expect(isContended({otherCores: 0.6, cores: 2}, 2)).toBe(true);
        // 4 threads of 8 cores: other programs on the 4 free cores cost the profile nothing
        expect(isContended({otherCores: 4.3, cores: 8}, 4)).toBe(false);
        expect(isContended({otherCores: 4.6, cores: 8}, 4)).toBe(true);
    });

    it("words a busy machine for the user, and a quiet one not at all", () => {
        expect(describeContention({otherCores: 1.24, cores: 2}, 2)).toBe("While it was measured, other programs kept 1.2 of 2 CPU cores busy, " +
            "so its timings may be much slower than this machine is; re-profile when the machine is idle.");
        expect(describeContention({otherCores: 0.1, cores: 2}, 2)).toBeNull();
        expect(describeContention(undefined, 2)).toBeNull();
    });

    it("measures a saved profile again only when it was taken on a busy machine and the machine is quiet now", () => {
        const busy = {otherCores: 1.6, cores: 2};
        const quiet = {otherCores: 0.1, cores: 2};
        expect(quieterNow(busy, 2, quiet)).toBe(true);
        // still as busy: measuring again would be as slow
        expect(quieterNow(busy, 2, busy)).toBe(false);
        // a profile of a quiet machine, or an older one that did not record it, is reused without a look
        expect(quieterNow(quiet, 2, quiet)).toBe(false);
        expect(quieterNow(undefined, 2, quiet)).toBe(false);
        // a look too short to tell changes nothing
        expect(quieterNow(busy, 2, null)).toBe(false);
    });

    it("sees another program that keeps a core busy", async () => {
        const contention = await whileCoresBusy(1, async () => {
            const start = cpuSnapshot();
            await new Promise((resolve) => setTimeout(resolve, 1000));
            return contentionBetween(start, cpuSnapshot());
        });
        // one busy loop holds most of a core (the rest of the machine may add more, never less)
        expect(contention!.otherCores).toBeGreaterThan(0.7);
    });
});
