/**
 * What a K-device assignment costs: TTFT, TPOT and one workload request, and the bytes on each device. The MILP
 * (solveDevicesMilp.ts) minimises exactly this request time; both read their terms from here.
 */
import type {CostNode, DeviceCostTable} from "./deviceCostTable.js";

/**
 * One device switch carrying `tokens` tokens' activations from device `from` to device `to`, µs. ggml_backend_sched
 * starts a new split there and copies the split's inputs across (ggml_backend_sched_compute_splits,
 * ggml_backend_tensor_copy): out of a device through its link (latency + bytes / device→host bandwidth), into a
 * device through its link (latency + bytes / host→device bandwidth) plus the launch of the split's graph. The host
 * side is free; a copy between two devices passes through the host and pays both links. This is the T_data term of the
 * patent "Computation task allocation system for distributed inference of large language models" (claim 3:
 * Σ (L_ij + t_ij), link latency plus t_ij = O_ij / B_ij, the data size over the link's bandwidth).
 */
export function hopUs(table: DeviceCostTable, from: number, to: number, tokens: number): number {
    if (from === to) return 0;
    const bytes = tokens * table.activationBytesPerToken;
    let us = 0;
    const out = table.devices[from]!.link;
    if (out != null) us += out.latencyUs + bytes / Math.max(out.d2hBytesPerUs, 1e-9);
    const into = table.devices[to]!.link;
    if (into != null) us += into.latencyUs + into.launchUs + bytes / Math.max(into.h2dBytesPerUs, 1e-9);
    return us;
}

/**
 * Where a node runs for a micro-batch of `tokens`: a host weight of an offloadable op runs on the offload device once
 * the micro-batch reaches the backend's op_offload_min_batch_size (ggml_backend_sched_backend_id_from_cur,
 * ggml_backend_offload_op), everything else where its weight (or KV cache) is.
 */
export function runsOn(table: DeviceCostTable, node: CostNode, device: number, tokens: number): number {
    if (node.kind === "fixed") return node.device;
    const offloaded = device === 0 && node.offloadable && table.offloadDevice != null && tokens >= table.offloadMinBatch;
    return offloaded ? table.offloadDevice! : device;
}

/**
 * The request-time weight of consecutive nodes `a` (on device `da`) and `b` (on `db`): their switch in every prompt
 * micro-batch plus (genTokens − 1) decode steps' switches.
 */
export function edgeUs(table: DeviceCostTable, a: CostNode, da: number, b: CostNode, db: number): number {
    let us = (table.genTokens - 1) * hopUs(table, da, db, 1);
    for (const tokens of table.ubatches) us += hopUs(table, runsOn(table, a, da, tokens), runsOn(table, b, db, tokens), tokens);
    return us;
}

/** A K-device plan's prediction. */
export type DevicePlanPrediction = {
    readonly ttftMs: number;
    readonly tpotMs: number;
    /** TTFT + (genTokens − 1) × TPOT: the planner's objective. */
    readonly requestMs: number;
    /** Bytes on each device (weights + reserved), by device index. */
    readonly bytesByDevice: readonly number[];
    /** Weight bytes on each device (the input layer on the host included), by device index. */
    readonly weightBytesByDevice: readonly number[];
    /** KV cache bytes on each device (where llama.cpp's layer split puts them). */
    readonly kvBytesByDevice: readonly number[];
    /** Scratch (compute buffer) bytes reserved on each device. */
    readonly scratchBytesByDevice: readonly number[];
    /** Device switches in one decode step. */
    readonly decodeSwitches: number;
    /** Whether every device holds at most its capacity. */
    readonly fits: boolean;
};

/** Prices `assignment` (weight op tensor name → device index; every op must be assigned). */
export function priceDevicePlan(table: DeviceCostTable, assignment: ReadonlyMap<string, number>): DevicePlanPrediction {
    const deviceOf = (node: CostNode): number => {
        if (node.kind === "fixed") return node.device;
        const device = assignment.get(node.tensor);
        if (device == null) throw new Error(`the plan assigns no device to ${node.tensor}`);
        return device;
    };
    let ttft = table.ubatches.length * table.overheadUs;
    let tpot = table.overheadUs;
    let switches = 0;
    const weights = [...table.fixedWeightBytes];
    table.nodes.forEach((node, i) => {
        const device = deviceOf(node);
        if (node.kind === "op") {
            ttft += node.prefillUs[device]!;
            tpot += node.decodeUs[device]!;
            weights[device]! += node.bytes;
        } else {
            ttft += node.prefillUs;
            tpot += node.decodeUs;
        }
        const next = table.nodes[i + 1];
        if (next == null) return;
        const nextDevice = deviceOf(next);
        if (nextDevice !== device) switches++;
        tpot += hopUs(table, device, nextDevice, 1);
        for (const tokens of table.ubatches) ttft += hopUs(table, runsOn(table, node, device, tokens), runsOn(table, next, nextDevice, tokens), tokens);
    });
    // a device that holds no weight and no KV cache and is not where host weights are offloaded runs nothing: llama.cpp
    // reserves no compute buffer on it (the MILP still reserves one, to stay on the safe side)
    const scratch = table.scratchBytes.map((bytes, i) => i === 0 || i === table.offloadDevice || weights[i]! > table.fixedWeightBytes[i]! ||
        table.kvBytes[i]! > 0 ? bytes : 0);
    const bytesByDevice = weights.map((bytes, i) => bytes + table.kvBytes[i]! + scratch[i]!);
    return {
        ttftMs: ttft / 1000,
        tpotMs: tpot / 1000,
        requestMs: (ttft + Math.max(0, table.genTokens - 1) * tpot) / 1000,
        bytesByDevice,
        weightBytesByDevice: weights,
        kvBytesByDevice: table.kvBytes,
        scratchBytesByDevice: scratch,
        decodeSwitches: switches,
        fits: bytesByDevice.every((bytes, i) => bytes <= table.devices[i]!.capacityBytes)
    };
}
