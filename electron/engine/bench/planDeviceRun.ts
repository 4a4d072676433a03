/**
 * A benchmark run's plan over several devices: one kind of {@link autoPlanDevices}' candidates (the K-device MILP,
 * llama.cpp's layer split by free memory, or the host + one GPU plan), with its prediction for every benchmark point.
 */
import type {BenchPlan, PointKind} from "../../contract/bench.js";
import {contextKnobs} from "../../contract/settings.js";
import type {Budget} from "../../contract/ipc.js";
import type {DevicePlanKind} from "../../contract/strategies.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import {autoPlanDevices} from "../planner/devices/autoPlanDevices.js";
import type {InspectedModel} from "../gguf/inspectGguf.js";
import {predictDevicePlanAt} from "../planner/devices/planDevices.js";
import type {PlannedRun} from "./runBench.js";

/** Options of {@link planDeviceRun}. */
export type PlanDeviceRunOptions = {
    /** The main GPU's budget; every other device gets its free memory less the auto-budget margin. */
    readonly budget: Budget;
    readonly settings: {readonly contextSize: number; readonly threads: number; readonly batchSize: number};
    /** The workload the plan is optimised for (the benchmark's longest prompt and reply). */
    readonly workload: {readonly promptTokens: number; readonly genTokens: number};
    /** Prompt tokens before a TPOT point's generation. */
    readonly tpotPromptTokens: number;
    readonly signal?: AbortSignal;
    /** See RunBenchOptions.profile (runBench.ts). */
    readonly profile?: {readonly timeLimitMs: number};
    /** The model, already validated and inspected by the bench (not read again). */
    readonly model?: InspectedModel;
};

/**
 * Plans over every device of the engine and picks the candidate of `kind`. Throws, in one sentence, when no plan of
 * that kind fits (a baseline can need more memory than the MILP's plan).
 */
export async function planDeviceRun(engine: EngineLlama, modelPath: string, kind: DevicePlanKind, options: PlanDeviceRunOptions): Promise<PlannedRun> {
    const planned = await autoPlanDevices(engine, modelPath, {budget: options.budget, settings: options.settings, workload: options.workload,
        signal: options.signal, model: options.model, profile: options.profile});
    const {plan: multi, inputs, settings} = planned;
    const chosen = multi.candidates.find((candidate) => candidate.kind === kind);
    if (chosen == null)
        throw new Error(`no ${kind} plan fits ${multi.devices.map((d) => d.bufferType).join(", ")} at this budget` +
            `${planned.notes.length > 0 ? ` (${planned.notes.join(" ")})` : ""}`);
    const weights = chosen.prediction.weightBytesByDevice;
    const plan: BenchPlan = {
        gpuLayers: chosen.gpuLayers, overrides: chosen.overrides.map((o) => ({pattern: o.pattern, bufferType: o.bufferType})),
        batchSize: settings.batchSize, contextSize: settings.contextSize, threads: settings.threads, useMmap: settings.useMmap,
        knobs: contextKnobs(settings),
        hostWeightBytes: weights[0] ?? 0,
        gpuWeightBytes: weights.slice(1).reduce((sum, bytes) => sum + bytes, 0),
        predictedVramBytes: chosen.prediction.bytesByDevice.slice(1).reduce((sum, bytes) => sum + bytes, 0),
        notes: [...chosen.notes, ...planned.notes,
            `weights per device: ${multi.devices.map((d, i) => `${d.bufferType} ${((weights[i] ?? 0) / 2 ** 20).toFixed(1)} MiB`).join(", ")}`]
    };
    const predictPoint = (point: PointKind, tokens: number): number | null => {
        const workload = point === "ttft" ? {promptTokens: tokens, genTokens: 1} : {promptTokens: options.tpotPromptTokens, genTokens: tokens};
        const prediction = predictDevicePlanAt(inputs, chosen, workload);
        return point === "ttft" ? prediction.ttftMs : prediction.tpotMs;
    };
    const budget = multi.devices.find((d) => !d.isHost)?.capacityBytes ?? 0;
    return {plan, predictPoint, layerCount: planned.model.layerCount, budget};
}
