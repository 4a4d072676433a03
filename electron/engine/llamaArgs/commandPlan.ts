/**
 * A user's llama.cpp command, priced on this machine like any plan: the load it asks for (layers, overrides in
 * llama.cpp's order, knobs) resolved per tensor the way llama.cpp resolves it, TTFT/TPOT by the measured cost model,
 * memory by llama.cpp's own no-alloc simulation of exactly that load — and set beside the planner's choice, tensor by
 * tensor, with what each difference costs.
 */
import {isHostBufferType} from "../../contract/memory.js";
import {isKvCacheType, type ResolvedSettings} from "../../contract/settings.js";
import type {TensorBufferOverride} from "../placement/Placement.js";
import {costContext, predict} from "../planner/costModel.js";
import {layerSplit, withOverrides} from "../planner/resolvePlacement.js";
import type {VramSimulator} from "../planner/simulateVram.js";
import {costInputsFor, finishPlan, type StrategyInputs, type StrategyResult} from "../planner/strategies/StrategyResult.js";
import type {ResolvedPlacement} from "../planner/types.js";
import type {CommandNote, LlamaCommand} from "./parseLlamaCommand.js";

const MiB = 2 ** 20;

/** llama.cpp's defaults where a command says nothing. source: common_params in common/common.h. */
export const LLAMA_COMMAND_DEFAULTS = {ubatch: 512, batch: 2048, fitTargetMiB: 1024} as const;

/** What this machine offers a command: its GPU (one, or none) and how much of it is free now. */
export type CommandMachine = {
    /** The GPU's llama.cpp device and buffer-type name (`Vulkan0`, `CUDA0`); `null` without one. */
    readonly gpu: {readonly name: string; readonly freeBytes: number} | null;
    /** The model's trained context (`<arch>.context_length`): llama.cpp's context when `-c` is 0 or absent. */
    readonly trainedContextSize: number | null;
};

/** The load a command asks for, in the planner's terms, or why it cannot be priced here. */
export type CommandLoad = {
    readonly gpuLayers: number;
    readonly overrides: readonly TensorBufferOverride[];
    readonly settings: ResolvedSettings;
    /** `-ngl auto` with `--fit` on and no overrides: llama.cpp's own fitting decides the layers (priced as `fit`). */
    readonly fitted: boolean;
    readonly notes: readonly string[];
};

