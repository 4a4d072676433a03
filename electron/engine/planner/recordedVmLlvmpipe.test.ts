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
