// The K-device planner on hand-sized cost tables whose optima are computed by hand in the comments, then on a fake
// three-device machine (CPU, a GPU, an rpc-server's device) built from the same cost model the app uses.
import {handSettings} from "../testing/handModel.js";
import {describe, expect, it} from "vitest";
import {fakeModel, fakeProfile} from "../testing/fakeProfile.js";
import type {CostNode, DeviceCostTable} from "./deviceCostTable.js";
import {layerSplitDevices} from "./layerSplitDevices.js";
import type {DeviceLink, PlanDevice} from "./PlanDevice.js";
import type {NativeDevice} from "../../native/tensorwiseBindings.js";
import {planDevicesOf} from "./autoPlanDevices.js";
import {planDevices} from "./planDevices.js";
import {edgeUs, priceDevicePlan} from "./priceDevicePlan.js";
import {solveDevicesMilp} from "./solveDevicesMilp.js";

const MiB = 1024 * 1024;

function link(latencyUs: number): DeviceLink {
    return {latencyUs, launchUs: 0, h2dBytesPerUs: 1e12, d2hBytesPerUs: 1e12};
}

function device(name: string, capacityBytes: number, latencyUs: number | null, offloads = false): PlanDevice {
    return {name, bufferType: name, isHost: latencyUs == null, capacityBytes, link: latencyUs == null ? null : link(latencyUs), offloadsHostWeights: offloads, freeBytes: capacityBytes};
}

/** Two ops a, b between the embeddings and the logits; only decode costs (no prompt), one decode step weighed. */
function handTable(options: {a: number[]; b: number[]; gpuLatency: number; rpcLatency: number; rpcCapacity: number}): DeviceCostTable {
    const op = (tensor: string, decodeUs: number[]): CostNode => ({kind: "op", tensor, bytes: 100, prefillUs: [0, 0, 0], decodeUs, offloadable: true});
    return {
        devices: [device("CPU", 1e9, null), device("G", 100, options.gpuLatency, true), device("R", options.rpcCapacity, options.rpcLatency)],
        nodes: [
            {kind: "fixed", label: "embeddings", device: 0, prefillUs: 0, decodeUs: 0},
            op("a", options.a), op("b", options.b),
            {kind: "fixed", label: "logits", device: 0, prefillUs: 0, decodeUs: 0}
        ],
        reservedBytes: [0, 0, 0], kvBytes: [0, 0, 0], scratchBytes: [0, 0, 0], fixedWeightBytes: [0, 0, 0], companions: new Map(), ubatches: [], activationBytesPerToken: 0,
        offloadDevice: 1, offloadMinBatch: 32, genTokens: 2, overheadUs: 0
    };
}

async function solvedPlan(table: DeviceCostTable): Promise<{a: number; b: number; tpotUs: number; objectiveUs: number}> {
    const solved = await solveDevicesMilp(table);
    expect(solved).not.toBeNull();
    const price = priceDevicePlan(table, solved!.assignment);
    return {a: solved!.assignment.get("a")!, b: solved!.assignment.get("b")!, tpotUs: price.tpotMs * 1000, objectiveUs: solved!.objectiveUs};
}

