// Needs a GPU device: Mesa's software Vulkan (llvmpipe) here and in CI. Skipped, with the reason, where there is none.
import {afterAll, describe, expect, it} from "vitest";
import {probeEngine} from "../testing/probeEngine.js";
import {profileMachine} from "./profileMachine.js";

const probe = await probeEngine("vulkan");
if (probe.reason != null)
    console.warn(`[skip] profiler Vulkan tests: ${probe.reason}`);

describe.skipIf(probe.reason != null)("machine profile on a Vulkan device", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });

    it("keeps the GPU's transfer costs when the time limit cuts the profile short, so a plan can still be priced", async () => {
        const ops = [{type: "f16", rows: 256, cols: 256}, {type: "f16", rows: 768, cols: 256}];
        const profile = await profileMachine(probe.engine!, ops, {timeLimitMs: 1, calibrateOverhead: false, decodeWorkingSetBytes: 4 << 20});
        expect(profile.truncated).toBe(true);
        const gpu = profile.devices.find((d) => d.type === "gpu")!;
        const transfer = profile.transfers.find((t) => t.device === gpu.name);
        expect(transfer).toBeDefined();
        expect(transfer!.pinnedH2dBytesPerSec).toBeGreaterThan(0);
        expect(transfer!.switchUs).toBeGreaterThan(0);
    }, 300_000);

    it("times every device's decode and first prefill micro-batch warm, however short the time limit", async () => {
        // A profile cut by its limit once left a GPU with one cold batch-1 sample per op and no prefill point, and the
        // planner then priced op offload 40× too slow and left the GPU unused (bench/results/2026-11-27-h100/README.md).
        const ops = [{type: "q8_0", rows: 512, cols: 256}, {type: "f16", rows: 768, cols: 256}];
        const profile = await profileMachine(probe.engine!, ops, {timeLimitMs: 1, calibrateOverhead: false, decodeWorkingSetBytes: 4 << 20,
            batchSizes: [1, 32, 512], cpuBatchSizes: [1, 32, 512]});
        expect(profile.truncated).toBe(true);
        expect(profile.devices.map((d) => d.type).sort()).toEqual(["cpu", "gpu"]);
        for (const device of profile.devices)
            for (const op of ops)
                for (const batch of [1, 32]) {
                    const point = profile.matmuls.find((m) => m.device === device.name && m.type === op.type && m.rows === op.rows && m.batch === batch);
                    expect(point, `${device.name} ${op.type} ${op.rows}x${op.cols} at batch ${batch}`).toBeDefined();
                    expect(point!.medianUs).toBeGreaterThan(0);
                    // warmed up, then repeated: more than the one sample a cut point used to keep
                    expect(point!.samples, `${device.name} ${op.type} at batch ${batch}`).toBeGreaterThanOrEqual(2);
                }
        // past the limit nothing else is measured, and nothing is recorded from a single cold run
        expect(profile.matmuls.filter((m) => m.batch === 512 && m.medianUs > 0)).toEqual([]);
    }, 300_000);
});
