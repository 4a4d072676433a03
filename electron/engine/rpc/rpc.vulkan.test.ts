// Three real devices on one machine: the CPU, Mesa's software Vulkan device (llvmpipe) and an rpc-server on 127.0.0.1
// started here (killed after). Needs the RPC build (native/buildRpc.mjs); skipped, with the reason, without it.
import {spawn} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {inspectGguf, type InspectedModel} from "../gguf/inspectGguf.js";
import {validateGgufFile} from "../gguf/validateGguf.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {compilePlacement} from "../placement/compilePlacement.js";
import type {Placement} from "../placement/Placement.js";
import {pinEveryTensor} from "../placement/pinEveryTensor.js";
import {generateGreedy} from "../runtime/generateGreedy.js";
import {PlacedModel, settingsLoadOptions} from "../runtime/PlacedModel.js";
import {probeEngine, type EngineProbe} from "../testing/probeEngine.js";
import {requiredOrSkip} from "../testing/requiredOrSkip.js";
import {makeTestModel} from "../testing/testModels.js";
import {explainRpcAbort} from "./explainRpcAbort.js";
import {rpcBuildPaths} from "./rpcBuildPaths.js";
import {startRpcServer} from "./startRpcServer.js";
import {rpcServerProcessMissing, startRpcServerProcess, type RpcServerProcess} from "./testing/rpcServerProcess.js";
import type {GenerateInChildRequest} from "./testing/generateInChild.js";
import {freePort} from "../testing/freePort.js";

const PROMPT = "The quick brown fox jumps over the lazy dog";
const rootDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const childScript = path.join(rootDir, "dist", "electron", "engine", "rpc", "testing", "generateInChild.js");

const missing = [rpcBuildPaths("cpu").server, rpcBuildPaths("vulkan").library].find((file) => !fs.existsSync(file));
const buildReason = requiredOrSkip("the RPC tests", missing == null ? rpcServerProcessMissing() : `${missing} is not built (npm run native)`);
let server: RpcServerProcess | null = null;
let probe: EngineProbe = {engine: null, reason: buildReason ?? ""};
if (buildReason == null) {
    // in its own process: the engine below runs in this one (rpcServerProcess.ts says why)
    server = await startRpcServerProcess({port: await freePort(), device: "CPU", threads: 1});
    probe = await probeEngine("vulkan", {rpcServers: [server.endpoint.text]});
    if (probe.reason != null)
        console.warn(`[skip] RPC tests: ${probe.reason}`);
}

