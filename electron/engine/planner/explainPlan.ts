/**
 * One sentence per planner decision, for wherever a plan is shown (the app's Offload screen, `tensorwise plan`): why
 * the weights are where they are (why CPU-only), what the budget in MiB is and where it came from, what `-ngl` counts,
 * and where the timings came from.
 */
import type {Budget} from "../../contract/ipc.js";
import type {PlanExplanation} from "../../contract/planExplanation.js";
import {describeContention, type CpuContention} from "../profiler/cpuContention.js";
import {AUTO_SAFETY_MARGIN_BYTES, AUTO_SAFETY_MARGIN_SHARE, budgetBytes, weightBudget} from "./budget.js";
import {layerSplit} from "./resolvePlacement.js";
import type {KnobAlternative, StrategyInputs, StrategyResult} from "./strategies/StrategyResult.js";

/** What the plan itself does not carry: the budget as the user chose it, the GPU's free memory, the profile's origin. */
export type PlanFacts = {
    /** The budget as chosen (before it was resolved to bytes). */
    readonly budget: Budget;
    /** The GPU the budget is for, with its free memory when the plan was made; `null` without one. */
    readonly gpu: {readonly name: string; readonly freeBytes: number} | null;
    /** The machine profile the timings came from. */
    readonly profile: {readonly createdAt: string; readonly elapsedMs: number; readonly truncated: boolean; readonly reused: boolean;
        /** Other programs' CPU use while it was measured (MachineProfile.cpuContention). */
        readonly cpuContention?: CpuContention};
};

const MiB = 1024 * 1024;

/** Bytes as MiB for a sentence: whole MiB from 10 MiB up, one decimal below. */
export function mib(bytes: number): string {
    const value = bytes / MiB;
    return `${value >= 10 || value === 0 ? value.toFixed(0) : value.toFixed(1)} MiB`;
}

/** Explains a plan made from `inputs` (see autoPlan.ts); pure, so each sentence is testable with fake inputs. */
export function explainPlan(inputs: StrategyInputs, result: StrategyResult, facts: PlanFacts): PlanExplanation {
    return {
        placement: explainPlacement(inputs, result),
        budget: explainBudget(facts.budget, {gpu: facts.gpu, weightBytes: inputs.cost.model.weightBytes}),
        gpuLayers: explainGpuLayers(result.gpuLayers, result.overrides.length, inputs.cost.model.layerCount),
        settings: explainSettings(result, inputs.cost.gpuDevice),
        profile: explainProfile(facts.profile),
        profileReused: facts.profile.reused
    };
}

/** The budget in MiB and where it came from; the number is {@link budgetBytes}'s, so the sentence and the plan agree. */
export function explainBudget(budget: Budget, facts: {gpu: PlanFacts["gpu"]; weightBytes: number}): string {
    const {gpu} = facts;
    const bytes = budgetBytes(budget, {gpuFreeBytes: gpu?.freeBytes ?? 0, weightBytes: facts.weightBytes});
    const fits = "weights, KV cache and scratch on the GPU must all fit in it";
    switch (budget.kind) {
        case "auto": {
            if (gpu == null) return "Auto budget: 0 MiB, because llama.cpp found no GPU on this machine.";
            const margin = Math.max(AUTO_SAFETY_MARGIN_BYTES, gpu.freeBytes * AUTO_SAFETY_MARGIN_SHARE);
            const marginWhy = `the larger of ${mib(AUTO_SAFETY_MARGIN_BYTES)} and ${AUTO_SAFETY_MARGIN_SHARE * 100}% of free memory, left for the driver and other apps`;
            if (bytes === 0)
                return `Auto budget: 0 MiB, because ${gpu.name} has only ${mib(gpu.freeBytes)} free, less than the ${mib(margin)} safety margin ` +
                    `(${marginWhy}); choose a budget in MiB to use it anyway.`;
            return `Auto budget: ${mib(bytes)} = the ${mib(gpu.freeBytes)} free on ${gpu.name} minus a ${mib(margin)} safety margin (${marginWhy}).`;
        }
        case "mib":
            return `Budget: ${mib(bytes)} of ${gpu?.name ?? "GPU"} memory, as entered; ${fits}` +
                (gpu != null && bytes > gpu.freeBytes ? ` (it is more than the ${mib(gpu.freeBytes)} free now).` : ".");
        case "percent":
            return `Budget: ${mib(bytes)} = ${budget.percent}% of the model's ${mib(facts.weightBytes)} of weights; ${fits}.`;
    }
}

