/**
 * The planner held to what this project's 2-core VM measured with Mesa's llvmpipe as its GPU — the slow GPU many
 * users have, where llama.cpp's defaults send every prompt through it (bench/results/2026-11-27-vm-llvmpipe/README.md,
 * recorded by bench/record-machine.sh). No GPU needed: the planner plans each budget again from that recording's
 * profiles and compute buffers (testing/recordedBench.ts), and its choice must be a plan that recording measured, and
 * per cell (TTFT at each prompt length, TPOT) the fastest measured there or within 5% of it.
 */
import path from "node:path";
import {describe, expect, it} from "vitest";
import {PROFILE_VERSION} from "../profiler/profileMachine.js";
import {judgeBudget, readRecordedBench} from "./testing/recordedBench.js";

const DIR = path.resolve(import.meta.dirname, "../../../bench/results/2026-11-27-vm-llvmpipe");
const recorded = readRecordedBench(DIR, {report: "bench/report.json", model: "model.json", profiles: "profiles"});

describe("the planner on the recorded 2-core VM with llvmpipe (bench/results/2026-11-27-vm-llvmpipe)", () => {
    it("reads a recording in the current profile format, of the GPU and the CPU", () => {
        expect(recorded.profile.version).toBe(PROFILE_VERSION);
        expect(recorded.gpuDevice).toBe("Vulkan0");
        expect(recorded.cpuOnlyProfile).toBeDefined();
    });

    it("refuses to judge a run that other programs slowed (a recording must be of an idle machine)", async () => {
        const runs = recorded.report.runs.map((run, i) => (i === 0 ? {...run, cpuContention: {otherCores: 1.3, cores: 2, threads: 2}} : run));
        await expect(judgeBudget({...recorded, report: {...recorded.report, runs}}, recorded.report.runs[0]!.budget))
            .rejects.toThrow(/layers was measured while other programs kept 1\.3 of 2 CPU cores busy/);
    });

    for (const budget of recorded.report.settings.budgets) {
        it(`at ${budget}: chooses a measured plan, the fastest of every cell or within 5%`, async () => {
            const verdict = await judgeBudget(recorded, budget);
            expect(verdict.cells, `the planner now chooses ${verdict.choice}, which that recording did not measure: record the machine again ` +
                "(bench/record-machine.sh, the command in its machine.txt)").not.toBeNull();
            for (const cell of verdict.cells!)
                expect(cell.ratio, `${cell.cell}: the choice (${cell.chosen}) measured ${cell.chosenMs.toFixed(1)} ms, ` +
                    `${cell.best} ${cell.bestMs.toFixed(1)} ms`).toBeLessThanOrEqual(1.05);
        }, 120_000);
    }

});
