/**
 * Plans one model over several devices (the CPU, local GPUs, rpc-servers' devices): the K-device MILP against two
 * baselines, llama.cpp's own layer split over every device (`-ts` by free memory) and the best plan on the host and the
 * one local GPU alone; the winner is the one predicted fastest, so the MILP's plan is never predicted worse than a
 * baseline.
 */
import type {DevicePlanKind} from "../../../contract/strategies.js";
import {compilePlacement} from "../../placement/compilePlacement.js";
import type {Placement, TensorBufferOverride} from "../../placement/Placement.js";
import {pinEveryTensor} from "../../placement/pinEveryTensor.js";
import type {CostInputs} from "../costModel.js";
import type {Workload} from "../types.js";
import type {ResolvedSettings} from "../../../contract/settings.js";
import {deviceCostTable, type DeviceCostTable} from "./deviceCostTable.js";
import {layerSplitDevices} from "./layerSplitDevices.js";
import type {PlanDevice} from "./PlanDevice.js";
import {priceDevicePlan, type DevicePlanPrediction} from "./priceDevicePlan.js";
import {solveDevicesMilp} from "./solveDevicesMilp.js";

export type {DevicePlanKind};

/** One candidate plan: where every weight op goes, how to load it, and its prediction. */
export type DevicePlan = {
    readonly kind: DevicePlanKind;
    /** Weight op tensor → device index. */
    readonly assignment: ReadonlyMap<string, number>;
    /** Every tensor's buffer type (the input layer is llama.cpp's: the CPU). */
    readonly placement: Placement;
    /** llama.cpp `-ngl` to load with. */
    readonly gpuLayers: number | "max";
    /** Tensor overrides to load with (every tensor pinned: with several devices llama.cpp would split the rest). */
    readonly overrides: readonly TensorBufferOverride[];
    readonly prediction: DevicePlanPrediction;
    readonly notes: readonly string[];
    /** Settings this candidate loads with over the shared ones (the host-only plan: `useGpu` false, mmap on). */
    readonly settings?: Partial<ResolvedSettings>;
};

/** The chosen plan and every candidate, best first. */
export type MultiDevicePlan = {
    readonly best: DevicePlan;
    readonly candidates: readonly DevicePlan[];
    readonly devices: readonly PlanDevice[];
    readonly workload: Workload;
};

/** What {@link planDevices} takes: hardware facts are parameters (fake profiles in tests). */
export type PlanDevicesInputs = {
    readonly cost: CostInputs;
    /** The host first, then the other devices in llama.cpp's order (rpc-servers first, then GPUs). */
    readonly devices: readonly PlanDevice[];
    readonly settings: ResolvedSettings;
    readonly workload: Workload;
    /** Tensors as the loader names them (for compiling overrides); defaults to the planner model's. */
    readonly tensors?: readonly {name: string}[];
};

/** KV device per layer for `-ngl gpuLayers` split by the devices' free memory, as device indexes (0: the host). */
function kvDevices(inputs: PlanDevicesInputs, gpuLayers: number): {perLayer: number[]; output: number} {
    const split = layerSplitDevices(inputs.cost.model.layerCount, gpuLayers, inputs.devices.slice(1).map((d) => d.freeBytes)).map((d) => d + 1);
    return {perLayer: split.slice(0, -1), output: split[split.length - 1]!};
}

function tableFor(inputs: PlanDevicesInputs, kvDevice: readonly number[]): DeviceCostTable {
    return deviceCostTable({cost: inputs.cost, devices: inputs.devices, kvDevice, settings: inputs.settings, workload: inputs.workload});
}

/** The plan as data: every op's device, and each small tensor with the op it follows. */
function placementOf(table: DeviceCostTable, assignment: ReadonlyMap<string, number>): Placement {
    const bufferType = (d: number): string => table.devices[d]!.bufferType;
    const assignments: Record<string, string> = {};
    for (const [tensor, device] of assignment) assignments[tensor] = bufferType(device);
    for (const [tensor, companion] of table.companions) assignments[tensor] = bufferType(companion == null ? 0 : assignment.get(companion) ?? 0);
    const firstDevice = table.devices.find((device) => !device.isHost) ?? table.devices[0]!;
    return {defaultBufferType: firstDevice.bufferType, assignments};
}

/** Packages an assignment; `pin`: every tensor gets an override (else llama.cpp's own layer split loads it). */
function packaged(inputs: PlanDevicesInputs, table: DeviceCostTable, kind: DevicePlanKind, assignment: ReadonlyMap<string, number>,
    gpuLayers: number | "max", notes: string[], pin = true): DevicePlan {
    const placement = placementOf(table, assignment);
    const tensors = inputs.tensors ?? inputs.cost.model.tensors;
    let overrides: readonly TensorBufferOverride[] = [];
    if (pin) {
        const pinned = pinEveryTensor(placement, tensors);
        overrides = compilePlacement(pinned.placement, tensors, {natural: pinned.natural}).overrides;
    }
    return {kind, assignment, placement, gpuLayers, overrides, prediction: priceDevicePlan(table, assignment), notes};
}

/**
 * llama.cpp's layer split over every device (`-ngl N`, split by free memory: `-ts` unset), with the largest N whose
 * plan fits every device; loaded with `gpuLayers` N and no overrides, as llama.cpp does it itself.
 */