/** Where the weights went and why; for a CPU-only plan on a GPU machine, the reason nothing went to the GPU. */
export function explainPlacement(inputs: StrategyInputs, result: StrategyResult): string {
    const {model} = inputs.cost;
    const gpu = inputs.gpuBufferType;
    const budget = mib(inputs.budgetBytes);
    if (inputs.cost.gpuDevice == null || gpu == null)
        return "Everything runs on the CPU because llama.cpp found no GPU on this machine.";
    const {onGpu} = result.resolved;
    const gpuWeights = model.tensors.filter((t) => onGpu.has(t.name)).reduce((sum, t) => sum + t.bytes, 0);
    if (!result.settings.useGpu) {
        const lead = `Everything runs on the CPU without ${gpu} (llama.cpp's --device none: nothing is offloaded or reserved on it), because`;
        if (result.strategy !== "optimal") return `${lead} the ${result.strategy} strategy leaves it out.`;
        const withGpu = result.alternatives?.find((a) => a.knob === "useGpu");
        if (withGpu == null) {
            const reserve = weightBudget(inputs.cost, {...result.settings, useGpu: true}, inputs.budgetBytes);
            return `${lead} no plan that uses ${gpu} fits the ${budget} budget` + (reserve.reason == null ? "." :
                `: the KV cache (${mib(reserve.kvBytes)} at ${result.settings.contextSize} tokens) and scratch (${mib(reserve.scratchBytes)}) alone exceed it.`);
        }
        return `${lead} for a ${result.prediction.promptTokens}-token prompt and a ${result.prediction.genTokens}-token reply it is predicted faster than ` +
            `every plan that uses ${gpu} within the ${budget} budget (the best of them: ${withGpu.atLeast ? "at least " : ""}` +
            `${(withGpu.requestMs / 1000).toFixed(withGpu.requestMs >= 10_000 ? 0 : 2)} s per request, against ${(result.prediction.requestMs / 1000).toFixed(2)} s).`;
    }
    if (onGpu.size === 0 && !(result.settings.kvOffload && result.resolved.layerOnGpu.some(Boolean))) {
        // with op offload on, llama.cpp still runs prompt micro-batches of 32 tokens or more on the GPU
        const prompts = result.settings.opOffload && result.settings.batchSize >= 32
            ? `; prompt micro-batches of 32 tokens or more still run on ${gpu}, which copies each weight in for them (op offload)`
            : `; ${result.settings.opOffload ? `the ${result.settings.batchSize}-token micro-batch is below the 32 tokens from which` : "op offload is off, so"} ` +
              `no prompt op is copied to ${gpu}`;
        if (result.strategy === "cpu") return `Every weight stays on the CPU because the CPU-only strategy was chosen${prompts}.`;
        const reserve = weightBudget(inputs.cost, result.settings, inputs.budgetBytes);
        if (reserve.reason != null)
            return `Every weight stays on the CPU because the KV cache (${mib(reserve.kvBytes)} at ${result.settings.contextSize} tokens) and ` +
                `scratch (${mib(reserve.scratchBytes)} at micro-batch ${result.settings.batchSize}) alone exceed the ${budget} budget; ` +
                `a smaller context or micro-batch, or a larger budget, leaves room for weights${prompts}.`;
        // the first thing this strategy would offload: the output layer for whole layers, else the smallest weight
        const firstUnit = result.strategy === "layers" || result.strategy === "fit"
            ? model.tensors.filter((t) => layerSplit(model, 1).onGpu.has(t.name)).reduce((sum, t) => sum + t.bytes, 0)
            : Math.min(...model.tensors.filter((t) => t.op != null && t.role !== "token_embd").map((t) => t.bytes));
        if (firstUnit > reserve.bytes)
            return `Every weight stays on the CPU because the ${mib(reserve.bytes)} left in the ${budget} budget after the KV cache ` +
                `(${mib(reserve.kvBytes)}) and scratch (${mib(reserve.scratchBytes)}) cannot hold even ` +
                `${result.strategy === "layers" || result.strategy === "fit" ? "the output layer" : "the smallest weight matrix"} (${mib(firstUnit)})${prompts}.`;
        if (result.strategy === "optimal")
            return `Every weight stays on the CPU because, for a ${result.prediction.promptTokens}-token prompt and a ${result.prediction.genTokens}-token reply, ` +
                `that is predicted faster than every placement that puts weights on ${gpu} within the ${budget} budget${prompts}.`;
        return `Every weight stays on the CPU because the ${result.strategy} strategy put no weight on ${gpu} within the ${budget} budget${prompts}.`;
    }
    // a tied output's copy on the GPU (loadedTensors.ts) leaves token_embd in host memory too
    const hostBytes = model.tensors.filter((t) => t.tiedTo == null && !onGpu.has(t.name)).reduce((sum, t) => sum + t.bytes, 0);
    const vram = result.prediction.vram;
    const used = `weights, KV cache and scratch need ${mib(vram.total)} of the ${budget} budget`;
    // token_embd stays in host memory whatever the plan (llama.cpp's input layer), so it does not make a plan mixed
    const others = model.tensors.filter((t) => !onGpu.has(t.name) && t.role !== "token_embd");
    if (others.length === 0)
        return `The whole model fits on ${gpu}: ${used} (the token embeddings stay in host memory, as llama.cpp always keeps them).`;
    const share = Math.round(gpuWeights / model.weightBytes * 100);
    // the KV cache follows each layer's device, unless --no-kv-offload keeps all of it in host memory
    const kvLayers = result.settings.kvOffload ? result.resolved.layerOnGpu.filter(Boolean).length : 0;
    const host = result.settings.useMmap ? "memory-mapped host memory" : "pinned host memory";
    return `${gpu} holds ${share}% of the weights (${mib(gpuWeights)} of ${mib(model.weightBytes)}) and the KV cache of ${kvLayers} of ` +
        `${model.layerCount} layers; the other ${mib(hostBytes)} stay in ${host}, because on ${gpu} ${used}.`;
}

