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
});