/** Turns a command into a load on this machine; `refused` names what this machine or tensorwise cannot honour. */
export function commandLoad(command: LlamaCommand, inputs: Pick<StrategyInputs, "cost" | "settings">, machine: CommandMachine):
    {load: CommandLoad; refused: readonly CommandNote[]} | {load: null; refused: readonly CommandNote[]} {
    const refused: CommandNote[] = [...command.refused];
    const notes: string[] = [];
    const {model} = inputs.cost;
    const gpu = machine.gpu;
    const bufferTypes = ["CPU", ...(gpu != null ? [gpu.name] : [])];
    const useGpu = gpu != null && (command.devices == null || command.devices.length > 0);
    if (command.devices != null && command.devices.length > 0) {
        const unknown = command.devices.filter((device) => device !== gpu?.name);
        if (unknown.length > 0) refused.push({flag: "-dev", why: `no device ${unknown.join(", ")} here (this machine has ${gpu?.name ?? "no GPU"})`});
        else if (command.devices.length > 1) refused.push({flag: "-dev", why: "one device named twice"});
    }
    if (command.splitMode === "row" || command.splitMode === "tensor")
        refused.push({flag: "-sm", why: `split mode ${command.splitMode} spreads each weight over several GPUs; this machine prices one`});
    if (command.tensorSplit != null && command.tensorSplit.filter((share) => share > 0).length > 1)
        refused.push({flag: "-ts", why: "a split over several GPUs; tensorwise prices one GPU here (several devices: tensorwise plan --devices)"});
    if (command.mainGpu != null && command.mainGpu > 0) refused.push({flag: "-mg", why: `GPU ${command.mainGpu} does not exist here (one GPU, index 0)`});
    for (const override of command.overrides) {
        if (!bufferTypes.includes(override.bufferType))
            refused.push({flag: override.from, why: `unknown buffer type ${override.bufferType} (llama.cpp here knows ${bufferTypes.join(", ")}); a command from another machine needs this one's device name`});
    }
    const kvK: string = command.cacheTypeK ?? "f16";
    const kvV = command.cacheTypeV ?? "f16";
    if (kvK !== kvV) refused.push({flag: "-ctk/-ctv", why: `K as ${kvK} and V as ${kvV}: tensorwise loads both caches in one type`});
    else if (!isKvCacheType(kvK)) refused.push({flag: "-ctk", why: `a ${kvK} KV cache is not one tensorwise loads (f16, q8_0, q4_0)`});
    if (command.repack === false) refused.push({flag: "--no-repack", why: "tensorwise loads keep llama.cpp's repacked CPU weights; a load without them is not priced"});
    if (refused.length > 0 || !isKvCacheType(kvK)) return {load: null, refused};

    const layersAll = model.layerCount + 1;
    const fitted = command.gpuLayers === "auto" && command.fit && command.overrides.length === 0 && useGpu;
    const gpuLayers = !useGpu ? 0 : typeof command.gpuLayers === "number" ? Math.min(command.gpuLayers, layersAll) : layersAll;
    if (command.gpuLayers === "auto" && !fitted && useGpu)
        notes.push(command.overrides.length > 0 ? "-ngl auto with overrides: llama.cpp's fitting stands aside (common_fit_params aborts when overrides are set) and every layer is offloaded"
            : "-ngl auto with --fit off: every layer offloaded (llama.cpp's n_gpu_layers −1)");
    const ubatch = Math.min(command.ubatch ?? LLAMA_COMMAND_DEFAULTS.ubatch, command.batch ?? LLAMA_COMMAND_DEFAULTS.batch);
    if (command.batch != null && command.batch > ubatch)
        notes.push(`-b ${command.batch}: the prompt is still computed ${ubatch} tokens at a time (-ub); priced at micro-batch ${ubatch}`);
    const contextSize = command.contextSize != null && command.contextSize > 0 ? command.contextSize : machine.trainedContextSize ?? inputs.settings.contextSize;
    if (command.contextSize == null || command.contextSize === 0)
        notes.push(`no -c: llama.cpp takes the model's trained context, ${contextSize} tokens${command.fit ? " (its --fit may shrink it to fit; priced at the full context)" : ""}`);
    if (command.parallel != null && command.parallel > 1)
        notes.push(`-np ${command.parallel}: the ${contextSize}-token KV cache is shared by ${command.parallel} slots; priced as one request at a time`);
    const flashAttention = command.flashAttention === "off" ? false : true;
    if (command.flashAttention == null || command.flashAttention === "auto")
        notes.push("-fa auto: llama.cpp turns flash attention on where every device runs it (llama_context's auto check); priced on");
    const loadMode = command.loadMode ?? "auto";
    const useMmap = ["auto", "mmap", "mmap+mlock"].includes(loadMode);
    if (loadMode.includes("mlock") || loadMode === "dio") notes.push(`-lm ${loadMode}: priced as ${useMmap ? "an mmap" : "a plain"} load (locking and direct I/O change load time, not speed)`);
    const threads = command.threads ?? inputs.settings.threads;
    if (command.threads != null && command.threads !== inputs.settings.threads)
        notes.push(`-t ${command.threads}: the CPU was profiled at ${inputs.settings.threads} threads; priced with that profile`);
    const settings: ResolvedSettings = {
        ...inputs.settings, contextSize, batchSize: ubatch, threads, useMmap, useGpu,
        opOffload: useGpu && (command.opOffload ?? true), kvOffload: useGpu && (command.kvOffload ?? true), flashAttention, kvCacheType: kvK
    };
    return {load: {gpuLayers, overrides: command.overrides.map(({pattern, bufferType}) => ({pattern, bufferType})), settings, fitted, notes}, refused: []};
}