const KNOB_WORDS: Readonly<Record<KnobAlternative["knob"], (value: boolean | number, gpu: string) => string>> = {
    useGpu: (on, gpu) => on ? `using ${gpu}` : `leaving ${gpu} out (--device none)`,
    opOffload: (on) => on ? "op offload on" : "op offload off (--no-op-offload)",
    kvOffload: (on) => on ? "the KV cache on the GPU" : "the KV cache in host memory (-nkvo)",
    flashAttention: (on) => on ? "flash attention on" : "flash attention off",
    batchSize: (n) => `a ${n}-token micro-batch`,
    useMmap: (on) => on ? "memory-mapped host weights" : "pinned host weights"
};

/** Below this ratio of the alternative's prediction to the plan's, a knob is said to have made little difference. */
const DECIDED_RATIO = 1.05;

/**
 * The llama.cpp settings the plan runs with and, for `optimal`, which of them decided: for each knob, the best plan found
 * with it set otherwise and how much slower that was predicted.
 */
export function explainSettings(result: StrategyResult, gpuDevice: string | null): string {
    const gpu = gpuDevice ?? "the GPU";
    const s = result.settings;
    const chosen = [
        ...(gpuDevice == null ? [] : [KNOB_WORDS.useGpu(s.useGpu, gpu)]),
        ...(gpuDevice != null && s.useGpu ? [KNOB_WORDS.opOffload(s.opOffload, gpu), KNOB_WORDS.kvOffload(s.kvOffload, gpu), KNOB_WORDS.useMmap(s.useMmap, gpu)] : []),
        KNOB_WORDS.flashAttention(s.flashAttention, gpu), `an ${s.kvCacheType} KV cache`, KNOB_WORDS.batchSize(s.batchSize, gpu),
        `${s.threads} thread${s.threads === 1 ? "" : "s"}`
    ];
    const lead = `Settings: ${chosen.join(", ")}.`;
    const alternatives = result.alternatives ?? [];
    if (alternatives.length === 0) return lead;
    const base = Math.max(result.prediction.requestMs, 1e-9);
    const decided = alternatives.filter((a) => a.requestMs >= base * DECIDED_RATIO).sort((a, b) => b.requestMs - a.requestMs);
    const minor = alternatives.filter((a) => a.requestMs < base * DECIDED_RATIO).map((a) => KNOB_WORDS[a.knob](a.value, gpu));
    const ms = (value: number): string => value >= 10_000 ? `${(value / 1000).toFixed(0)} s` : value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${value.toFixed(0)} ms`;
    const parts = decided.map((a) => `with ${KNOB_WORDS[a.knob](a.value, gpu)} the best plan is predicted ${a.atLeast ? "at least " : ""}` +
        `${ms(a.requestMs)} per request (${(a.requestMs / base).toFixed(a.requestMs / base >= 10 ? 0 : 1)}× this plan's ${ms(base)})`);
    return `${lead}${parts.length > 0 ? ` What decided: ${parts.join("; ")}.` : ""}` +
        `${minor.length > 0 ? ` Within 5% either way: ${minor.join(", ")}.` : ""}`;
}

/** What llama.cpp's `-ngl` of this plan counts: the output layer is one of them (llama_model::load_tensors). */
export function explainGpuLayers(gpuLayers: number | "max", overrideCount: number, layerCount: number): string {
    const moved = overrideCount === 0 ? ""
        : `, then ${overrideCount} tensor override${overrideCount === 1 ? "" : "s"} (-ot) move${overrideCount === 1 ? "s" : ""} the weights ${overrideCount === 1 ? "it names" : "they name"} back to host memory`;
    if (gpuLayers === "max" || gpuLayers > layerCount)
        return `-ngl offloads all ${layerCount} repeating layers and the output layer, which llama.cpp counts as one more layer ` +
            `(${layerCount + 1} in all)${moved}.`;
    if (gpuLayers === 0)
        return `-ngl 0 offloads no layer: every layer and its KV cache stay on the CPU${moved}.`;
    const repeating = gpuLayers - 1;
    const range = repeating === 0 ? "no repeating layer" : repeating === 1 ? `the last repeating layer (blk.${layerCount - 1})`
        : `the last ${repeating} of ${layerCount} repeating layers (blk.${layerCount - repeating}–blk.${layerCount - 1})`;
    return `-ngl ${gpuLayers} counts the output layer as one: it offloads the output layer and ${range}${moved}.`;
}

/** Where the timings came from: a profile measured now, or one reused from the cache (and when it was made). */
export function explainProfile(profile: PlanFacts["profile"]): string {
    const busy = describeContention(profile.cpuContention);
    const cut = (profile.truncated ? " It was cut at its time limit, so some timings are extrapolated." : "") + (busy != null ? ` ${busy}` : "");
    if (profile.reused)
        return `Timings from this machine's profile of ${profile.createdAt.slice(0, 16).replace("T", " ")} UTC, reused from the cache; ` +
            `re-profile to measure again.${cut}`;
    return `Timings measured on this machine just now (${(profile.elapsedMs / 1000).toFixed(1)} s) and saved for the next plan.${cut}`;
}