describe("the K-device MILP on hand-computed tables", () => {
    // decode µs of a and b on [CPU, G, R]; G and R hold one 100-byte op each. A switch costs the latency of each
    // device link it crosses (host → G: 1; G → R: 1 + 10; R → host: 10).
    //   a→G, b→R: 10 + 4 + (1 + 11 + 10) = 36   ← optimum
    //   a→R, b→G:  5 + 10 + (10 + 11 + 1) = 37
    //   a→G, b→CPU: 10 + 100 + 2 = 112;  a→CPU, b→G: 100 + 10 + 2 = 112
    it("spreads the ops over both devices when neither holds both, in the cheaper order", async () => {
        const plan = await solvedPlan(handTable({a: [100, 10, 5], b: [100, 10, 4], gpuLatency: 1, rpcLatency: 10, rpcCapacity: 100}));
        expect([plan.a, plan.b]).toEqual([1, 2]);
        expect(plan.tpotUs).toBeCloseTo(36, 9);
        // the objective is the request time: one decode step here (genTokens 2, no prompt)
        expect(plan.objectiveUs).toBeCloseTo(36, 6);
    });

    // the rpc-server's link now costs 100 µs each way:
    //   a→G, b→R: 10 + 4 + (1 + 1 + 100 + 100) = 216
    //   a→CPU, b→G: 90 + 10 + 2 = 102   ← optimum;   a→G, b→CPU: 10 + 100 + 2 = 112
    it("keeps a slow link out of the plan when the host is cheaper than the round trip", async () => {
        const plan = await solvedPlan(handTable({a: [90, 10, 5], b: [100, 10, 4], gpuLatency: 1, rpcLatency: 100, rpcCapacity: 100}));
        expect([plan.a, plan.b]).toEqual([0, 1]);
        expect(plan.tpotUs).toBeCloseTo(102, 9);
    });

    // R now holds both ops: 5 + 4 + (10 + 10) = 29 beats 36
    it("puts consecutive ops on one device when its memory allows, saving the switch between them", async () => {
        const plan = await solvedPlan(handTable({a: [100, 10, 5], b: [100, 10, 4], gpuLatency: 1, rpcLatency: 10, rpcCapacity: 200}));
        expect([plan.a, plan.b]).toEqual([2, 2]);
        expect(plan.tpotUs).toBeCloseTo(29, 9);
    });

    it("reports no plan when the reserved memory alone overflows a device", async () => {
        const table = handTable({a: [100, 10, 5], b: [100, 10, 4], gpuLatency: 1, rpcLatency: 10, rpcCapacity: 100});
        expect(await solveDevicesMilp({...table, reservedBytes: [0, 0, 101], kvBytes: [0, 0, 101]})).toBeNull();
    });

    it("prices a host weight's prompt switches on the offload device for micro-batches of 32 tokens or more", () => {
        const table = {...handTable({a: [100, 10, 5], b: [100, 10, 4], gpuLatency: 1, rpcLatency: 10, rpcCapacity: 100}), ubatches: [64, 16]};
        const [embeddings, a] = [table.nodes[0]!, table.nodes[1]!];
        // decode: no switch (both on the host); 64-token micro-batch: a runs on G (host → G: 1); 16 tokens: on the host
        expect(edgeUs(table, embeddings, 0, a, 0)).toBeCloseTo(1, 9);
        // a on R: host → R in both micro-batches and the decode step: 3 × 10
        expect(edgeUs(table, embeddings, 0, a, 2)).toBeCloseTo(30, 9);
    });
});

describe("layerSplitDevices (llama_model::load_tensors)", () => {
    it("splits layers and the output layer by cumulative share", () => {
        // 4 layers + output = 5 positions 0, .2, .4, .6, .8 against split points [.5, 1]
        expect(layerSplitDevices(4, 5, [1, 1])).toEqual([0, 0, 0, 1, 1]);
        expect(layerSplitDevices(4, 5, [3, 1])).toEqual([0, 0, 0, 0, 1]);
        // -ngl 3: the output layer and the last two layers; positions 0, 1/3, 2/3
        expect(layerSplitDevices(4, 3, [1, 1])).toEqual([-1, -1, 0, 0, 1]);
        expect(layerSplitDevices(4, 0, [1, 1])).toEqual([-1, -1, -1, -1, -1]);
    });
});