/** One group of tensors the command and the plan put in different places, and what moving them costs. */
export type PlacementDifference = {
    /** Role and layers (`ffn_down_exps × 12 (blk.0–11)`). */
    readonly what: string;
    readonly tensors: readonly string[];
    readonly bytes: number;
    /** Where the command puts them and where the plan does. */
    readonly command: "GPU" | "CPU";
    readonly plan: "GPU" | "CPU";
    /**
     * What the command's choice for this group alone costs one request (TTFT + the reply's TPOTs): the plan with just
     * this group moved where the command puts it, minus the plan (for a plan without the GPU: the command minus the
     * command with this group put back). `NaN` when neither uses the GPU.
     */
    readonly requestMsDelta: number;
};

/** The command priced and set beside the plan. */
export type CommandComparison = {
    readonly command: LlamaCommand;
    /** `null` when the command cannot be priced here; `refused` says why. */
    readonly priced: StrategyResult | null;
    readonly refused: readonly CommandNote[];
    /** Bytes over the GPU's free memory by the simulation (0 when it fits). */
    readonly overshootBytes: number;
    readonly differences: readonly PlacementDifference[];
    /** Differences of knobs (micro-batch, flash attention, KV, mmap…), as `knob: command vs plan`. */
    readonly knobDifferences: readonly string[];
};

/**
 * Prices `command` with the plan's inputs and compares it with `plan`. Memory is llama.cpp's simulation of the
 * command's load; "fits" means within the GPU's free memory now (what llama.cpp would meet), not the plan's budget.
 */
export async function compareCommand(command: LlamaCommand, inputs: StrategyInputs, plan: StrategyResult, machine: CommandMachine,
    simulator: VramSimulator | null): Promise<CommandComparison> {
    const {load, refused} = commandLoad(command, inputs, machine);
    if (load == null) return {command, priced: null, refused, overshootBytes: 0, differences: [], knobDifferences: []};
    const free = machine.gpu?.freeBytes ?? 0;
    const commandInputs: StrategyInputs = {...inputs, budgetBytes: free, settings: load.settings};
    let gpuLayers = load.gpuLayers;
    let overrides = load.overrides;
    const notes = [...load.notes];
    if (load.fitted && inputs.fit != null) {
        // source: common_fit_params with -fitt (default 1024 MiB free per device)
        const target = Math.max(0, free - (command.fitTargetMiB ?? LLAMA_COMMAND_DEFAULTS.fitTargetMiB) * MiB);
        const fitted = await inputs.fit({budgetBytes: target, settings: load.settings});
        gpuLayers = fitted.gpuLayers < 0 ? inputs.cost.model.layerCount + 1 : fitted.gpuLayers;
        overrides = fitted.overrides.map(([pattern, bufferType]) => ({pattern, bufferType}));
        notes.push(`-ngl auto with --fit on: llama.cpp's common_fit_params chose -ngl ${gpuLayers} and ${overrides.length} overrides (${fitted.status})`);
    } else if (load.fitted) notes.push("-ngl auto with --fit on, but llama.cpp's fitting is not available here: every layer offloaded");
    const host = inputs.isHostBufferType ?? ((name: string) => isHostBufferType(name));
    const resolved: ResolvedPlacement = load.settings.useGpu
        ? withOverrides(inputs.cost.model, gpuLayers, overrides.map((o) => [o.pattern, o.bufferType] as const), host)
        : layerSplit(inputs.cost.model, 0);
    let priced = finishPlan(commandInputs, plan.strategy, resolved, load.settings, notes, overrides);
    priced = {...priced, gpuLayers: load.settings.useGpu ? gpuLayers : 0};
    if (simulator != null) {
        const {hostScratch, hostKv: _hostKv, bufferTypes: _bufferTypes, ...vram} = await simulator.simulate({gpuLayers: priced.gpuLayers, overrides, settings: load.settings});
        const over = machine.gpu != null && vram.total > free;
        priced = {
            ...priced, prediction: {...priced.prediction, vram, hostScratchBytes: hostScratch},
            fits: !over, reason: over ? `llama.cpp's simulation needs ${(vram.total / MiB).toFixed(1)} MiB on ${machine.gpu!.name}, ` +
                `${((vram.total - free) / MiB).toFixed(1)} MiB more than its ${(free / MiB).toFixed(1)} MiB free` : null,
            notes: [...priced.notes, `memory by llama.cpp's no-alloc simulation of this command's load: ${(vram.total / MiB).toFixed(1)} MiB on the GPU`]
        };
    }
    return {
        command, priced, refused: [], overshootBytes: Math.max(0, priced.prediction.vram.total - free) * (machine.gpu != null ? 1 : 0),
        differences: placementDifferences(inputs, plan, priced), knobDifferences: knobDifferences(priced.settings, plan.settings)
    };
}

