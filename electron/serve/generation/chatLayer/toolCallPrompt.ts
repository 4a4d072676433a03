/**
 * A chat request with tools, or for a reasoning model, templated and constrained by llama.cpp's own chat layer, as
 * llama-server does it (tools/server/server-common.cpp, oaicompat_chat_params_parse): the model's chat template applied
 * with the tools, the tool turns and the thinking switch (common_chat_templates_apply), the tool-call grammar it returns
 * (lazy until a trigger for `tool_choice: "auto"`), extra stop strings, and the parser the reply is read back with
 * (common_chat_parse) into thinking, content and tool calls. node-llama-cpp's chat wrappers know no tool-call format of
 * their own for most templates, and have no `reasoning_format` or thinking switch, so this path bypasses them.
 */
import {randomBytes} from "node:crypto";
import {LlamaGrammar, type LlamaModel, type Token} from "node-llama-cpp";
import type {NativeChatApplyRequest, NativeChatApplyResult, TensorwiseBindings} from "../../../engine/native/tensorwiseBindings.js";
import {chatTemplateOf, type NativeReasoning} from "./chatReasoning.js";
import {OpenAiError} from "../../common/OpenAiError.js";
import type {ChatMessage, ToolCall, ToolUse} from "../../common/GenerationRequest.js";
import {refusedPreparation, type PromptWorker} from "../promptWorker/PromptWorker.js";
import {vocabularySize} from "../samplingOptions.js";

/**
 * What a reply says once parsed: its thinking (`reasoning`, "" when none or when the reasoning format leaves it in the
 * content), its text and the calls it makes (`id`: the model's own, "" when it wrote none: ToolCallStream.ts gives one).
 */
export type ParsedReply = {content: string; reasoning: string; toolCalls: ToolCall[]};

export type ToolCallPrompt = {
    /** The templated prompt, tokenized with its special tokens, without the BOS token LlamaCompletion prepends. */
    tokens: Token[];
    /** Tokens the sequence evaluates (`tokens` and the BOS token). */
    promptTokens: number;
    /** The tool-call grammar; `undefined` when the reply is free (`tool_choice: "none"`, or no tools). */
    grammar: LlamaGrammar | undefined;
    /** Stop strings the template adds (common_chat_params::additional_stops). */
    stops: string[];
    /** common_chat_format's name (llama.cpp's), for logs. */
    formatName: string;
    /**
     * What the reply was opened with at the end of the prompt (the template's tool-call marker when a call is required),
     * which `parse` reads before the generated text; "" when the reply is free.
     */
    opening: string;
    /** The reply as llama.cpp parses it; `partial`: more text may follow. Throws a 500 when the reply does not parse. */
    parse(text: string, partial: boolean): ParsedReply;
};

/**
 * The messages in OpenAI's shape, as common_chat_msgs_parse_oaicompat reads them (a `name` reaches the template as the
 * message's, an assistant's `reasoning_content` as its thinking).
 */
function openAiMessages(messages: readonly ChatMessage[]): unknown[] {
    return messages.map((message) => {
        const name = message.name != null ? {name: message.name} : {};
        if (message.role === "tool")
            return {role: "tool", content: message.text, tool_call_id: message.toolCallId, ...name};
        const thought = message.role === "assistant" && message.reasoning != null ? {reasoning_content: message.reasoning} : {};
        if (message.role === "assistant" && message.toolCalls != null)
            return {
                role: "assistant", content: message.text === "" ? null : message.text, ...name, ...thought,
                tool_calls: message.toolCalls.map((call) => ({id: call.id, type: "function", function: {name: call.name, arguments: call.arguments}}))
            };
        return {role: message.role, content: message.text, ...name, ...thought};
    });
}

/** A request without tools (a reasoning model's): the template applied with none, the reply free. */
const NO_TOOLS: ToolUse = {tools: [], choice: "none", parallel: false};

/** What templating a request needs besides its messages: the model, and the worker that applies the template off the server's thread. */
export type ToolCallPromptContext = {
    model: LlamaModel;
    bindings: TensorwiseBindings;
    worker: PromptWorker;
    /** Refuses (throws) a prompt of this many tokens, before it is tokenized on this thread. */
    refuseOverlong(promptTokens: number): void;
};

/**
 * Templates `messages` with `tools` (`null`: none) and the thinking switch of `reasoning` for `model`, on the prompt
 * worker (PromptWorker.ts: llama.cpp's chat layer renders every tool's schema and builds their grammar there, each
 * schema and grammar checked first); a template llama.cpp cannot apply, or a parameter schema it cannot turn into a
 * grammar, is a 400 naming `tools` (`messages` without tools) with llama.cpp's message. `streamed`: the reply is
 * streamed (with "deepseek-legacy" llama-server then asks the parser for the thinking inline, reasoning_in_content;
 * passed on alike).
 */
