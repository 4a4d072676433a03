import {GgufValidationError} from "../errors/GgufValidationError.js";
import {weightInfoOf} from "../tensorRole.js";
import type {GgufMetadataValue, ValidatedGgufTensor} from "../types/ValidatedGguf.js";
import {checkLlamaFamilyTensors, isLlamaFamily} from "./checkLlamaFamilyTensors.js";
import {HparamReader} from "./HparamReader.js";
import {quoteFileText} from "./quoteFileText.js";

/** source: LLAMA_MAX_LAYERS and LLAMA_MAX_EXPERTS in src/llama-hparams.h. */
const maxLayers = 512;
const maxExperts = 1024;
/** source: LLAMA_ROPE_SCALING_TYPES in src/llama-model.cpp (any other name fails a GGML_ASSERT in load_hparams). */
const ropeScalingTypes: readonly string[] = ["none", "linear", "yarn", "longrope"];
/** source: `llama_model_base::load_hparams`, which zeroes `n_expert` ≤ 1 (and the used count) for these. */
const expertsIgnoredBelowTwo: ReadonlySet<string> = new Set(["hunyuan-dense", "hunyuan_vl"]);
/** source: `llama_model_base::load_hparams` returns before reading hyper-parameters for CLIP (projector) files. */
const noHparamsArchitectures: ReadonlySet<string> = new Set(["clip"]);
const layerPrefix = /^blk\.(\d+)\./;

/**
 * Whether llama.cpp creates this tensor with the experts in its last dimension (`{…, n_expert}` in every
 * `load_arch_tensors`): a routed-expert weight, which llama.cpp's tensor table gives GGML_OP_MUL_MAT_ID, or its `.bias`
 * (GGML_OP_ADD_ID, source: llama_model_loader::create_tensor). Decided by the table, not by the name's `_exps`: arctic's
 * `ffn_norm_exps` is a 1-D norm (GGML_OP_MUL, `{n_embd}` in src/models/arctic.cpp).
 */
function holdsExperts(name: string): boolean {
    const weight = name.endsWith(".bias") ? `${name.slice(0, -".bias".length)}.weight` : name;
    return weightInfoOf(weight)?.op === "MUL_MAT_ID";
}

/** Expert hyper-parameters after the checks (`expertCount` 0 for a dense model). */
export type ExpertHparams = {
    readonly expertCount: number;
    /** `<arch>.expert_used_count` per layer (0s for a dense model). */
    readonly expertUsed: readonly number[];
    /** Whether any routed-expert tensor (`ffn_*_exps`, see holdsExperts) exists. */
    readonly hasExpertTensors: boolean;
};

/**
 * Checks a model's architecture hyper-parameters where llama.cpp asserts on them (a failed `GGML_ASSERT` aborts the
 * whole process, so these must be caught before loading): `<arch>.block_count` present, 1…512 and covering every
 * `blk.N.` tensor; expert counts as `llama_model_base::load_hparams` asserts them, and expert tensors holding
 * `expert_count` experts; `embedding_length` positive; a known RoPE scaling type. Architectures of the llama family
 * are then checked tensor by tensor (`checkLlamaFamilyTensors`). Files without `general.architecture` are not models
 * (llama.cpp refuses them with an error of its own) and are not checked here.
 *
 * All work is linear in the number of tensors; declared counts are compared, never iterated over.
 */
export function checkModelHparams(
    metadata: ReadonlyMap<string, GgufMetadataValue>, tensors: readonly ValidatedGgufTensor[]
): void {
    const archEntry = metadata.get("general.architecture");
    if (archEntry === undefined)
        return;
    if (archEntry.type !== "string")
        throw new GgufValidationError("bad-hparam", `"general.architecture" must be a string, but it is a ${archEntry.type}`);
    if (noHparamsArchitectures.has(archEntry.value))
        return;

    const h = new HparamReader(metadata, archEntry.value);
    const blockCount = h.count("block_count", true);
    if (blockCount === 0 || blockCount > maxLayers)
        throw new GgufValidationError(
            "bad-hparam",
            `${h.label("block_count")} declares ${blockCount} layers, but llama.cpp needs between 1 and ${maxLayers}`
        );
    const nextnLayers = h.count("nextn_predict_layers", false) ?? 0;
    if (nextnLayers > blockCount)
        throw new GgufValidationError(
            "bad-hparam",
            `${h.label("nextn_predict_layers")} is ${nextnLayers}, more than the ${blockCount} layers of ${h.label("block_count")}`
        );
    checkLayerIndices(h, tensors, blockCount);

    const experts = checkExperts(h, tensors, blockCount);
    const embd = h.count("embedding_length", false);
    if (embd === 0)
        throw new GgufValidationError("bad-hparam", `${h.label("embedding_length")} is 0, but llama.cpp needs it to be positive`);
    checkRopeScalingType(h, metadata);

    if (isLlamaFamily(h.arch))
        checkLlamaFamilyTensors(h, metadata, tensors, {blockCount, nextnLayers, experts});
}

