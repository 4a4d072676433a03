import type {Budget, MachineDescription, PlacementStrategy, Prediction, RuntimeSettings} from "../../contract/ipc.js";
import type {InspectedModel} from "../gguf/inspectGguf.js";
import type {EngineLlama} from "../native/getEngineLlama.js";
import type {Placement} from "../placement/Placement.js";

/** Share of free VRAM a plan may use when the budget is "auto" (the rest absorbs allocator slack and other apps). */
const AUTO_BUDGET_SHARE = 0.9;

export type BudgetPlan = {
    placement: Placement;
    settings: RuntimeSettings;
    strategy: PlacementStrategy;
    prediction: Prediction | null;
};

/** The VRAM budget in bytes for weights + KV cache + scratch. */
export function budgetBytes(budget: Budget, machine: MachineDescription, model: InspectedModel): number {
    switch (budget.kind) {
        case "mib": return budget.mib * 1024 * 1024;
        case "percent": return model.tensorBytes * budget.percent / 100;
        case "auto": return (machine.gpu?.freeBytes ?? 0) * AUTO_BUDGET_SHARE;
    }
}

/**
 * Plans a placement under the budget. Until the profiler-driven planner is wired in, this is the rule BRIEF §7
 * measured to beat layer splits: keep attention (and its KV cache) on the GPU and move FFN weights to pinned host
 * memory, layer by layer from the first, until the rest fits.
 */
export async function planForBudget(options: {
    engine: EngineLlama; machine: MachineDescription; modelPath: string; model: InspectedModel; budget: Budget;
    settings: RuntimeSettings; strategy?: PlacementStrategy;
}): Promise<BudgetPlan> {
    const {machine, model, settings} = options;
    const gpu = machine.gpu?.bufferType ?? null;
    if (gpu == null)
        return {placement: {defaultBufferType: "CPU", assignments: {}}, settings, strategy: "cpu", prediction: null};

    const reserve = kvCacheBytes(model, settings.contextSize) + scratchBytes(model, settings.batchSize);
    let free = budgetBytes(options.budget, machine, model) - reserve;
    if (free <= 0)
        throw new Error(`the budget leaves no room for weights: the KV cache and scratch alone need about ${(reserve / 2 ** 20).toFixed(0)} MiB`);

    const assignments: Record<string, string> = {};
    const onGpu = model.tensors.filter((tensor) => tensor.role !== "token_embd");
    let gpuBytes = onGpu.reduce((sum, tensor) => sum + tensor.bytes, 0);
    const movable = [
        ...onGpu.filter((tensor) => tensor.role.startsWith("ffn_") && tensor.role !== "ffn_norm"),
        ...onGpu.filter((tensor) => tensor.role.startsWith("attn_") && tensor.role !== "attn_norm"),
        ...onGpu.filter((tensor) => tensor.role === "output")
    ].sort((a, b) => (a.layer ?? Infinity) - (b.layer ?? Infinity));
    for (const tensor of movable) {
        if (gpuBytes <= free)
            break;
        assignments[tensor.name] = "CPU";
        gpuBytes -= tensor.bytes;
    }
    if (gpuBytes > free)
        free = 0;
    if (free === 0)
        throw new Error("the model's norms and embeddings alone exceed the budget");
    return {placement: {defaultBufferType: gpu, assignments}, settings: {...settings, useMmap: false}, strategy: "manual", prediction: null};
}

/** KV cache bytes with an F16 cache. source: llama_kv_cache (n_layer × n_ctx × n_embd_k_gqa/v_gqa × 2 bytes, K and V). */
export function kvCacheBytes(model: InspectedModel, contextSize: number): number {
    const layers = model.layerCount ?? 0;
    const embd = model.embeddingLength ?? 0;
    const heads = typeof model.headCount === "number" ? model.headCount : 1;
    const kvHeads = typeof model.headCountKv === "number" ? model.headCountKv : heads;
    return 2 * layers * contextSize * embd * (kvHeads / heads) * 2;
}

/** A rough upper bound of compute buffers: logits and the widest FFN activation per micro-batch, F32. */
export function scratchBytes(model: InspectedModel, batchSize: number): number {
    const ff = typeof model.feedForwardLength === "number" ? model.feedForwardLength : (model.embeddingLength ?? 0) * 4;
    return batchSize * ((model.vocabSize ?? 0) + 3 * ff) * 4;
}