export async function toolCallPrompt(messages: readonly ChatMessage[], toolUse: ToolUse | null, context: ToolCallPromptContext,
    reasoning: NativeReasoning, streamed = false): Promise<ToolCallPrompt> {
    const {model, bindings} = context;
    const tools = toolUse ?? NO_TOOLS;
    const field = toolUse != null ? "tools" : "messages";
    const addBos = model.tokens.bos != null && model.tokens.shouldPrependBosToken;
    // the messages and each list of tools written out once: they can be megabytes, on the server's thread
    const written = new Map<ToolUse["tools"], string>();
    const toolsJson = (toolList: ToolUse["tools"]) => {
        let json = written.get(toolList);
        if (json == null) {
            json = JSON.stringify(toolList.map((tool) => ({
                type: "function", function: {name: tool.name, ...(tool.description != null && {description: tool.description}), parameters: tool.parameters}
            })));
            written.set(toolList, json);
        }
        return json;
    };
    const messagesJson = JSON.stringify(openAiMessages(messages));
    const request = (toolList: ToolUse["tools"], toolChoice: "auto" | "none" | "required"): NativeChatApplyRequest => ({
        template: chatTemplateOf(model), bosToken: model.tokens.bosString ?? "", eosToken: model.tokens.eosString ?? "", addBos,
        messages: messagesJson, tools: toolsJson(toolList), toolChoice, parallelToolCalls: tools.parallel, addGenerationPrompt: true, ...reasoning
    });
    const {choice} = tools;
    const named = typeof choice === "object";
    const forced = choice === "required" || named;
    // the prompt shows every tool; a named choice constrains the reply to that one function (llama-server takes no names)
    const constraintTools = named ? tools.tools.filter((tool) => tool.name === choice.name) : tools.tools;
    // llama.cpp's tool-call grammar lets a reply begin with free text before the template's tool-call marker
    // (chat-auto-parser-generator.cpp, autoparser::build_parser: optional content until the tool start), so "required"
    // and a named choice would force no call within max_tokens (a random-weight model never writes the marker). The
    // reply is opened with the marker the template starts a call with (the trigger of its lazy "auto" grammar): written
    // at the end of the prompt, and read by the grammar and the parser as already generated.
    const requests = [request(tools.tools, named ? "required" : choice), ...(named ? [request(constraintTools, "required")] : []),
        ...(forced ? [request(constraintTools, "auto")] : [])];
    // what was written out above took this thread a while: others are answered before it is handed to the worker
    await new Promise((resolve) => setImmediate(resolve));
    let prepared;
    try {
        prepared = await context.worker.chatApply(requests, {
            vocabularySize: vocabularySize(model), count: true, toolFields: tools.tools.map((tool) => tool.parametersField ?? "tools")
        });
    } catch (error) {
        throw refusedPreparation(error, field);
    }
    const [applied, ...more] = prepared.results as [NativeChatApplyResult, ...NativeChatApplyResult[]];
    const constraint = named ? more[0]! : applied;
    const opening = forced ? callOpening(more.at(-1)!) : "";
    // the worker counted the prompt: one too long for the context is refused before it is tokenized here
    context.refuseOverlong(prepared.promptTokens![0]! + (addBos ? 1 : 0));
    const generationPrompt = constraint.generationPrompt + opening;
    let grammar: LlamaGrammar | undefined;
    if (choice !== "none" && constraint.grammar !== "") {
        try {
            grammar = new LlamaGrammar(model.llama, {grammar: constraint.grammar});
        } catch (error) {
            throw OpenAiError.badRequest(`\`tools\`: llama.cpp could not parse the tool-call grammar of these tools (${firstLine(error)}).`, "tools");
        }
        bindings.tensorwiseSetGrammarSampling((grammar as unknown as {_grammar: object})._grammar, {
            lazy: constraint.grammarLazy, triggers: constraint.grammarTriggers, preservedTokens: constraint.preservedTokens,
            prefill: generationPrompt
        });
    }
    const tokens = model.tokenize(applied.prompt + opening, true);
    return {
        tokens,
        promptTokens: tokens.length + (addBos ? 1 : 0),
        grammar,
        stops: applied.additionalStops,
        formatName: constraint.formatName,
        opening,
        parse: (text, partial) => {
            let parsed;
            try {
                parsed = bindings.tensorwiseChatParse({text, format: constraint.format, parser: constraint.parser, generationPrompt,
                    isPartial: partial, reasoningFormat: reasoning.reasoningFormat, reasoningInContent: streamed && reasoning.reasoningFormat === "deepseek-legacy"});
            } catch (error) {
                throw new OpenAiError(500, `llama.cpp could not parse the model's reply into thinking, content and tool calls: ${firstLine(error)}`, "server_error",
                    "unparsable_reply");
            }
            return {
                content: parsed.content, reasoning: parsed.reasoningContent,
                toolCalls: parsed.toolCalls.map((call) => ({id: call.id, name: call.name, arguments: call.arguments}))
            };
        }
    };
}

/** common_grammar_trigger_type's WORD (common/common.h): a literal string that starts the grammar. */
const TRIGGER_WORD = 1;

/** The first literal trigger of a lazy tool-call grammar: the text the template opens a call with; "" when it has none. */
function callOpening(auto: NativeChatApplyResult): string {
    return auto.grammarTriggers.find((trigger) => trigger.type === TRIGGER_WORD)?.value ?? "";
}

/** An id in OpenAI's style (`call_` and random characters). */
export function newToolCallId(): string {
    return `call_${randomBytes(12).toString("hex")}`;
}

function firstLine(error: unknown): string {
    return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 300);
}
