import {mkdtemp, readdir, readFile, writeFile} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {NativeProfileResult} from "../native/tensorwiseBindings.js";
import {whileCoresBusy} from "../testing/busyCores.js";
import {probeEngine} from "../testing/probeEngine.js";
import {busier, isContended} from "./cpuContention.js";
import type {MachineProfile, OperatorShape} from "./MachineProfile.js";
import {profileAtThreads} from "./profileAtThreads.js";
import {DEFAULT_PROFILE_TIME_LIMIT_MS, MAX_ESTIMATED_MS_PER_POINT, maxEstimatedMsPerPoint, profileCacheKey, profileMachine, type ProfileCacheFacts} from "./profileMachine.js";

describe("the per-point bound: a longer profile measures a slow device's prefill sizes instead of extrapolating them", () => {
    it("keeps 1 s a point under the app's default limit and gives a ten-minute profile 30 s a point", () => {
        expect(maxEstimatedMsPerPoint(DEFAULT_PROFILE_TIME_LIMIT_MS)).toBe(MAX_ESTIMATED_MS_PER_POINT);
        expect(maxEstimatedMsPerPoint(5_000)).toBe(MAX_ESTIMATED_MS_PER_POINT);
        // llvmpipe's 32000×2048 Q8_0 output matmul takes about 6.9 s at 32 tokens: measured in a 600 s profile, not before
        expect(maxEstimatedMsPerPoint(600_000)).toBe(30_000);
    });
});

