/**
 * A reasoning model's thinking, as llama-server serves it (tools/server/server-common.cpp, oaicompat_chat_params_parse):
 * the chat template applied with `enable_thinking` and the `reasoning_format`, and the reply split by llama.cpp's chat
 * layer (common_chat_parse) into `reasoning_content` and content. What each API asks of it (OpenAI's `reasoning_format`,
 * `reasoning_effort`, `chat_template_kwargs.enable_thinking`; Anthropic's `thinking`; the Responses API's `reasoning`) is
 * read into one {@link ReasoningRequest}, then checked against what the model's template can do ({@link TemplateReasoning})
 * when the request is templated: a knob the template lacks is refused by the field that asked for it.
 */
import type {LlamaModel} from "node-llama-cpp";
import type {TensorwiseBindings} from "../../../engine/native/tensorwiseBindings.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import type {OutputConstraint, ReasoningFormat, ReasoningRequest} from "../../common/GenerationRequest.js";

/** What a model's chat template does with thinking, found once when the server starts ({@link templateReasoning}). */
export type TemplateReasoning = {
    /** llama.cpp finds a thinking block in the template (common_chat_params::supports_thinking). */
    thinks: boolean;
    /** `enable_thinking: false` changes the prompt: thinking can be turned off. */
    switchable: boolean;
    /** The template writes `reasoning_effort` into the prompt (as gpt-oss's does). */
    effortLevels: boolean;
};

/** What the native chat apply and parse take for a request (tensorwiseChatApply / tensorwiseChatParse). */
export type NativeReasoning = {reasoningFormat: ReasoningFormat; enableThinking: boolean; chatTemplateKwargs: string};

/** The chat template in the model's GGUF; llama.cpp uses ChatML when there is none (common_chat_templates_init). */
export function chatTemplateOf(model: LlamaModel): string {
    const template = (model.fileInfo.metadata as {tokenizer?: {chat_template?: unknown}}).tokenizer?.chat_template;
    return typeof template === "string" && template !== "" ? template : "chatml";
}

/**
 * Finds what `model`'s chat template does with thinking, as llama.cpp's common_chat_templates_support_enable_thinking
 * does: the template applied to one user message with the thinking extracted, then again with `enable_thinking` off and
 * with two effort levels; a template llama.cpp cannot apply thinks not.
 */
export function templateReasoning(model: LlamaModel, bindings: TensorwiseBindings): TemplateReasoning {
    const apply = (enableThinking: boolean, kwargs: Record<string, unknown>) => bindings.tensorwiseChatApply({
        template: chatTemplateOf(model), bosToken: model.tokens.bosString ?? "", eosToken: model.tokens.eosString ?? "", addBos: false,
        messages: JSON.stringify([{role: "user", content: "Hello"}]), tools: "[]", toolChoice: "none", parallelToolCalls: false, addGenerationPrompt: true,
        reasoningFormat: "deepseek", enableThinking, chatTemplateKwargs: JSON.stringify(kwargs)
    });
    try {
        const on = apply(true, {});
        return {
            thinks: on.supportsThinking,
            switchable: on.supportsThinking && apply(false, {}).prompt !== on.prompt,
            effortLevels: on.supportsThinking && apply(true, {reasoning_effort: "low"}).prompt !== apply(true, {reasoning_effort: "high"}).prompt
        };
    } catch {
        return {thinks: false, switchable: false, effortLevels: false};
    }
}

/** The request field that sent an output constraint. */
function constraintField(constraint: OutputConstraint): string {
    return constraint.kind === "json" ? constraint.source : "grammar";
}

/**
 * The native inputs for `request` on a template that does `template`; a knob the template lacks is a 400 naming the
 * field that asked for it. An output constraint (`response_format`, `json_schema`, `grammar`) holds the reply from its
 * first token, so there is no room for thinking before it (a template that opens the thinking in the prompt would take
 * the constrained answer as thinking): a thinking template then answers with thinking off, and one that cannot switch it
 * off, or a request that asks for thinking too, is refused by the constraint's field.
 */
export function nativeReasoning(request: ReasoningRequest, template: TemplateReasoning, constraint: OutputConstraint | null = null): NativeReasoning {
    const {thinking, effort, budget} = request;
    if (constraint != null && template.thinks) {
        const field = constraintField(constraint);
        const asked = thinking?.on === true ? thinking.field : effort?.field ?? budget?.field;
        if (asked != null)
            throw OpenAiError.badRequest(`\`${field}\` cannot be combined with \`${asked}\`: the constraint holds the reply from its first token, leaving no room for thinking.`,
                field);
        if (!template.switchable)
            throw OpenAiError.badRequest(`\`${field}\` cannot be honoured with this model: the constraint holds the reply from its first token, and its chat template ` +
                "always thinks first (it has no switch to turn thinking off).", field);
        return nativeReasoning({...request, thinking: {on: false, field}}, template);
    }
    if (thinking != null && !template.thinks && thinking.on)
        throw OpenAiError.badRequest(`\`${thinking.field}\` asks for thinking, but this model's chat template has no thinking block (llama.cpp finds none): ` +
            "it answers without thinking.", thinking.field);
    if (thinking != null && template.thinks && !template.switchable && !thinking.on)
        throw OpenAiError.badRequest(`\`${thinking.field}\` asks to turn thinking off, but this model's chat template has no switch for it ` +
            "(its prompt is the same with enable_thinking off): it always thinks.", thinking.field);
    if (budget != null && !template.thinks)
        throw OpenAiError.badRequest(`\`${budget.field}\` cannot be honoured: this model's chat template has no thinking block (llama.cpp finds none).`, budget.field);
    if (effort != null && !template.effortLevels)
        throw OpenAiError.badRequest(`\`${effort.field}\` "${effort.level}" cannot be honoured: this model's chat template does not read a reasoning effort` +
            `${template.switchable ? " (it takes only \"none\", which turns thinking off)" : ""}.`, effort.field);
    return {
        reasoningFormat: request.format,
        enableThinking: thinking?.on ?? true,
        chatTemplateKwargs: JSON.stringify(effort != null ? {reasoning_effort: effort.level} : {})
    };
}

/**
 * Where node-llama-cpp's chat wrapper templates a request (a template without thinking, or an assistant message to
 * continue), only a request that asks nothing of thinking can be honoured: anything else is a 400 naming its field.
 */
export function refuseReasoningWithoutChatLayer(request: ReasoningRequest, why: string): void {
    const field = request.thinking?.field ?? request.effort?.field ?? request.budget?.field;
    if (field != null)
        throw OpenAiError.badRequest(`\`${field}\` cannot be honoured here: ${why}`, field);
}

