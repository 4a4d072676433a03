/**
 * One draft step of a model's MTP head, as the cost model prices it: the MTP block is one more decoder layer (its
 * weights kept in host memory, see planSpeculative.ts) followed by the model's output matmul, and a decode step's fixed
 * cost (src/models/deepseek2.cpp graph_mtp: the block's attention and FFN, then the shared head or `output`). The
 * block's own weights are not in the planner's model (llama.cpp skips them unless asked), so the last trunk layer's
 * weights stand in for them: an MTP block has a decoder layer's shapes.
 */
import {costContext, decodeOpUs, decodeOverheadOf} from "../planner/costModel.js";
import type {InspectedModel} from "../gguf/inspectGguf.js";
import type {PricedPlan} from "./speculativeCost.js";

/** The MTP head's draft step on `target`'s machine and settings, ms. */
export function mtpStepMs(model: InspectedModel, target: PricedPlan): number {
    const cx = costContext(target.cost, target.settings, {promptTokens: 1, genTokens: 2});
    const planner = target.cost.model;
    const last = Math.max(0, (model.memory?.trunkLayers ?? planner.layerCount) - 1);
    let us = decodeOverheadOf(cx);
    for (const t of planner.tensors) {
        if (t.op == null) continue;
        if (t.layer === last) us += decodeOpUs(cx, t, false);
        else if (t.role === "output") us += decodeOpUs(cx, t, cx.gpuDevice != null && target.resolved.onGpu.has(t.name));
    }
    return us / 1000;
}

/** The override that keeps the MTP block's weights in host memory (first match wins: put it first). */
export function mtpHostOverride(model: InspectedModel): {pattern: string; bufferType: string} {
    return {pattern: `^blk\\.${model.memory?.trunkLayers ?? model.layerCount ?? 0}\\.`, bufferType: "CPU"};
}
