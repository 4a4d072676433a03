/**
 * The K-device cost table: every weight op's cost on every device, the attention of each layer where its KV cache is,
 * and what each device must reserve, built from the same per-op terms as the two-device cost model (costModel.ts) so
 * that a weight on a device costs what it costs there.
 */
import {attendedKeys, attentionUs, costContext, decodeAttendedKeys, decodeOpUs, executionOrder, kvBytesOfLayer, prefillOpUs, scratchBytes, scratchFor, type CostContext, type CostInputs} from "../costModel.js";
import type {PlannerTensor, Workload} from "../types.js";
import type {ResolvedSettings} from "../../../contract/settings.js";
import type {PlanDevice} from "./PlanDevice.js";

/** A weight op: one variable of the plan. Costs are per device index; `Infinity` where the device cannot run it. */
export type OpNode = {
    readonly kind: "op";
    readonly tensor: string;
    /** The weight's bytes plus those of the small tensors (norms) that go where it goes. */
    readonly bytes: number;
    /** The whole prompt's cost of the op when its weight is on each device, µs. */
    readonly prefillUs: readonly number[];
    /** One decode step's cost of the op when its weight is on each device, µs. */
    readonly decodeUs: readonly number[];
    /**
     * Whether a host weight of this op runs on the offload device for large micro-batches (every op but `output`, which
     * runs once at batch 1: llama.cpp keeps only the rows that need logits, inp_out_ids).
     */
    readonly offloadable: boolean;
};

/** A node whose device the plan does not choose: the embeddings and logits (host), a layer's attention (its KV). */
export type FixedNode = {
    readonly kind: "fixed";
    readonly label: string;
    readonly device: number;
    readonly prefillUs: number;
    readonly decodeUs: number;
};

export type CostNode = OpNode | FixedNode;

/** Everything the K-device MILP and its prediction read. */
export type DeviceCostTable = {
    readonly devices: readonly PlanDevice[];
    /** One step's nodes in execution order, starting and ending on the host (embeddings, logits). */
    readonly nodes: readonly CostNode[];
    /** Bytes each device holds whatever the plan: the sum of the three below. */
    readonly reservedBytes: readonly number[];
    /** KV cache of the layers whose KV is on each device. */
    readonly kvBytes: readonly number[];
    /** Compute buffer (scratch) reserved on each device. */
    readonly scratchBytes: readonly number[];
    /** Weights no choice moves: the input layer (and small tensors without an op) on the host. */
    readonly fixedWeightBytes: readonly number[];
    /** Small tensors (norms) → the weight op they follow; `null`: they stay on the host. */
    readonly companions: ReadonlyMap<string, string | null>;
    /** Tokens of each prompt micro-batch (llama_batch_allocr::split_simple, n_ubatch). */
    readonly ubatches: readonly number[];
    /** Bytes of the activations one token carries across a device switch (the F32 residual stream). */
    readonly activationBytesPerToken: number;
    /** The device host weights are offloaded to for micro-batches ≥ {@link offloadMinBatch}, or `null`. */
    readonly offloadDevice: number | null;
    readonly offloadMinBatch: number;
    readonly genTokens: number;
    /** Fixed cost of one llama_decode call beyond its matmuls, µs. */
    readonly overheadUs: number;
};

/** Activations are F32 in llama.cpp graphs. */
const ACTIVATION_BYTES = 4;

/**
 * The op a small tensor follows: a layer's attention norms go with its first attention weight, its FFN norm with its
 * first FFN weight (the norm's multiply runs where its weight is, ggml_backend_sched, so apart they would add a
 * switch), output_norm with `output`.
 */
function companionOf(t: PlannerTensor, ops: readonly PlannerTensor[]): string | null {
    if (t.layer == null)
        return ops.find((op) => op.role === "output")?.name ?? null;
    const inLayer = ops.filter((op) => op.layer === t.layer);
    const ffn = t.role.startsWith("ffn");
    return (inLayer.find((op) => op.role.startsWith("ffn") === ffn) ?? inLayer[0])?.name ?? null;
}

/**
 * Builds the table for `devices` (index 0 must be the host). `kvDevice[l]` is the device of layer l's KV cache:
 * llama.cpp puts it on the layer's device of its layer split whatever the tensor overrides say
 * (llama_kv_cache ctor, model.dev_layer(il)), see layerSplitDevices.ts.
 */
