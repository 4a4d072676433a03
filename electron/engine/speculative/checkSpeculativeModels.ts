/**
 * Refuses, by name and before anything loads, a speculation that cannot run or cannot pay: a draft model whose
 * vocabulary is not the model's (llama.cpp's draft-simple compares them only once both are loaded, and its draft
 * tokens would mean other words), a draft model larger than the model (each draft token would cost more than the
 * model's own; one of the same size is priced, and declined, by chooseSpeculative.ts), and an MTP speculation on a model without MTP layers, or whose MTP block llama.cpp's graph would
 * stop the whole program on (GGML_ASSERTs in the MTP graph of src/models/deepseek2.cpp).
 */
import {TensorwiseError} from "../../contract/TensorwiseError.js";
import type {InspectedModel} from "../gguf/inspectGguf.js";
import {isSpeculativeChoice, SPECULATIVE_CHOICES, type SpeculativeRequest} from "../../contract/speculative.js";
import {limitMessage, withinLimit} from "../../contract/limits.js";

const GiB = 2 ** 30;

/** Throws with the first reason `draft` cannot draft for `target`. */
export function checkDraftModel(target: InspectedModel, draft: InspectedModel): void {
    const t = target.tokenizer, d = draft.tokenizer;
    const differs = (what: string, a: unknown, b: unknown): never => {
        throw new TensorwiseError("bad-draft", `The draft model's vocabulary is not the model's (${what}: ${String(b)} against ${String(a)}): ` +
            "its draft tokens would mean other text. Use a draft model of the same family and tokenizer.");
    };
    if (t == null || d == null || t.tokensDigest == null || d.tokensDigest == null)
        throw new TensorwiseError("bad-draft", "The draft model or the model has no token list (tokenizer.ggml.tokens) to compare: they cannot be used together.");
    if (t.model !== d.model) differs("tokenizer", t.model, d.model);
    if (target.vocabSize !== draft.vocabSize) differs("tokens", target.vocabSize, draft.vocabSize);
    if (t.bos !== d.bos) differs("BOS token", t.bos, d.bos);
    if (t.eos !== d.eos) differs("EOS token", t.eos, d.eos);
    if (t.tokensDigest !== d.tokensDigest) differs("token texts", "the model's", "others");
    if (draft.tensorBytes > target.tensorBytes)
        throw new TensorwiseError("bad-draft", `The draft model (${(draft.tensorBytes / GiB).toFixed(2)} GiB of weights) is larger than the model ` +
            `(${(target.tensorBytes / GiB).toFixed(2)} GiB): drafting a token would cost more than the model's own step. Use a smaller draft model.`);
}

/** Architectures whose MTP block tensorwise checks before llama.cpp builds its graph (the MTP graph of src/models/deepseek2.cpp). */
export const MTP_ARCHITECTURES = ["deepseek2", "glm4moe"] as const;

/** Weights the MTP block must hold (GGML_ASSERTs of llama_model_deepseek2::graph_mtp): an MLA attention and a MoE FFN with shared experts. */
const MTP_BLOCK_WEIGHTS = ["nextn.eh_proj", "nextn.enorm", "nextn.hnorm", "attn_q_a", "attn_q_a_norm", "attn_q_b", "attn_kv_a_mqa", "attn_kv_a_norm",
    "attn_k_b", "ffn_norm", "ffn_gate_inp", "ffn_down_exps", "ffn_gate_shexp", "ffn_down_shexp", "ffn_up_shexp"] as const;

/** Throws unless the model has an MTP block llama.cpp can run as a draft. */
export function checkMtpModel(model: InspectedModel): void {
    const trunk = model.memory?.trunkLayers ?? model.layerCount ?? 0;
    const nextn = (model.layerCount ?? 0) - trunk;
    if (nextn <= 0)
        throw new TensorwiseError("bad-draft", "This model has no multi-token-prediction layers (its nextn_predict_layers is 0): use n-gram lookup or a draft model instead.");
    const arch = model.architecture ?? "";
    if (!(MTP_ARCHITECTURES as readonly string[]).includes(arch))
        throw new TensorwiseError("bad-draft", `tensorwise does not run the MTP head of ${arch || "this architecture"} yet (it checks ${MTP_ARCHITECTURES.join(" and ")}).`);
    if (nextn !== 1)
        throw new TensorwiseError("bad-draft", `llama.cpp runs a single MTP block of ${arch}, and this model has ${nextn}.`);
    const names = new Set(model.tensors.map((t) => t.name));
    const has = (weight: string): boolean => names.has(`blk.${trunk}.${weight}.weight`);
    const missing: string[] = MTP_BLOCK_WEIGHTS.filter((weight) => !has(weight));
    if (!has("ffn_gate_up_exps") && !(has("ffn_gate_exps") && has("ffn_up_exps"))) missing.push("ffn_gate_exps and ffn_up_exps");
    if (missing.length > 0)
        throw new TensorwiseError("bad-draft", `This model's MTP block (layer ${trunk}) lacks ${missing.join(", ")}, which llama.cpp's MTP graph needs ` +
            "(it would stop the whole program): use n-gram lookup or a draft model instead.");
}

/**
 * Throws, by name, for a request whose parts do not go together or are out of range: an unknown choice, a draft model
 * without kind `draft` (or `auto`), kind `draft` without one, n-gram sizes without n-gram lookup, a draft length or
 * n-gram size out of its bounds (contract/limits.ts).
 */
export function checkSpeculativeRequest(request: SpeculativeRequest): void {
    const refuse = (message: string): never => {
        throw new TensorwiseError("bad-draft", message);
    };
    if (!isSpeculativeChoice(request.choice))
        refuse(`Unknown speculative decoding "${String(request.choice)}": choose one of ${SPECULATIVE_CHOICES.join(", ")}.`);
    const {choice} = request;
    if (request.draftPath != null && choice !== "draft" && choice !== "auto")
        refuse(`A draft model was given, but speculative decoding "${choice}" does not use one: choose "draft" (or "auto"), or drop the draft model.`);
    if (request.draftPath == null && choice === "draft") refuse("Speculative decoding with a draft model needs the draft model's file (--model-draft).");
    if ((request.ngramSizeN != null || request.ngramSizeM != null) && choice !== "ngram" && choice !== "auto")
        refuse(`n-gram sizes were given, but speculative decoding "${choice}" does not use them.`);
    for (const [limit, flag, value] of [["draftMax", "--spec-draft-n-max", request.nMax], ["ngramSize", "--spec-ngram-map-k-size-n", request.ngramSizeN],
        ["ngramSize", "--spec-ngram-map-k-size-m", request.ngramSizeM]] as const)
        if (value != null && !withinLimit(limit, value)) refuse(`${flag}: ${limitMessage(limit, value)}`);
}