export function layersSplitPlan(inputs: PlanDevicesInputs): DevicePlan | null {
    const {model} = inputs.cost;
    for (let n = model.layerCount + 1; n >= 0; n--) {
        const kv = kvDevices(inputs, n);
        const table = tableFor(inputs, kv.perLayer);
        const assignment = new Map<string, number>();
        for (const t of model.tensors) {
            if (t.op == null) continue;
            assignment.set(t.name, t.layer == null ? kv.output : kv.perLayer[t.layer] ?? 0);
        }
        const plan = packaged(inputs, table, "layers-split", assignment, n > model.layerCount ? "max" : n,
            [`llama.cpp's layer split over ${inputs.devices.length - 1} device(s) by free memory, -ngl ${n}`], false);
        if (plan.prediction.fits) return plan;
    }
    return null;
}

/**
 * What `plan` costs for another workload (a benchmark point): its assignment priced with the KV cache as its `-ngl`
 * splits it, for `workload`.
 */
export function predictDevicePlanAt(inputs: PlanDevicesInputs, plan: DevicePlan, workload: Workload): DevicePlanPrediction {
    const at = {...inputs, workload};
    const layers = plan.gpuLayers === "max" ? inputs.cost.model.layerCount + 1 : plan.gpuLayers;
    return priceDevicePlan(tableFor(at, kvDevices(at, layers).perLayer), plan.assignment);
}

/**
 * Plans the model over `inputs.devices`. Throws with the reason when nothing fits (not even the host alone).
 */
export async function planDevices(inputs: PlanDevicesInputs): Promise<MultiDevicePlan> {
    const {layerCount} = inputs.cost.model;
    const candidates: DevicePlan[] = [];
    const split = layersSplitPlan(inputs);
    if (split != null) candidates.push(split);
    // The KV cache follows llama.cpp's layer split of `-ngl` whatever the overrides say, so the MILP is solved for the
    // KV arrangement of every layer offloaded and for that of the layer-split baseline: each of its plans (overrides
    // on top of that -ngl) is then at least as good as the baseline's, which is one of the MILP's feasible points.
    const layerCounts = [...new Set([layerCount + 1, split == null ? layerCount + 1 : split.gpuLayers === "max" ? layerCount + 1 : split.gpuLayers])];
    const gpu = inputs.devices.findIndex((device) => !device.isHost && device.offloadsHostWeights);
    for (const n of layerCounts) {
        const kv = kvDevices(inputs, n);
        const table = tableFor(inputs, kv.perLayer);
        const gpuLayers = n > layerCount ? "max" : n;
        const solved = await solveDevicesMilp(table);
        if (solved != null)
            candidates.push(packaged(inputs, table, "optimal", solved.assignment, gpuLayers,
                [`K-device MILP (HiGHS, exact) over ${table.devices.map((d) => d.bufferType).join(", ")}, KV cache as -ngl ${n} splits it`]));
        // the best plan on the host and the first local GPU alone, same process (the KV cache still follows the split)
        if (gpu > 0 && n > layerCount) {
            const restricted: DeviceCostTable = {
                ...table,
                nodes: table.nodes.map((node) => node.kind !== "op" ? node : {
                    ...node,
                    prefillUs: node.prefillUs.map((us, d) => (d === 0 || d === gpu ? us : Infinity)),
                    decodeUs: node.decodeUs.map((us, d) => (d === 0 || d === gpu ? us : Infinity))
                })
            };
            const single = await solveDevicesMilp(restricted);
            if (single != null)
                candidates.push(packaged(inputs, table, "single-gpu", single.assignment, gpuLayers,
                    [`the best plan on ${inputs.devices[0]!.bufferType} and ${inputs.devices[gpu]!.bufferType} only`]));
        }
    }
    candidates.push(hostOnlyPlan(inputs));
    const fitting = candidates.filter((plan) => plan.prediction.fits).sort((a, b) => a.prediction.requestMs - b.prediction.requestMs);
    if (fitting.length === 0)
        throw new Error(`no placement of this model fits the memory of ${inputs.devices.map((d) => d.bufferType).join(", ")}: ` +
            "use a smaller context or micro-batch, or add a device");
    return {best: fitting[0]!, candidates: fitting, devices: inputs.devices, workload: inputs.workload};
}

/**
 * Every weight on the host and no other device used at all (llama.cpp's `--device none`: no GPU or rpc-server backend,
 * so nothing offloaded or reserved on them): the plan that fits whenever the host holds the model.
 */
export function hostOnlyPlan(inputs: PlanDevicesInputs): DevicePlan {
    const host = inputs.devices[0]!;
    const settings = {...inputs.settings, useGpu: false, useMmap: true};
    const table = deviceCostTable({cost: inputs.cost, devices: [host], kvDevice: Array.from({length: inputs.cost.model.layerCount}, () => 0),
        settings, workload: inputs.workload});
    const assignment = new Map<string, number>();
    for (const t of inputs.cost.model.tensors) if (t.op != null) assignment.set(t.name, 0);
    const plan = packaged(inputs, table, "optimal", assignment, 0, [`every weight on ${host.bufferType}, no other device used (--device none)`], false);
    // nothing at all on the other devices
    const pad = (perDevice: readonly number[]): number[] => inputs.devices.map((_, i) => perDevice[i] ?? 0);
    const p = plan.prediction;
    return {
        ...plan, settings: {useGpu: false, useMmap: true},
        prediction: {...p, bytesByDevice: pad(p.bytesByDevice), weightBytesByDevice: pad(p.weightBytesByDevice), kvBytesByDevice: pad(p.kvBytesByDevice),
            scratchBytesByDevice: pad(p.scratchBytesByDevice)}
    };
}
