/** Auto-offload over several devices: profile every device and link of this process, then plan (the caller loads). */
import os from "node:os";
import type {InspectedModel} from "../../gguf/inspectGguf.js";
import type {EngineLlama} from "../../native/getEngineLlama.js";
import type {NativeDevice} from "../../native/tensorwiseBindings.js";
import type {MachineProfile} from "../../profiler/MachineProfile.js";
import {prepareStrategyInputs, type AutoPlanOptions} from "../autoPlan.js";
import {budgetBytes} from "../budget.js";
import type {ResolvedSettings} from "../../../contract/settings.js";
import type {DeviceLink, PlanDevice} from "./PlanDevice.js";
import {planDevices, type MultiDevicePlan, type PlanDevicesInputs} from "./planDevices.js";

/** Share of the host's free memory a plan may fill (the rest: the app, the OS, other processes). */
const HOST_MEMORY_SHARE = 0.8;

/** Whether a device takes weights in a multi-device plan (GPUs, iGPUs and rpc-servers' devices). */
function isPlanDevice(device: NativeDevice): boolean {
    return device.type === "gpu" || device.type === "igpu";
}

/** The non-host devices of this process that a plan can use. */
export function planDeviceCount(devices: readonly NativeDevice[]): number {
    return devices.filter(isPlanDevice).length;
}

/** The link to `name` as the profile measured it (real tensor transfers through its backend), or `null`. */
export function linkOf(profile: MachineProfile, name: string): DeviceLink | null {
    const transfer = profile.transfers.find((t) => t.device === name);
    if (transfer == null || !(transfer.pageableH2dBytesPerSec > 0) || !(transfer.d2hBytesPerSec > 0)) return null;
    return {
        latencyUs: Math.max(0, transfer.copySmallUs),
        launchUs: Math.max(0, transfer.launchUs),
        h2dBytesPerUs: transfer.pageableH2dBytesPerSec / 1e6,
        d2hBytesPerUs: transfer.d2hBytesPerSec / 1e6
    };
}

/**
 * The devices of a plan, host first, then in llama.cpp's device order (rpc-servers first, then GPUs:
 * llama_model_load_from_file_impl). `mainGpu` takes the user's budget; every other device its free memory less
 * the auto-budget margin (budget.ts). A device the profile has no link or matmul timing for is left out, with a note.
 */
export function planDevicesOf(devices: readonly NativeDevice[], profile: MachineProfile, mainGpu: {name: string; budgetBytes: number} | null,
    hostFreeBytes: number): {devices: PlanDevice[]; notes: string[]} {
    const notes: string[] = [];
    const host = devices.find((d) => d.type === "cpu");
    const result: PlanDevice[] = [{
        name: host?.name ?? "CPU", bufferType: "CPU", isHost: true, capacityBytes: Math.floor(hostFreeBytes * HOST_MEMORY_SHARE),
        link: null, offloadsHostWeights: false, freeBytes: hostFreeBytes
    }];
    const ordered = [...devices.filter((d) => isPlanDevice(d) && d.backend === "RPC"), ...devices.filter((d) => isPlanDevice(d) && d.backend !== "RPC")];
    for (const device of ordered) {
        const link = linkOf(profile, device.name);
        const timed = profile.matmuls.some((p) => p.device === device.name && p.supported && p.medianUs > 0);
        if (link == null || !timed || device.bufferType == null) {
            const missing = device.bufferType == null ? "buffer type" : link == null ? "link (transfer)" : "matmul";
            notes.push(`${device.name} (${device.description}) is left out of the plan because the profile has no ${missing} timing for it` +
                `${profile.truncated ? " (its time limit ran out; profile again with a longer limit)" : ""}.`);
            continue;
        }
        const capacityBytes = device.name === mainGpu?.name ? mainGpu.budgetBytes
            : budgetBytes({kind: "auto"}, {gpuFreeBytes: device.freeBytes, weightBytes: 0});
        result.push({
            name: device.name, bufferType: device.bufferType, isHost: false, capacityBytes, link,
            offloadsHostWeights: device.backend !== "RPC", freeBytes: device.freeBytes
        });
    }
    return {devices: result, notes};
}

/** The multi-device plan and what it was planned from. */
export type AutoPlanDevicesResult = {
    readonly plan: MultiDevicePlan;
    readonly settings: ResolvedSettings;
    readonly model: InspectedModel;
    readonly profile: MachineProfile;
    readonly notes: readonly string[];
    /** What the plan was made from (to price it for other workloads: predictDevicePlanAt). */
    readonly inputs: PlanDevicesInputs;
};

/**
 * Validates and inspects the model, profiles every device of this process and its link (cached with the profile),
 * and plans over all of them. Host weights go to pinned memory (mmap off), as for every mixed plan.
 */
export async function autoPlanDevices(engine: EngineLlama, modelPath: string, options: Omit<AutoPlanOptions, "strategy"> = {}): Promise<AutoPlanDevicesResult> {
    const {inputs, model, profile} = await prepareStrategyInputs(engine, modelPath, options);
    const machineDevices = engine.bindings.tensorwiseGetDevices();
    const main = inputs.cost.gpuDevice;
    const {devices, notes} = planDevicesOf(machineDevices, profile, main == null ? null : {name: main, budgetBytes: inputs.budgetBytes}, os.freemem());
    options.onProgress?.(`planning over ${devices.map((d) => d.bufferType).join(", ")}`);
    // with op offload on and off (unless chosen): off, no prompt op is copied to the GPU and nothing reserved there for it
    let best: {plan: MultiDevicePlan; inputs: PlanDevicesInputs} | null = null;
    for (const opOffload of inputs.chosen?.opOffload != null ? [inputs.chosen.opOffload] : [true, false]) {
        const settings: ResolvedSettings = {...inputs.settings, useMmap: false, opOffload};
        const planInputs: PlanDevicesInputs = {cost: inputs.cost, devices, settings, workload: inputs.workload, tensors: model.tensors};
        const plan = await planDevices(planInputs);
        if (best == null || plan.best.prediction.requestMs < best.plan.best.prediction.requestMs) best = {plan, inputs: planInputs};
    }
    const {plan, inputs: planInputs} = best!;
    return {plan, settings: {...planInputs.settings, ...plan.best.settings}, model, profile, notes, inputs: planInputs};
}
