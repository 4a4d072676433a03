/**
 * On a CPU-only load llama.cpp repacks the weights whose type the CPU has faster kernels for into an extra buffer type
 * ("AMX" on Xeons with AMX, "CPU_REPACK" for Q4_0/Q4_K on AVX2), and runs those kernels. The profiler must time the same
 * kernels, or every CPU prediction on such a machine is off (measured on an AMX Xeon before the fix: Q8_0 decode
 * predicted 13.9 ms, measured 7.4 ms). On a CPU without such kernels both sides use the plain CPU buffer type.
 */
import {afterAll, describe, expect, it} from "vitest";
import {inspectGguf} from "../gguf/inspectGguf.js";
import {validateGgufOutOfProcess} from "../gguf/validateGgufOutOfProcess.js";
import {PlacedModel} from "../runtime/PlacedModel.js";
import {probeEngine} from "../testing/probeEngine.js";
import {makeTestModel} from "../testing/testModels.js";
import {distinctOperators} from "./operatorShapes.js";
import {profileMachine} from "./profileMachine.js";

const probe = await probeEngine("cpu");
if (probe.reason != null)
    console.warn(`[skip] CPU weight layout of the profiler: ${probe.reason}`);

/** What a plan calls plain host memory: the CPU buffer type, or the same weights mapped from the file. */
const plainCpu = (bufferType: string) => bufferType === "CPU_Mapped" ? "CPU" : bufferType;

describe.skipIf(probe.reason != null)("the profiler times CPU weights in the layout llama.cpp loads them in", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
    });

    for (const type of ["q8_0", "q4_0", "f16"] as const) {
        it(`${type}: every buffer type the CPU timings used holds weights in a CPU-only load, and every repacked one is timed`, async () => {
            const engine = probe.engine!;
            const modelPath = await makeTestModel(`layout-tiny-${type}`, {preset: "tiny", type});
            const placed = await PlacedModel.load(engine, {modelPath, contextSize: 256});
            const loaded = new Set(placed.memory().bufferTypes.filter((entry) => entry.weightsBytes > 0).map((entry) => plainCpu(entry.bufferType)));
            await placed.dispose();

            const model = inspectGguf(await validateGgufOutOfProcess(modelPath, {timeoutMs: 30_000}));
            const profile = await profileMachine(engine, distinctOperators(model.tensors), {
                calibrateOverhead: false, threads: 1, cpuBatchSizes: [1, 32], timeLimitMs: 60_000
            });
            const timedIn = new Set(profile.matmuls.filter((point) => point.device === "CPU" && point.supported).map((point) => point.weightBufferType));
            expect(timedIn.size).toBeGreaterThan(0);
            for (const bufferType of timedIn)
                expect(loaded, `timed in ${bufferType}`).toContain(bufferType);
            for (const bufferType of loaded)
                if (bufferType !== "CPU")
                    expect(timedIn, `llama.cpp repacked weights into ${bufferType}`).toContain(bufferType);
        }, 120_000);
    }
});