function checkLayerIndices(h: HparamReader, tensors: readonly ValidatedGgufTensor[], blockCount: number): void {
    for (const tensor of tensors) {
        const layer = layerPrefix.exec(tensor.name)?.[1];
        if (layer !== undefined && Number(layer) >= blockCount)
            throw new GgufValidationError(
                "layer-mismatch",
                `tensor ${quoteFileText(tensor.name)} belongs to layer ${Number(layer)}, but ${h.label("block_count")} ` +
                    `declares only ${blockCount} ${blockCount === 1 ? "layer" : "layers"}`
            );
    }
}

/** source: the expert asserts of `llama_model_base::load_hparams` in src/llama-model.cpp. */
function checkExperts(h: HparamReader, tensors: readonly ValidatedGgufTensor[], blockCount: number): ExpertHparams {
    let expertCount = h.count("expert_count", false) ?? 0;
    let expertUsed = h.perLayer("expert_used_count", blockCount, false) ?? new Array<number>(blockCount).fill(0);
    if (expertsIgnoredBelowTwo.has(h.arch) && expertCount <= 1) {
        expertCount = 0;
        expertUsed = new Array<number>(blockCount).fill(0);
    }
    const usedMax = Math.max(...expertUsed);
    const fail = (detail: string): never => {
        throw new GgufValidationError("bad-experts", detail);
    };
    if (expertCount > maxExperts)
        fail(`${h.label("expert_count")} is ${expertCount}, more than the ${maxExperts} experts llama.cpp supports`);
    if (usedMax > expertCount)
        fail(`${h.label("expert_used_count")} is ${usedMax}, more than the ${expertCount} experts of ${h.label("expert_count")}`);
    if (expertCount > 0 && usedMax === 0)
        fail(`${h.label("expert_used_count")} is 0 or missing, but a model with experts must use at least one per token`);

    const groups = h.count("expert_group_count", false) ?? 0;
    const groupsUsed = h.count("expert_group_used_count", false) ?? 0;
    if (expertCount === 0 && groups !== 0)
        fail(`${h.label("expert_group_count")} is ${groups}, but the model declares no experts`);
    if (expertCount > 0 && groups >= expertCount)
        fail(`${h.label("expert_group_count")} is ${groups}, but it must be smaller than the ${expertCount} experts`);
    if (groups > 1 && (expertCount % groups !== 0 || groupsUsed === 0 || groupsUsed >= groups))
        fail(`${h.label("expert_group_count")} (${groups}) and ${h.label("expert_group_used_count")} (${groupsUsed}) ` +
            `must divide the ${expertCount} experts into groups of which at least one, but not all, are used`);

    let hasExpertTensors = false;
    for (const tensor of tensors) {
        if (!holdsExperts(tensor.name))
            continue;
        hasExpertTensors = true;
        const held = tensor.shape.at(-1);
        if (expertCount === 0)
            fail(`tensor ${quoteFileText(tensor.name)} holds experts, but the model declares none (${h.label("expert_count")})`);
        if (tensor.shape.length < 2 || held !== BigInt(expertCount))
            fail(`tensor ${quoteFileText(tensor.name)} holds ${String(tensor.shape.length < 2 ? 1n : held)} experts, ` +
                `but ${h.label("expert_count")} is ${expertCount}`);
    }
    return {expertCount, expertUsed, hasExpertTensors};
}

function checkRopeScalingType(h: HparamReader, metadata: ReadonlyMap<string, GgufMetadataValue>): void {
    const entry = metadata.get(h.key("rope.scaling.type"));
    if (entry !== undefined && !(entry.type === "string" && ropeScalingTypes.includes(entry.value)))
        throw new GgufValidationError(
            "bad-hparam",
            `${h.label("rope.scaling.type")} must be one of ${ropeScalingTypes.join(", ")}, which llama.cpp knows`
        );
}
