// Needs a GPU device: Mesa's software Vulkan (llvmpipe) here and in CI. Skipped, with the reason, where there is none.
// An Auto-offload profiles the machine in several passes (every device; the CPU as a load without the GPU; the CPU at
// each other thread count). The app shows one bar per step: each bar must only move forward, and a step must not
// come back after the next one began (a newcomer saw the profile bar fill, empty and fill again four times, and a
// finished step counting down again: bench/walk/newcomerWalk.walk.ts).
import {mkdtempSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {progressStep} from "./progressStep.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {autoPlan} from "./autoPlan.js";

const probe = await probeEngine("vulkan");
if (probe.reason != null)
    console.warn(`[skip] Auto-offload progress on Vulkan: ${probe.reason}`);

describe.skipIf(probe.reason != null)("Auto-offload progress across profile passes", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });

    it("each step's bar only moves forward, reaches the end, and no step comes back once the next began", async () => {
        const engine = probe.engine!;
        const modelPath = await makeTestModel("progress-passes", {preset: "tiny", type: "f16"});
        const events: {step: string; fraction: number | null; message: string}[] = [];
        await autoPlan(engine, modelPath, {
            budget: {kind: "mib", mib: 64},
            workload: {promptTokens: 64, genTokens: 8},
            // no thread count: the planner compares each count, retaking the CPU at the others
            settings: {contextSize: 256},
            profile: {cacheDir: mkdtempSync(path.join(os.tmpdir(), "tensorwise-progress-")), timeLimitMs: 1500, calibrateOverhead: false},
            onProgress: (message, fraction) => events.push({step: progressStep(message), fraction: fraction ?? null, message})
        });
        const order = [...new Set(events.map((event) => event.step))];
        // steps in order, each once: a later step's first event comes after the earlier step's last
        for (const [index, step] of order.entries()) {
            const last = events.findLastIndex((event) => event.step === step);
            const nextFirst = index + 1 < order.length ? events.findIndex((event) => event.step === order[index + 1]) : events.length;
            expect(last, `${step} came back after ${order[index + 1]} began:\n${events.map((e) => `${e.step} ${e.fraction} ${e.message}`).join("\n")}`)
                .toBeLessThan(nextFirst);
        }
        for (const step of order) {
            const fractions = events.filter((event) => event.step === step && event.fraction != null).map((event) => event.fraction!);
            for (let i = 1; i < fractions.length; i++)
                expect(fractions[i], `${step}: ${fractions.join(", ")}`).toBeGreaterThanOrEqual(fractions[i - 1]!);
        }
        const profile = events.filter((event) => event.step === "profile");
        expect(profile.at(-1)?.fraction).toBe(1);
        // Vulkan0 is visible: every device, then the CPU as a load without it — two numbered passes of one bar
        expect(profile.map((event) => event.message).join("\n")).toMatch(/pass 2 of 2/);
        const retakes = events.filter((event) => event.message.includes("choosing the thread count"));
        if (engine.llama.maxThreads > 1) {
            expect(retakes.length, "the CPU retaken at another thread count").toBeGreaterThan(0);
            expect(retakes.at(-1)?.fraction).toBe(1);
        }
    }, 300_000);
});
