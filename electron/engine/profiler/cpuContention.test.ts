import {describe, expect, it} from "vitest";
import {whileCoresBusy} from "../testing/busyCores.js";
import {busier, contentionBetween, cpuSnapshot, describeContention, isContended, type CpuSnapshot} from "./cpuContention.js";

const at = (atMs: number, machineBusyMs: number, ownMs: number, cores = 2): CpuSnapshot => ({atMs, machineBusyMs, ownMs, cores});

describe("other programs' CPU use while a profile is measured", () => {
    it("is the machine's busy time less this process's own, per wall time", () => {
        // 1 s: the machine was busy 1.8 core-seconds, 1.5 of them this process's profile threads
        expect(contentionBetween(at(0, 100, 50), at(1000, 1900, 1550), 2)!.otherCores).toBeCloseTo(0.3);
        // this process alone keeping both cores busy is no contention
        expect(contentionBetween(at(0, 0, 0), at(1000, 2000, 2000), 2)!.otherCores).toBe(0);
    });

    it("stays within the machine's cores whatever the clocks' ticks, and says nothing from a too-short window", () => {
        expect(contentionBetween(at(0, 0, 0), at(1000, 0, 30), 2)!.otherCores).toBe(0);
        expect(contentionBetween(at(0, 0, 0), at(1000, 9000, 0), 2)!.otherCores).toBe(2);
        expect(contentionBetween(at(0, 0, 0), at(150, 300, 0), 2)).toBeNull();
        expect(contentionBetween(at(0, 0, 0), at(Number.NaN, 300, 0), 2)).toBeNull();
    });

    it("counts as contended only when other programs take the cores the profile's threads needed", () => {
        // every core timed: a third of a core of other work already takes time from its threads
        expect(isContended({otherCores: 0.2, cores: 2, threads: 2})).toBe(false);
        expect(isContended({otherCores: 0.35, cores: 2, threads: 2})).toBe(true);
        // 4 threads of 8 cores: other programs on the 4 free cores cost the profile nothing
        expect(isContended({otherCores: 4.2, cores: 8, threads: 4})).toBe(false);
        expect(isContended({otherCores: 4.35, cores: 8, threads: 4})).toBe(true);
        // 1 thread of 2 beside two busy programs: they get 1.33 cores, the profile's thread 0.67 of its one (the app's
        // thread-count retakes measured 1.48-1.52 so)
        expect(isContended({otherCores: 1.33, cores: 2, threads: 1})).toBe(true);
    });

    it("of two records, keeps the one further beyond the cores its timing left free", () => {
        const twoThreads = {otherCores: 1.19, cores: 2, threads: 2};
        const oneThread = {otherCores: 1.52, cores: 2, threads: 1};
        expect(busier(twoThreads, oneThread)).toBe(twoThreads);
        expect(busier(undefined, oneThread)).toBe(oneThread);
        expect(busier(oneThread, undefined)).toBe(oneThread);
    });

    it("words a busy machine for the user, and a quiet one not at all", () => {
        expect(describeContention({otherCores: 1.24, cores: 2, threads: 2})).toBe("While it was measured, other programs kept 1.2 of 2 CPU cores busy, " +
            "so its timings may be much slower than this machine is; re-profile when the machine is idle.");
        expect(describeContention({otherCores: 0.1, cores: 2, threads: 2})).toBeNull();
        expect(describeContention(undefined)).toBeNull();
    });

    it("sees another program that keeps a core busy", async () => {
        const contention = await whileCoresBusy(1, async () => {
            const start = cpuSnapshot();
            await new Promise((resolve) => setTimeout(resolve, 1000));
            return contentionBetween(start, cpuSnapshot(), 1);
        });
        // one busy loop holds most of a core (the rest of the machine may add more, never less)
        expect(contention!.otherCores).toBeGreaterThan(0.7);
    });
});