describe("planDevices on a fake CPU + GPU + rpc-server machine", () => {
    const model = fakeModel(4, 512, 1536, "f16", 4096, 8, 2);
    const base = fakeProfile(model, {gpuDevice: "Vulkan0"});
    // the rpc-server's device computes like the GPU but sits behind a 200 µs network round trip
    const profile = {
        ...base,
        devices: [...base.devices, {name: "RPC0", type: "gpu" as const}],
        matmuls: [...base.matmuls, ...base.matmuls.filter((p) => p.device === "Vulkan0").map((p) => ({...p, device: "RPC0"}))],
        transfers: [...base.transfers, {device: "RPC0", pinnedH2dBytesPerSec: 1e8, pageableH2dBytesPerSec: 1e8, d2hBytesPerSec: 1e8, switchUs: 250, copySmallUs: 200, launchUs: 50}]
    };
    const weights = model.weightBytes;
    const settings = handSettings({contextSize: 256, batchSize: 128, threads: 2, useMmap: false});
    const devicesWith = (gpuShare: number, rpcShare: number): PlanDevice[] => [
        device("CPU", 64 * 1024 * MiB, null),
        {...device("RPC0[127.0.0.1:50052]", Math.floor(weights * rpcShare) + 8 * MiB, 200), name: "RPC0", link: {latencyUs: 200, launchUs: 50, h2dBytesPerUs: 100, d2hBytesPerUs: 100}},
        {...device("Vulkan0", Math.floor(weights * gpuShare) + 8 * MiB, 10, true), name: "Vulkan0", link: {latencyUs: 10, launchUs: 20, h2dBytesPerUs: 21e3, d2hBytesPerUs: 20e3}}
    ];

    it("assigns every weight, compiles overrides for every tensor, and is never predicted worse than a baseline", async () => {
        const plan = await planDevices({cost: {model, profile, gpuDevice: "Vulkan0"}, devices: devicesWith(0.2, 0.2), settings, workload: {promptTokens: 256, genTokens: 64}});
        const {candidates} = plan;
        expect(plan.best.kind).toBe("optimal");
        for (const other of candidates) expect(plan.best.prediction.requestMs).toBeLessThanOrEqual(other.prediction.requestMs + 1e-9);
        // the K-device MILP's plan (the host-only plan, which uses no device, is checked below)
        const milp = candidates.filter((c) => c.settings == null);
        const best = milp[0]!;
        expect(best.kind).toBe("optimal");
        expect(new Set(candidates.map((c) => c.kind))).toEqual(new Set(["layers-split", "optimal", "single-gpu"]));
        for (const other of milp) expect(best.prediction.requestMs).toBeLessThanOrEqual(other.prediction.requestMs + 1e-9);
        expect(best.prediction.fits).toBe(true);
        expect(best.assignment.size).toBe(model.tensors.filter((t) => t.op != null).length);
        // every tensor but the input layer has a buffer type; the placement names only the three devices
        for (const t of model.tensors.filter((tensor) => tensor.role !== "token_embd"))
            expect(["CPU", "Vulkan0", "RPC0[127.0.0.1:50052]"]).toContain(best.placement.assignments[t.name]);
        for (const t of model.tensors) {
            const match = best.overrides.find((o) => new RegExp(o.pattern).test(t.name));
            expect(match?.bufferType, t.name).toBe(t.role === "token_embd" ? undefined : best.placement.assignments[t.name]);
        }
        // 20% on each device cannot hold the model: the host keeps more than the input layer
        const inputLayer = model.tensors.find((t) => t.role === "token_embd")!.bytes;
        expect(best.prediction.weightBytesByDevice[0]).toBeGreaterThan(inputLayer);
        expect(best.prediction.weightBytesByDevice.reduce((a, b) => a + b, 0)).toBe(model.weightBytes);
    });

    it("a budget too small for anything on a device still plans: every weight on the host, no device used (--device none)", async () => {
        // no room on either device even for the KV cache of one layer
        const tiny = devicesWith(0, 0).map((d) => d.isHost ? d : {...d, capacityBytes: 1024});
        const plan = await planDevices({cost: {model, profile, gpuDevice: "Vulkan0"}, devices: tiny, settings, workload: {promptTokens: 256, genTokens: 64}});
        expect(plan.best.settings).toEqual({useGpu: false, useMmap: true});
        expect(plan.best.gpuLayers).toBe(0);
        expect(plan.best.overrides).toEqual([]);
        expect(plan.best.prediction.bytesByDevice.slice(1)).toEqual([0, 0]);
        expect(plan.best.prediction.weightBytesByDevice[0]).toBe(model.weightBytes);
    });

    // llama.cpp puts layer 0's KV cache on the first device of its split, the rpc-server (llama_model_load_from_file_impl
    // puts rpc-servers first), whatever the overrides say: the remote device is in every plan's attention path. An exact
    // optimum can only get slower when a link gets slower.
    it("a slower link to the rpc-server never predicts a faster plan nor keeps more weights there", async () => {
        const workload = {promptTokens: 256, genTokens: 64};
        const withLatency = (latencyUs: number): PlanDevice[] => devicesWith(0.3, 1).map((d) =>
            d.name === "RPC0" ? {...d, link: {...d.link!, latencyUs}} : d);
        const fast = await planDevices({cost: {model, profile, gpuDevice: "Vulkan0"}, devices: withLatency(20), settings, workload});
        const slow = await planDevices({cost: {model, profile, gpuDevice: "Vulkan0"}, devices: withLatency(20_000), settings, workload});
        expect(fast.best.prediction.weightBytesByDevice[1]).toBeGreaterThan(0);
        expect(slow.best.prediction.requestMs).toBeGreaterThan(fast.best.prediction.requestMs);
        expect(slow.best.prediction.weightBytesByDevice[1]).toBeLessThanOrEqual(fast.best.prediction.weightBytesByDevice[1]!);
    });
});