export function deviceCostTable(options: {
    cost: CostInputs; devices: readonly PlanDevice[]; kvDevice: readonly number[]; settings: ResolvedSettings; workload: Workload;
}): DeviceCostTable {
    const {cost, devices, kvDevice, settings, workload} = options;
    const {model} = cost;
    if (devices[0]?.isHost !== true || devices.slice(1).some((device) => device.isHost))
        throw new Error("a multi-device plan needs the host first and only first");
    // host weights are offloaded for large micro-batches to the first local GPU, unless op offload is off
    const offloadIndex = settings.opOffload ? devices.findIndex((device) => !device.isHost && device.offloadsHostWeights) : -1;
    const offloadDevice = offloadIndex < 0 ? null : offloadIndex;
    // one cost context per device: the host's prices a host weight offloaded to the offload device for large micro-batches
    const contexts: CostContext[] = devices.map((device, i) =>
        costContext({...cost, gpuDevice: device.isHost ? (offloadDevice == null ? null : devices[offloadDevice]!.name) : device.name,
            ...(i === offloadDevice || device.isHost ? {} : {scratchByKey: undefined})}, {...settings, useGpu: true}, workload));
    const host = contexts[0]!;
    const ops = model.tensors.filter((t) => t.op != null);
    const companions = new Map<string, string | null>();
    const extraBytes = new Map<string, number>();
    let hostFixed = 0;
    for (const t of model.tensors) {
        if (t.op != null) continue;
        if (t.role === "token_embd") {
            hostFixed += t.bytes; // the input layer stays on the CPU (llama_model::load_tensors, dev_input)
            continue;
        }
        const companion = companionOf(t, ops);
        companions.set(t.name, companion);
        if (companion == null) hostFixed += t.bytes;
        else extraBytes.set(companion, (extraBytes.get(companion) ?? 0) + t.bytes);
    }

    const attention = (layer: number): FixedNode => {
        const device = kvDevice[layer] ?? 0;
        const cx = contexts[device]!;
        const onDevice = !devices[device]!.isHost;
        let prefillUs = 0;
        let start = 0;
        for (const b of host.ubatches) {
            prefillUs += attentionUs(cx, onDevice, b, attendedKeys(cx, start, b), layer);
            start += b;
        }
        return {kind: "fixed", label: `attention ${layer}`, device, prefillUs, decodeUs: attentionUs(cx, onDevice, 1, decodeAttendedKeys(cx), layer)};
    };
    const nodes: CostNode[] = [{kind: "fixed", label: "embeddings", device: 0, prefillUs: 0, decodeUs: 0}];
    for (const node of executionOrder(model)) {
        if (node.kind === "attn") {
            nodes.push(attention(node.layer));
            continue;
        }
        if (node.kind === "pin") continue; // not asked for: a device plan's layers are priced without llama.cpp's norm pinning
        const t = node.tensor;
        nodes.push({
            kind: "op", tensor: t.name, bytes: t.bytes + (extraBytes.get(t.name) ?? 0), offloadable: t.role !== "output",
            prefillUs: contexts.map((cx, i) => safely(() => prefillOpUs(cx, t, !devices[i]!.isHost))),
            decodeUs: contexts.map((cx, i) => safely(() => decodeOpUs(cx, t, !devices[i]!.isHost)))
        });
    }
    nodes.push({kind: "fixed", label: "logits", device: 0, prefillUs: 0, decodeUs: 0});

    const largestHostCopy = Math.max(0, ...ops.filter((t) => t.role !== "output").map((t) => t.bytes));
    const kv = devices.map((_, i) => kvDevice.reduce((sum, d, layer) => sum + (d === i ? kvBytesOfLayer(model, layer, settings) : 0), 0));
    // the offload device also holds the copy of a host weight it multiplies (measured scratch already includes it)
    const scratch = devices.map((device, i) => device.isHost ? 0
        : i === offloadDevice ? scratchFor(cost, settings, largestHostCopy) : scratchBytes(model, settings, 0));
    const fixedWeightBytes = devices.map((device) => (device.isHost ? hostFixed : 0));
    return {
        devices, nodes, reservedBytes: devices.map((_, i) => kv[i]! + scratch[i]! + fixedWeightBytes[i]!), kvBytes: kv, scratchBytes: scratch,
        fixedWeightBytes, companions, ubatches: host.ubatches, activationBytesPerToken: model.embd * ACTIVATION_BYTES,
        offloadDevice, offloadMinBatch: host.offloadMinBatch, genTokens: workload.genTokens, overheadUs: cost.decodeOverheadUs ?? 0
    };
}

/** A device the profile has no timing for cannot take the op. */
function safely(cost: () => number): number {
    try {
        const us = cost();
        return Number.isFinite(us) && us >= 0 ? us : Infinity;
    } catch {
        return Infinity;
    }
}
