// The benchmark over three real devices on one machine: the CPU, Mesa's software Vulkan device (llvmpipe) and an
// rpc-server on 127.0.0.1 started here (killed after). Needs the RPC build (native/buildRpc.mjs); skipped without it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, it} from "vitest";
import {DEVICE_PLAN_KINDS} from "../../contract/strategies.js";
import {rpcBuildPaths} from "../rpc/rpcBuildPaths.js";
import {rpcServerProcessMissing, startRpcServerProcess, type RpcServerProcess} from "../rpc/testing/rpcServerProcess.js";
import {probeEngine, type EngineProbe} from "../testing/probeEngine.js";
import {requiredOrSkip} from "../testing/requiredOrSkip.js";
import {makeTestModel} from "../testing/testModels.js";
import {deviceVariant, runBench} from "./runBench.js";
import {freePort} from "../testing/freePort.js";

const missing = [rpcBuildPaths("cpu").server, rpcBuildPaths("vulkan").library].find((file) => !fs.existsSync(file));
const buildReason = requiredOrSkip("the multi-device bench test", missing == null ? rpcServerProcessMissing() : `${missing} is not built (npm run native)`);
let server: RpcServerProcess | null = null;
let probe: EngineProbe = {engine: null, reason: buildReason ?? ""};
if (buildReason == null) {
    // in its own process: the engine below runs in this one (rpcServerProcess.ts says why)
    server = await startRpcServerProcess({port: await freePort(), device: "CPU", threads: 1});
    probe = await probeEngine("vulkan", {rpcServers: [server.endpoint.text]});
    if (probe.reason != null)
        console.warn(`[skip] multi-device bench: ${probe.reason}`);
}

describe.skipIf(probe.reason != null)("tensorwise bench over CPU + Vulkan0 + an rpc-server", () => {
    afterAll(async () => {
        await probe.engine?.llama.dispose();
        await server?.stop();
    });

    it("runs the K-device plan against layers-split and single-gpu in one report, each row predicted and measured", async () => {
        const modelPath = await makeTestModel("bench-devices", {preset: "small", layers: 4, type: "f16"});
        const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-bench-devices-"));
        const report = await runBench(probe.engine!, {
            modelPath, budgets: [{label: "50%", budget: {kind: "percent", percent: 50}}], prompts: [16], gens: [4],
            variants: [{label: "cpu", strategy: "cpu", handTuned: false}], repeats: 1, threads: 1, warmupTokens: 2, outDir,
            onProgress: (message) => console.log(message)
        });
        expect(report.runs.map((run) => run.variant.label)).toEqual(["cpu", ...DEVICE_PLAN_KINDS.map((kind) => deviceVariant(kind).label)]);
        for (const run of report.runs) {
            expect(run.status, `${run.variant.label}: ${run.error}`).toBe("ok");
            expect(run.points.map((p) => `${p.kind}${p.tokens}`).sort()).toEqual(["tpot4", "ttft16"]);
            for (const point of run.points) {
                expect(point.medianMs, `${run.variant.label} ${point.kind}`).toBeGreaterThan(0);
                expect(point.predictedMs, `${run.variant.label} ${point.kind}`).toBeGreaterThan(0);
            }
        }
        const optimal = report.runs.find((run) => run.variant.devicePlan === "optimal")!;
        const rpcBufferType = `RPC0[${server!.endpoint.text}]`;
        console.log(report.runs.map((run) => `${run.variant.label}: ` + run.points.map((p) =>
            `${p.kind}${p.tokens} predicted ${p.predictedMs!.toFixed(1)} ms, measured ${p.medianMs.toFixed(1)} ms`).join("; ")).join("\n") +
            "\n(shared 2-core machine: ratios only)");
        // planned over all three devices: none was left out for want of a link timing
        expect(optimal.loads[0]!.plan.notes.find((note) => note.startsWith("weights per device:"))).toContain(rpcBufferType);
        expect(optimal.loads[0]!.plan.notes.join(" ")).not.toMatch(/left out/);
        expect(fs.existsSync(path.join(outDir, "report.html"))).toBe(true);
    }, 900_000);
});