describe("planDevicesOf: which of the machine's devices a plan can use", () => {
    const model = fakeModel(4, 512, 1536, "f16", 4096, 8, 2);
    const base = fakeProfile(model, {gpuDevice: "Vulkan0"});
    const native = (name: string, type: "cpu" | "gpu", backend: string, bufferType: string): NativeDevice =>
        ({name, description: name === "RPC0" ? "127.0.0.1:50052" : name, type, backend, freeBytes: 4 * 1024 * MiB, totalBytes: 4 * 1024 * MiB, bufferType, hostBufferType: null});
    const machine = [native("CPU", "cpu", "CPU", "CPU"), native("Vulkan0", "gpu", "Vulkan", "Vulkan0"), native("RPC0", "gpu", "RPC", "RPC0[127.0.0.1:50052]")];

    it("leaves out a device whose link the profile never timed, and says so in one sentence naming it and the remedy", () => {
        const truncated = {...base, truncated: true, matmuls: [...base.matmuls, ...base.matmuls.filter((p) => p.device === "Vulkan0").map((p) => ({...p, device: "RPC0"}))]};
        const {devices, notes} = planDevicesOf(machine, truncated, {name: "Vulkan0", budgetBytes: 512 * MiB}, 8 * 1024 * MiB);
        expect(devices.map((d) => d.bufferType)).toEqual(["CPU", "Vulkan0"]);
        expect(notes).toEqual(["RPC0 (127.0.0.1:50052) is left out of the plan because the profile has no link (transfer) timing for it " +
            "(its time limit ran out; profile again with a longer limit)."]);
    });

    it("keeps every device with a link and matmul timings, rpc-servers first as llama.cpp orders them", () => {
        const full = {
            ...base,
            matmuls: [...base.matmuls, ...base.matmuls.filter((p) => p.device === "Vulkan0").map((p) => ({...p, device: "RPC0"}))],
            transfers: [...base.transfers, {device: "RPC0", pinnedH2dBytesPerSec: 1e8, pageableH2dBytesPerSec: 1e8, d2hBytesPerSec: 1e8, switchUs: 250, copySmallUs: 200, launchUs: 50}]
        };
        const {devices, notes} = planDevicesOf(machine, full, {name: "Vulkan0", budgetBytes: 512 * MiB}, 8 * 1024 * MiB);
        expect(notes).toEqual([]);
        expect(devices.map((d) => d.bufferType)).toEqual(["CPU", "RPC0[127.0.0.1:50052]", "Vulkan0"]);
        expect(devices[1]!.link).toEqual({latencyUs: 200, launchUs: 50, h2dBytesPerUs: 100, d2hBytesPerUs: 100});
    });
});