describe("the profile cache key: the same machine and build reuse a profile, any change measures again", () => {
    const facts: ProfileCacheFacts = {
        host: "box", cpu: "EPYC", ramBytes: 64e9, driver: "", llamaCppRelease: "b7000", buildType: "localBuild", backend: "vulkan",
        devices: ["CPU:EPYC:64000000000", "Vulkan0:llvmpipe (LLVM 15.0.6, 256 bits):2147483648"],
        request: {threads: 2, batchSizes: [1, 32, 128, 512], cpuBatchSizes: [1, 32]},
        ops: [{type: "f16", rows: 64, cols: 64}, {type: "q8_0", rows: 128, cols: 64}], calibrateOverhead: true
    };

    it("is stable for the same facts, whatever the order of the operators", () => {
        expect(profileCacheKey({...facts, ops: [...facts.ops].reverse()})).toBe(profileCacheKey(facts));
    });

    const changes: [string, Partial<ProfileCacheFacts>][] = [
        ["another device", {devices: [...facts.devices, "CUDA0:NVIDIA H100:85000000000"]}],
        ["a device of another size", {devices: ["CPU:EPYC:64000000000", "Vulkan0:llvmpipe (LLVM 15.0.6, 256 bits):4294967296"]}],
        ["a driver update", {driver: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15"}],
        ["another llama.cpp release", {llamaCppRelease: "b7001"}],
        ["another build", {buildType: "prebuilt"}],
        ["another backend", {backend: "cuda"}],
        ["other threads", {request: {...facts.request, threads: 1}}],
        ["other operators", {ops: [{type: "f16", rows: 64, cols: 128}]}]
    ];
    for (const [what, change] of changes) {
        it(`changes with ${what}`, () => {
            expect(profileCacheKey({...facts, ...change})).not.toBe(profileCacheKey(facts));
        });
    }
});

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] profile cache and cancel on the CPU engine: ${probe.reason}`);

/** The engine with its native profiler call counted, and each native result kept. */
function counted(engine: EngineLlama): {engine: EngineLlama; results: NativeProfileResult[]} {
    const results: NativeProfileResult[] = [];
    const native = engine.bindings;
    // the bindings object's properties are read-only: a child object overrides the one call and inherits the rest
    const bindings = Object.create(native, {
        tensorwiseProfileOperators: {
            value: async (request: Parameters<NonNullable<typeof native.tensorwiseProfileOperators>>[0]) => {
                const result = await native.tensorwiseProfileOperators!(request);
                results.push(result);
                return result;
            }
        }
    }) as typeof native;
    return {engine: {...engine, bindings}, results};
}

describe.skipIf(probe.reason != null)("profileMachine on this machine's CPU", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });
    const ops: OperatorShape[] = [{type: "f16", rows: 256, cols: 256}, {type: "f32", rows: 128, cols: 256}];
    // cut short on purpose: a profile stopped by its time limit must be reused too (re-measuring cuts it elsewhere)
    const quick = {calibrateOverhead: false, timeLimitMs: 1, threads: 1} as const;

    it("measures once, then reuses the cached profile (even one cut at its time limit) until asked to re-profile", async () => {
        const cacheDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-profile-cache-"));
        const {engine, results} = counted(probe.engine!);
        const first = await profileMachine(engine, ops, {...quick, cacheDir});
        expect(results).toHaveLength(1);
        expect(first.cachedFile).toBeUndefined();
        expect(first.truncated).toBe(true);
        const files = await readdir(cacheDir);
        expect(files).toHaveLength(1);
        // the marker of a cached profile is never written into the cache
        expect(JSON.parse(await readFile(path.join(cacheDir, files[0]!), "utf8"))).not.toHaveProperty("cachedFile");

        const messages: string[] = [];
        const second = await profileMachine(engine, ops, {...quick, cacheDir, onProgress: (message) => messages.push(message)});
        expect(results).toHaveLength(1);
        expect(second.cachedFile).toBe(path.join(cacheDir, files[0]!));
        expect(second.createdAt).toBe(first.createdAt);
        expect(second.matmuls).toEqual(first.matmuls);
        expect(messages.join("\n")).toContain("reusing this machine's profile");

        const refreshed = await profileMachine(engine, ops, {...quick, cacheDir, refresh: true});
        expect(results).toHaveLength(2);
        expect(refreshed.cachedFile).toBeUndefined();
        const third = await profileMachine(engine, ops, {...quick, cacheDir});
        expect(third.createdAt).toBe(refreshed.createdAt);
        expect(results).toHaveLength(2);

        // another measurement (another thread count) is another key: measured, and cached beside the first
        await profileMachine(engine, ops, {...quick, cacheDir, threads: 2});
        expect(results).toHaveLength(3);
        expect(await readdir(cacheDir)).toHaveLength(2);
    }, 120_000);

    it("measures again instead of reusing a saved profile that has no prompt-sized timing on a device", async () => {
        // what an older build's time limit could leave (bench/results/2026-11-27-h100/README.md): decode timings only
        const cacheDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-profile-decode-only-"));
        const {engine, results} = counted(probe.engine!);
        const first = await profileMachine(engine, ops, {...quick, cacheDir});
        expect(first.matmuls.some((m) => m.batch > 1 && m.medianUs > 0)).toBe(true);
        const [file] = await readdir(cacheDir);
        const saved = JSON.parse(await readFile(path.join(cacheDir, file!), "utf8")) as MachineProfile;
        await writeFile(path.join(cacheDir, file!), JSON.stringify({...saved, matmuls: saved.matmuls.filter((m) => m.batch === 1)}));
        const messages: string[] = [];
        const second = await profileMachine(engine, ops, {...quick, cacheDir, onProgress: (message) => messages.push(message)});
        expect(results).toHaveLength(2);
        expect(second.cachedFile).toBeUndefined();
        expect(second.matmuls.some((m) => m.batch > 1 && m.medianUs > 0)).toBe(true);
        expect(messages.join("\n")).toContain("no prompt-sized timing on CPU");
    }, 120_000);

    it("a profile measured while other programs keep every core busy records it and says its timings may be slow", async () => {
        // what a user profiling during a build or a game gets: every timing stretched by the other programs' turns on the
        // cores (cpuContention.ts); one busy program per core, and a profile using every core
        const cores = os.cpus().length;
        const messages: string[] = [];
        const cacheDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-profile-busy-"));
        const profile = await whileCoresBusy(cores, () => profileMachine(probe.engine!, ops, {calibrateOverhead: false, timeLimitMs: 1500, threads: cores,
            cacheDir, onProgress: (message) => messages.push(message)}));
        expect(profile.cpuContention?.cores).toBe(cores);
        expect(profile.cpuContention!.otherCores).toBeGreaterThan(0.5);
        expect(isContended(profile.cpuContention!)).toBe(true);
        expect(messages.at(-1)).toMatch(/other programs kept \d+\.\d of \d+ CPU cores busy: timings may be slow/);
    }, 120_000);

    it("a retake at another thread count keeps the busier record of the two measurements it joins, each with its own thread count", async () => {
        // the GPU part of a retaken profile is base's: a busy base (2 threads of 2 cores beside 1.2 cores of other work)
        // stays busy for a 1-thread plan, where judged by the plan's 1 thread it would not be (the look at the app found it)
        const cacheDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-profile-retake-busy-"));
        const base = {...await profileMachine(probe.engine!, ops, {...quick, cacheDir, threads: 2}), cpuContention: {otherCores: 1.2, cores: 2, threads: 2}};
        const retaken = await profileAtThreads(probe.engine!, base, 1, {...quick, cacheDir});
        expect(retaken.threads).toBe(1);
        expect(busier(retaken.cpuContention, base.cpuContention)).toBe(retaken.cpuContention);
        expect(isContended(retaken.cpuContention!)).toBe(true);
    }, 120_000);

    it("at another thread count, a MoE model's expert matmuls are timed again at that count, not kept from the first", async () => {
        const cacheDir = await mkdtemp(path.join(os.tmpdir(), "tensorwise-profile-threads-"));
        const {engine, results} = counted(probe.engine!);
        const expertOps = [{type: "f16" as const, rows: 256, cols: 128, count: 4, used: 2}];
        const options = {calibrateOverhead: false, timeLimitMs: 60_000, cacheDir, expertOps};
        const base = await profileMachine(engine, ops, {...options, threads: 2});
        const baseExperts = (base.expertMatmuls ?? []).filter((m) => m.device === "CPU");
        expect(baseExperts.length).toBeGreaterThan(0);
        const one = await profileAtThreads(engine, base, 1, options);
        expect(one.threads).toBe(1);
        // the 1-thread measurement asked for the expert ops, and the profile carries what it measured
        expect(results).toHaveLength(2);
        expect(results[1]!.expertMatmuls?.length).toBe(baseExperts.length);
        expect((one.expertMatmuls ?? []).filter((m) => m.device === "CPU").map((m) => m.medianUs))
            .toEqual(results[1]!.expertMatmuls!.filter((m) => m.device === "CPU").map((m) => m.medianUs));
    }, 120_000);

    it("an abort before measuring starts measures nothing", async () => {
        const {engine, results} = counted(probe.engine!);
        await expect(profileMachine(engine, ops, {...quick, signal: AbortSignal.abort()})).rejects.toThrow();
        expect(results).toHaveLength(0);
    });
});
