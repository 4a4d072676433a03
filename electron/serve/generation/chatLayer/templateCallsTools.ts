/**
 * Whether a model's chat template can call tools at all. llama.cpp's chat layer (common_chat_templates_apply, its
 * differential autoparser in common/chat-auto-parser-generator.cpp) finds a template's tool-call syntax by rendering
 * it; a template with none (older Llama, Gemma and Mistral templates, and the one tensorwise's own model writer uses)
 * gets the tools rendered nowhere and no tool-call grammar or parser, even for `tool_choice: "required"`. A request with
 * tools answered by such a model is free text answered as if tools had been honoured: refused instead
 * (generateReply.ts), unless the client asked for no call.
 */
import type {LlamaModel} from "node-llama-cpp";
import type {TensorwiseBindings} from "../../../engine/native/tensorwiseBindings.js";
import {chatTemplateOf} from "./chatReasoning.js";

/** A tool to render the template with: one string argument. */
const PROBE_TOOL = {type: "function", function: {name: "probe", description: "A probe.", parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]}}};

/** True when llama.cpp builds a tool-call grammar for `model`'s template with a call required (found once, at the server's start). */
export function templateCallsTools(model: LlamaModel, bindings: TensorwiseBindings): boolean {
    try {
        return bindings.tensorwiseChatApply({
            template: chatTemplateOf(model), bosToken: model.tokens.bosString ?? "", eosToken: model.tokens.eosString ?? "", addBos: false,
            messages: JSON.stringify([{role: "user", content: "Hello"}]), tools: JSON.stringify([PROBE_TOOL]), toolChoice: "required",
            parallelToolCalls: false, addGenerationPrompt: true
        }).grammar !== "";
    } catch {
        return false;
    }
}