describe.skipIf(probe.reason != null)("CPU + Vulkan + an rpc-server in one placement", () => {
    let engine: EngineLlama;
    let modelPath: string;
    let model: InspectedModel;
    let rpcBufferType: string;

    beforeAll(async () => {
        engine = probe.engine!;
        modelPath = await makeTestModel("rpc-small", {preset: "small", layers: 4, type: "f16"});
        model = inspectGguf(await validateGgufFile(modelPath));
        rpcBufferType = `RPC0[${server!.endpoint.text}]`;
    });
    afterAll(async () => {
        await engine?.llama.dispose();
        await server?.stop();
    });

    /**
     * Layer i on [CPU, Vulkan0, the rpc-server][i % 3], the output layer on Vulkan0 (the default). Compiled with
     * {@link pinEveryTensor}: an unassigned tensor would follow llama.cpp's layer split over Vulkan0 and the rpc-server.
     */
    function threeDevices(): Placement {
        const devices = ["CPU", "Vulkan0", rpcBufferType];
        const assignments: Record<string, string> = {};
        for (const tensor of model.tensors)
            if (tensor.layer != null)
                assignments[tensor.name] = devices[tensor.layer % devices.length]!;
        return {defaultBufferType: "Vulkan0", assignments};
    }

    it("lists the rpc-server's device and its buffer type beside the local ones", () => {
        const devices = engine.bindings.tensorwiseGetDevices();
        const remote = devices.find((device) => device.name === "RPC0");
        expect(remote).toMatchObject({description: server!.endpoint.text, bufferType: rpcBufferType});
        expect(remote!.totalBytes).toBeGreaterThan(0);
        expect(devices.map((device) => device.name)).toEqual(expect.arrayContaining(["CPU", "Vulkan0", "RPC0"]));
        expect(engine.bindings.tensorwiseGetBufferTypes().map((bufferType) => bufferType.name)).toContain(rpcBufferType);
    });

    it("loads a 3-device plan with the planned weights on each device and generates the all-CPU load's greedy tokens", async () => {
        const placement = threeDevices();
        const pinned = pinEveryTensor(placement, model.tensors);
        const {overrides} = compilePlacement(pinned.placement, model.tensors, {natural: pinned.natural});
        const rpcPlanned = model.tensors.filter((tensor) => placement.assignments[tensor.name] === rpcBufferType)
            .reduce((sum, tensor) => sum + tensor.bytes, 0);

        const results: Record<string, {tokens: number[]; ttftMs: number | null; tpotMs: number | null}> = {};
        for (const [name, options] of [["3 devices", {overrides}], ["all CPU", {gpuLayers: 0}]] as const) {
            const placed = await PlacedModel.load(engine, {modelPath, contextSize: 512, ...options});
            try {
                if (name === "3 devices") {
                    const memory = placed.memory();
                    const onRpc = memory.bufferTypes.find((entry) => entry.bufferType === rpcBufferType);
                    expect(onRpc?.isHost).toBe(false);
                    // ggml pads each tensor to the buffer type's alignment
                    expect(onRpc!.weightsBytes).toBeGreaterThanOrEqual(rpcPlanned);
                    expect(onRpc!.weightsBytes - rpcPlanned).toBeLessThanOrEqual(256 * model.tensors.length);
                    const vulkanPlanned = model.tensors.filter((tensor) => (pinned.placement.assignments[tensor.name]) === "Vulkan0")
                        .reduce((sum, tensor) => sum + tensor.bytes, 0);
                    const onVulkan = memory.bufferTypes.find((entry) => entry.bufferType === "Vulkan0")!.weightsBytes;
                    expect(onVulkan).toBeGreaterThanOrEqual(vulkanPlanned);
                    expect(onVulkan - vulkanPlanned).toBeLessThanOrEqual(256 * model.tensors.length);
                }
                const reply = await generateGreedy(placed, PROMPT, {maxTokens: 16, stopAtEog: false});
                results[name] = {tokens: reply.tokens.map(Number), ttftMs: reply.timing.ttftMs, tpotMs: reply.timing.tpotMs};
            } finally {
                await placed.dispose();
            }
        }
        console.log("measured TTFT/TPOT (ms):", Object.fromEntries(Object.entries(results).map(([name, result]) => [name, {ttft: result.ttftMs, tpot: result.tpotMs}])));
        expect(results["3 devices"]!.tokens).toHaveLength(16);
        expect(results["3 devices"]!.tokens).toEqual(results["all CPU"]!.tokens);
    });

    it("plans the model over CPU, Vulkan0 and the rpc-server (K-device MILP), loads it and generates the all-CPU load's greedy tokens", async () => {
        const {autoPlanDevices} = await import("../planner/devices/autoPlanDevices.js");
        // a budget on Vulkan0 below the weights, so the plan needs more than one device
        const budget = {kind: "mib" as const, mib: Math.max(8, Math.round(model.tensorBytes / 2 ** 20 / 2))};
        const planned = await autoPlanDevices(engine, modelPath, {budget, settings: {contextSize: 512, batchSize: 128, threads: 1},
            workload: {promptTokens: 16, genTokens: 16}, profile: {
            cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-rpc-profile-")),
            // short on purpose: the profiler times every link before any matmul, outside this limit, so even a limit
            // that cuts the matmuls short leaves no device out (the missing matmul points are extrapolated)
            timeLimitMs: 5_000
        }});
        const {best, devices} = planned.plan;
        expect(planned.notes).toEqual([]);
        expect(devices.map((device) => device.bufferType)).toEqual(["CPU", rpcBufferType, "Vulkan0"]);
        // the rpc-server's link was measured with real transfers through its backend
        expect(devices[1]!.link!.latencyUs).toBeGreaterThan(0);
        expect(devices[1]!.link!.h2dBytesPerUs).toBeGreaterThan(0);
        for (const candidate of planned.plan.candidates)
            expect(best.prediction.requestMs).toBeLessThanOrEqual(candidate.prediction.requestMs);

        const results: Record<string, {tokens: number[]; ttftMs: number | null; tpotMs: number | null}> = {};
        for (const [name, options] of [["planned", {gpuLayers: best.gpuLayers, overrides: best.overrides, ...settingsLoadOptions(planned.settings)}],
            ["all CPU", {gpuLayers: 0}]] as const) {
            const placed = await PlacedModel.load(engine, {modelPath, contextSize: 512, batchSize: 128, ...options});
            try {
                if (name === "planned") {
                    // every device holds the weights the plan put there (ggml pads each tensor to its buffer's alignment)
                    const memory = placed.memory();
                    devices.forEach((device, i) => {
                        const planned = best.prediction.weightBytesByDevice[i]!;
                        const measured = memory.bufferTypes.filter((entry) => device.isHost ? entry.isHost : entry.bufferType === device.bufferType)
                            .reduce((sum, entry) => sum + entry.weightsBytes, 0);
                        expect(measured, device.bufferType).toBeGreaterThanOrEqual(planned);
                        expect(measured - planned, device.bufferType).toBeLessThanOrEqual(256 * model.tensors.length);
                    });
                }
                const reply = await generateGreedy(placed, PROMPT, {maxTokens: 16, stopAtEog: false});
                results[name] = {tokens: reply.tokens.map(Number), ttftMs: reply.timing.ttftMs, tpotMs: reply.timing.tpotMs};
            } finally {
                await placed.dispose();
            }
        }
        const MiB = 2 ** 20;
        console.log(`3-device plan (${best.kind}, -ngl ${best.gpuLayers}, ${best.overrides.length} override patterns), weights per device: ` +
            devices.map((device, i) => `${device.bufferType} ${(best.prediction.weightBytesByDevice[i]! / MiB).toFixed(2)} MiB`).join(", "));
        console.log("candidates predicted request ms (ratios only, shared machine):", planned.plan.candidates.map((c) => `${c.kind} ${c.prediction.requestMs.toFixed(1)}`).join(", "));
        console.log(`predicted TTFT ${best.prediction.ttftMs.toFixed(1)} ms / TPOT ${best.prediction.tpotMs.toFixed(1)} ms; measured TTFT ` +
            `${results["planned"]!.ttftMs?.toFixed(1)} ms / TPOT ${results["planned"]!.tpotMs?.toFixed(1)} ms (16-token prompt, shared machine: ratios only)`);
        expect(results["planned"]!.tokens).toHaveLength(16);
        expect(results["planned"]!.tokens).toEqual(results["all CPU"]!.tokens);
    }, 600_000);

    it("plans and loads under a GPU budget too small for any offload (a CPU-only plan fits; it was 'no placement fits')", async () => {
        const {autoPlanDevices} = await import("../planner/devices/autoPlanDevices.js");
        const planned = await autoPlanDevices(engine, modelPath, {budget: {kind: "mib", mib: 1}, settings: {contextSize: 512, batchSize: 128, threads: 1},
            workload: {promptTokens: 16, genTokens: 16}, profile: {cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-rpc-profile-")), timeLimitMs: 5_000}});
        const {best, devices} = planned.plan;
        expect(best.prediction.fits).toBe(true);
        // nothing on Vulkan0 beyond its 1 MiB budget: no weights, and no compute buffer (op offload off, or the GPU unused)
        const vulkan = devices.findIndex((device) => device.bufferType === "Vulkan0");
        expect(best.prediction.bytesByDevice[vulkan]).toBeLessThanOrEqual(2 ** 20);
        const placed = await PlacedModel.load(engine, {modelPath, contextSize: 512, batchSize: 128, gpuLayers: best.gpuLayers, overrides: best.overrides,
            ...settingsLoadOptions(planned.settings)});
        try {
            const onVulkan = placed.memory().bufferTypes.filter((entry) => entry.bufferType === "Vulkan0")
                .reduce((sum, entry) => sum + entry.weightsBytes + entry.kvCacheBytes + entry.scratchBytes, 0);
            expect(onVulkan).toBeLessThanOrEqual(2 ** 20);
            expect((await generateGreedy(placed, PROMPT, {maxTokens: 4, stopAtEog: false})).tokens).toHaveLength(4);
        } finally {
            await placed.dispose();
        }
    }, 600_000);

    it("refuses an address nobody serves with a clear error instead of aborting, and keeps working", async () => {
        const {addRpcServers} = await import("./addRpcServers.js");
        const port = await freePort();
        await expect(addRpcServers(engine, [`127.0.0.1:${port}`])).rejects.toThrow(/no rpc-server answers at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
        await expect(addRpcServers(engine, ["127.0.0.1"])).rejects.toThrow(/host:port/);
        const placed = await PlacedModel.load(engine, {modelPath, contextSize: 256, gpuLayers: 0});
        expect((await generateGreedy(placed, PROMPT, {maxTokens: 2, stopAtEog: false})).tokens).toHaveLength(2);
        await placed.dispose();
    });

    it("an rpc-server killed mid-generation ends only the engine process, with llama.cpp's reason, and the model reloads without it", async () => {
        if (!fs.existsSync(childScript)) {
            requiredOrSkip("the rpc-server crash test", `${childScript} is not built (npx tsc -p tsconfig.json)`);
            return;
        }
        const doomed = await startRpcServer({port: await freePort(), device: "CPU", threads: 1});
        const requestFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tensorwise-rpc-")), "request.json");
        const run = (request: GenerateInChildRequest, onLine: (line: string) => void) => {
            fs.writeFileSync(requestFile, JSON.stringify(request));
            const child = spawn(process.execPath, [childScript, requestFile], {stdio: ["ignore", "pipe", "pipe"], env: process.env});
            let stderr = "";
            child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
            child.stdout.setEncoding("utf8").on("data", (chunk: string) => chunk.split("\n").filter(Boolean).forEach(onLine));
            return new Promise<{code: number | null; signal: NodeJS.Signals | null; stderr: string}>((resolve) =>
                child.once("exit", (code, signal) => resolve({code, signal, stderr})));
        };
        try {
            const remote = `RPC0[${doomed.endpoint.text}]`;
            let tokens = 0;
            const crashed = await run({
                modelPath, prompt: PROMPT, maxTokens: 400, rpcServers: [doomed.endpoint.text],
                overrides: [{pattern: "^blk\\.[0-9]+\\.", bufferType: remote}]
            }, (line) => {
                if (line.startsWith("token ") && ++tokens === 3)
                    doomed.child.kill("SIGKILL");
            });
            expect(tokens, crashed.stderr).toBeGreaterThanOrEqual(3);
            expect(crashed.code === 0 && crashed.signal == null).toBe(false);
            expect(crashed.stderr).toMatch(/Remote RPC server crashed/);
            // what the app shows (EngineClient's crash reason)
            expect(explainRpcAbort(crashed.stderr)).toMatch(/reload the model without it/);

            const lines: string[] = [];
            const again = await run({modelPath, prompt: PROMPT, maxTokens: 4, rpcServers: [], overrides: []}, (line) => lines.push(line));
            expect(again.code, again.stderr).toBe(0);
            expect(lines.filter((line) => line.startsWith("token "))).toHaveLength(4);
        } finally {
            await doomed.stop();
        }
    });
});
