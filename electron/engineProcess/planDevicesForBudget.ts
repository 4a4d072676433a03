import type {Budget, Prediction, RuntimeSettings} from "../contract/ipc.js";
import type {InspectedModel} from "../engine/gguf/inspectGguf.js";
import type {EngineLlama} from "../engine/native/getEngineLlama.js";
import type {NativeBufferTypeMemory} from "../engine/native/tensorwiseBindings.js";
import {autoPlanDevices, type AutoPlanDevicesResult} from "../engine/planner/devices/autoPlanDevices.js";
import type {DevicePlan} from "../engine/planner/devices/planDevices.js";
import type {Workload} from "../engine/planner/types.js";
import {predictedMemoryReport} from "../engine/runtime/memoryReport.js";
import type {BudgetPlan} from "./planForBudget.js";

/** A multi-device plan packaged for loading and for the UI, with every candidate's prediction for reports. */
export type DevicesBudgetPlan = Omit<BudgetPlan, "result" | "predictRequest" | "deviceKind"> & {
    planned: AutoPlanDevicesResult;
    /** The rpc-servers (`host:port`) the plan uses: the loader renders them as llama.cpp's `--rpc`. */
    rpcServers: readonly string[];
};

/**
 * Profile every device → K-device plan (budget on the main GPU) → what `loadPlaced` and the UI need. `model` is the
 * file already validated and inspected by the caller; it is not read again.
 */
export async function planDevicesForBudget(options: {
    engine: EngineLlama; modelPath: string; model: InspectedModel; budget: Budget; settings: Partial<RuntimeSettings>;
    workload?: Workload; onProgress?: (message: string) => void; signal?: AbortSignal;
}): Promise<DevicesBudgetPlan> {
    const planned = await autoPlanDevices(options.engine, options.modelPath, {
        model: options.model, budget: options.budget, workload: options.workload, onProgress: options.onProgress,
        signal: options.signal, settings: options.settings
    });
    const {best} = planned.plan;
    const rpcServers = planned.plan.devices.filter((d) => /^RPC\d+\[/.test(d.bufferType))
        .map((d) => d.bufferType.slice(d.bufferType.indexOf("[") + 1, -1));
    return {
        placement: best.placement, gpuLayers: best.gpuLayers, overrides: best.overrides, settings: planned.settings,
        strategy: "optimal", prediction: toDevicesPrediction(planned, best), planned, rpcServers,
        // the device planner prices no speculation: a load across several devices runs without it
        speculative: null
    };
}

/** The prediction in the contract's shape: one memory row per device (weights, KV cache, scratch). */
export function toDevicesPrediction(planned: AutoPlanDevicesResult, plan: DevicePlan): Prediction {
    const {devices} = planned.plan;
    const table = plan.prediction;
    const rows = devices.map((device, i): NativeBufferTypeMemory => ({
        name: device.bufferType, isHost: device.isHost, device: device.name, deviceType: device.isHost ? "cpu" : "gpu",
        model: table.weightBytesByDevice[i]!, context: table.kvBytesByDevice[i]!, compute: table.scratchBytesByDevice[i]!
    }));
    return {
        ttftMs: table.ttftMs, tpotMs: table.tpotMs, promptTokens: planned.plan.workload.promptTokens,
        memory: predictedMemoryReport(rows)
    };
}