const KNOB_LABELS: readonly [keyof ResolvedSettings, string][] = [
    ["useGpu", "GPU"], ["batchSize", "micro-batch"], ["flashAttention", "flash attention"], ["kvCacheType", "KV cache type"],
    ["kvOffload", "KV offload"], ["opOffload", "op offload"], ["useMmap", "mmap"], ["contextSize", "context"], ["threads", "threads"]
];

function knobDifferences(command: ResolvedSettings, plan: ResolvedSettings): string[] {
    const show = (value: unknown) => (typeof value === "boolean" ? (value ? "on" : "off") : String(value));
    return KNOB_LABELS.filter(([key]) => command[key] !== plan[key]).map(([key, label]) => `${label}: ${show(command[key])} in the command, ${show(plan[key])} in the plan`);
}

/**
 * The tensors placed differently, grouped by role and direction, each priced by moving just that group of the plan to
 * the command's side (with the plan's knobs), so a reader sees which of the command's choices cost what.
 */
export function placementDifferences(inputs: StrategyInputs, plan: StrategyResult, command: StrategyResult): PlacementDifference[] {
    const {model} = inputs.cost;
    const onGpu = (result: StrategyResult, name: string) => result.settings.useGpu && result.resolved.onGpu.has(name);
    const groups = new Map<string, {role: string; command: "GPU" | "CPU"; plan: "GPU" | "CPU"; tensors: string[]; layers: number[]; bytes: number}>();
    for (const t of model.tensors) {
        const c = onGpu(command, t.name);
        const p = onGpu(plan, t.name);
        if (c === p) continue;
        const key = `${t.role}:${c}`;
        const group = groups.get(key) ?? {role: t.role, command: c ? "GPU" : "CPU", plan: p ? "GPU" : "CPU", tensors: [], layers: [], bytes: 0};
        group.tensors.push(t.name);
        if (t.layer != null) group.layers.push(t.layer);
        group.bytes += t.bytes;
        groups.set(key, group);
    }
    // priced on the plan's side (the plan with this group moved where the command puts it), or — for a plan that does
    // not use the GPU — on the command's side (the command with this group put back where the plan has it)
    const side = plan.settings.useGpu ? plan : command.settings.useGpu ? command : null;
    const cx = side == null ? null : costContext(costInputsFor(inputs, side.settings), side.settings, inputs.workload);
    return [...groups.values()].map((group) => {
        let delta = Number.NaN;
        if (side != null && cx != null) {
            const toGpu = side === plan ? group.command === "GPU" : group.plan === "GPU";
            const moved = new Set(side.resolved.onGpu);
            for (const name of group.tensors) {
                if (toGpu) moved.add(name);
                else moved.delete(name);
            }
            const ms = predict(cx, {...side.resolved, onGpu: moved}).requestMs;
            delta = side === plan ? ms - plan.prediction.requestMs : command.prediction.requestMs - ms;
        }
        const layers = group.layers.length === 0 ? "" : ` (blk.${Math.min(...group.layers)}–${Math.max(...group.layers)})`;
        return {what: `${group.role} × ${group.tensors.length}${layers}`, tensors: group.tensors, bytes: group.bytes,
            command: group.command, plan: group.plan, requestMsDelta: delta};
    }).sort((a, b) => b.bytes - a.bytes);
}
