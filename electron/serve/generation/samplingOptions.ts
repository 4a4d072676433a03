/**
 * A request's sampling fields as node-llama-cpp generation options, whose sampler (llama/addon/AddonSampler.cpp) is
 * llama.cpp's: penalties (`llama_sampler_init_penalties`), logit bias (`llama_sampler_init_logit_bias`) and grammar
 * (`llama_sampler_init_grammar`, through node-llama-cpp's LlamaGrammar). The server's sequences share one context that
 * node-llama-cpp evaluates in one batch, so its sampler is the one that runs here (the app's own native loop,
 * native/src/TensorwiseGenerate.cpp, owns the context while it runs and cannot share it).
 */
import {LlamaGrammar, TokenBias, type LlamaModel, type Token} from "node-llama-cpp";
import {OpenAiError} from "../common/OpenAiError.js";
import {refusedPreparation, type PromptWorker} from "./promptWorker/PromptWorker.js";
import type {OutputConstraint, SamplingRequest} from "../common/GenerationRequest.js";

/** node-llama-cpp's default look-back of the repeat penalty (LlamaChat's `defaultRepeatPenaltyLastTokens`). */
const NODE_LLAMA_CPP_REPEAT_LAST_TOKENS = 64;
/** A `logit_bias` of −100 bans the token, as OpenAI documents it (llama-server maps it to −∞ too). */
const BAN_BIAS = -100;

/** The node-llama-cpp options a request's penalties and bias become (absent when not asked for). */
export type SamplerOptions = {
    repeatPenalty?: {penalty: number; frequencyPenalty: number; presencePenalty: number; lastTokens: number; penalizeNewLine: boolean};
    tokenBias?: TokenBias;
    grammar?: LlamaGrammar;
};

/**
 * The penalties of `request` over its generated tokens: OpenAI's frequency and presence penalties count every token of
 * the completion (newlines too), so without `repeat_last_n` they look back over the whole completion (`maxTokens`);
 * a repeat penalty alone keeps node-llama-cpp's 64-token window, as the app's chat does.
 */
export function penaltiesOf(request: SamplingRequest, maxTokens: number): SamplerOptions["repeatPenalty"] {
    const {frequencyPenalty, presencePenalty, repeatPenalty, repeatLastN} = request;
    if (frequencyPenalty == null && presencePenalty == null && repeatPenalty == null)
        return undefined;
    const openAi = frequencyPenalty != null || presencePenalty != null;
    return {
        penalty: repeatPenalty ?? 1, frequencyPenalty: frequencyPenalty ?? 0, presencePenalty: presencePenalty ?? 0,
        lastTokens: repeatLastN ?? (openAi ? maxTokens : NODE_LLAMA_CPP_REPEAT_LAST_TOKENS), penalizeNewLine: openAi
    };
}

/** The model's vocabulary size, from its GGUF token list. */
export function vocabularySize(model: LlamaModel): number | null {
    const tokens = (model.fileInfo.metadata as {tokenizer?: {ggml?: {tokens?: unknown}}}).tokenizer?.ggml?.tokens;
    return Array.isArray(tokens) ? tokens.length : null;
}

/** `logit_bias` for `model`: every id must be one of its tokens (a bias on no token would be silently lost). */
export function tokenBiasOf(bias: ReadonlyMap<number, number>, model: LlamaModel): TokenBias | undefined {
    if (bias.size === 0)
        return undefined;
    const size = vocabularySize(model);
    if (size == null)
        throw OpenAiError.badRequest("`logit_bias` cannot be checked: this model's vocabulary size is unknown.", "logit_bias");
    const tokenBias = new TokenBias(model.tokenizer);
    for (const [token, value] of bias) {
        if (token >= size)
            throw OpenAiError.badRequest(`\`logit_bias\` names token ${token}, but this model's vocabulary has tokens 0 to ${size - 1}.`, "logit_bias");
        // node-llama-cpp's TokenBias drops a bias on an end-of-generation token (TokenBias.set): refuse it rather than lose it
        if (model.tokenizer.isEogToken(token as Token))
            throw OpenAiError.badRequest(`\`logit_bias\` names token ${token}, an end-of-generation token: this server cannot bias those.`, "logit_bias");
        tokenBias.set(token as Token, value <= BAN_BIAS ? "never" : {logit: value});
    }
    return tokenBias;
}

/**
 * The grammar of an output constraint: a JSON schema checked and turned into GBNF by llama.cpp's
 * json_schema_to_grammar, or a GBNF grammar as sent, checked — both on the prompt worker (PromptWorker.ts), refused
 * with a 400 naming the field when past the limits, contradictory, or refused by llama.cpp. Only then is the grammar
 * llama.cpp's sampler reads made here (node-llama-cpp's LlamaGrammar parses it on this thread, within the limits).
 */
export async function grammarOf(constraint: OutputConstraint | null, model: LlamaModel, worker: PromptWorker): Promise<LlamaGrammar | undefined> {
    if (constraint == null)
        return undefined;
    const field = constraint.kind === "grammar" ? "grammar" : constraint.source;
    let gbnf: string;
    try {
        if (constraint.kind === "json")
            gbnf = await worker.schemaGrammar(constraint.schema, vocabularySize(model));
        else {
            await worker.checkGrammar(constraint.gbnf, vocabularySize(model));
            gbnf = constraint.gbnf;
        }
    } catch (error) {
        throw refusedPreparation(error, field);
    }
    try {
        return new LlamaGrammar(model.llama, {grammar: gbnf});
    } catch (error) {
        throw OpenAiError.badRequest(`\`${field}\`: llama.cpp could not parse the grammar (${firstLine(error)}).`, field);
    }
}

function firstLine(error: unknown): string {
    return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 300);
}

/**
 * The token bias and grammar of `request` for `model` (checked before the request waits for a sequence); throws the
 * 400 of the first field it cannot honour. The penalties need no model: ServeSlot.ts takes them from the request.
 */
export async function constraintsOf(request: SamplingRequest, model: LlamaModel, worker: PromptWorker): Promise<Omit<SamplerOptions, "repeatPenalty">> {
    const tokenBias = tokenBiasOf(request.logitBias, model);
    const grammar = await grammarOf(request.constraint, model, worker);
    return {...(tokenBias != null && {tokenBias}), ...(grammar != null && {grammar})};
}
