// tensorwise: llama.cpp's chat layer (common/chat.h: common_chat_templates_init / common_chat_templates_apply /
// common_chat_parse, in libllama-common, which the addon links; see native/CMakeLists.txt) and the tool-call grammar
// sampler llama-server builds from its output (common_sampler_init in common/sampling.cpp).
#include "TensorwiseChat.h"
#include "TensorwiseGrammarSampling.h"

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "AddonGrammar.h"
#include "chat.h"
#include "common.h"
#include "json.h"

namespace {

std::string stringField(const Napi::Object& object, const char* name, const std::string& fallback = "") {
    if (!object.Has(name) || object.Get(name).IsUndefined() || object.Get(name).IsNull())
        return fallback;
    if (!object.Get(name).IsString())
        throw std::invalid_argument(std::string(name) + " must be a string");
    return object.Get(name).As<Napi::String>().Utf8Value();
}

bool boolField(const Napi::Object& object, const char* name, bool fallback) {
    if (!object.Has(name) || object.Get(name).IsUndefined())
        return fallback;
    if (!object.Get(name).IsBoolean())
        throw std::invalid_argument(std::string(name) + " must be a boolean");
    return object.Get(name).As<Napi::Boolean>().Value();
}

Napi::Array stringArray(Napi::Env env, const std::vector<std::string>& values) {
    Napi::Array array = Napi::Array::New(env, values.size());
    for (size_t i = 0; i < values.size(); i++)
        array.Set(i, Napi::String::New(env, values[i]));
    return array;
}

// A common_reasoning_format by llama.cpp's name ("none", "auto", "deepseek", "deepseek-legacy"); absent: "none".
common_reasoning_format reasoningFormatField(const Napi::Object& object) {
    return common_reasoning_format_from_name(stringField(object, "reasoningFormat", "none"));
}

// tensorwiseChatApply({template, bosToken, eosToken, addBos, messages, tools, toolChoice, parallelToolCalls,
// addGenerationPrompt, reasoningFormat, enableThinking, chatTemplateKwargs}) → {prompt, format, formatName, grammar,
// grammarLazy, grammarTriggers, preservedTokens, additionalStops, generationPrompt, parser, supportsThinking,
// thinkingStartTag, thinkingEndTags}. `messages` and `tools` are JSON text in OpenAI's chat-completions shapes
// (common_chat_msgs_parse_oaicompat, common_chat_tools_parse_oaicompat; an assistant message's `reasoning_content`
// reaches the template), `chatTemplateKwargs` a JSON object of extra template variables (llama-server's
// chat_template_kwargs); throws with llama.cpp's message otherwise.
Napi::Value chatApply(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject()) {
        Napi::TypeError::New(env, "tensorwiseChatApply takes one request object").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    try {
        const Napi::Object request = info[0].As<Napi::Object>();
        const std::string source = stringField(request, "template");
        if (source.empty())
            throw std::invalid_argument("template must be the model's chat template");
        // a non-empty template: common_chat_templates_init never reads the model then
        auto templates = common_chat_templates_init(nullptr, source, stringField(request, "bosToken"), stringField(request, "eosToken"));

        common_chat_templates_inputs inputs;
        inputs.messages = common_chat_msgs_parse_oaicompat(common_json::parse(stringField(request, "messages", "[]")));
        inputs.tools = common_chat_tools_parse_oaicompat(common_json::parse(stringField(request, "tools", "[]")));
        inputs.tool_choice = common_chat_tool_choice_parse_oaicompat(stringField(request, "toolChoice", "auto"));
        inputs.parallel_tool_calls = boolField(request, "parallelToolCalls", false);
        inputs.add_generation_prompt = boolField(request, "addGenerationPrompt", true);
        inputs.add_bos = boolField(request, "addBos", false);
        inputs.use_jinja = true;
        // source: oaicompat_chat_params_parse (tools/server/server-common.cpp): the parser extracts the reasoning only
        // when the format is not "none"; enable_thinking is the template's switch (and llama.cpp's own for templates it knows)
        inputs.reasoning_format = reasoningFormatField(request);
        inputs.enable_thinking = boolField(request, "enableThinking", true);
        const common_json kwargs = common_json::parse(stringField(request, "chatTemplateKwargs", "{}"));
        if (!kwargs.is_object())
            throw std::invalid_argument("chatTemplateKwargs must be a JSON object");
        for (const auto& item : kwargs.items())
            inputs.chat_template_kwargs[item.key()] = item.value().dump();
        const common_chat_params params = common_chat_templates_apply(templates.get(), inputs);

        Napi::Object result = Napi::Object::New(env);
        result.Set("prompt", Napi::String::New(env, params.prompt));
        result.Set("format", Napi::Number::New(env, static_cast<int>(params.format)));
        result.Set("formatName", Napi::String::New(env, common_chat_format_name(params.format)));
        result.Set("grammar", Napi::String::New(env, params.grammar));
        result.Set("grammarLazy", Napi::Boolean::New(env, params.grammar_lazy));
        Napi::Array triggers = Napi::Array::New(env, params.grammar_triggers.size());
        for (size_t i = 0; i < params.grammar_triggers.size(); i++) {
            Napi::Object trigger = Napi::Object::New(env);
            trigger.Set("type", Napi::Number::New(env, static_cast<int>(params.grammar_triggers[i].type)));
            trigger.Set("value", Napi::String::New(env, params.grammar_triggers[i].value));
            triggers.Set(i, trigger);
        }
        result.Set("grammarTriggers", triggers);
        result.Set("preservedTokens", stringArray(env, params.preserved_tokens));
        result.Set("additionalStops", stringArray(env, params.additional_stops));
        result.Set("generationPrompt", Napi::String::New(env, params.generation_prompt));
        result.Set("parser", Napi::String::New(env, params.parser));
        result.Set("supportsThinking", Napi::Boolean::New(env, params.supports_thinking));
        result.Set("thinkingStartTag", Napi::String::New(env, params.thinking_start_tag));
        result.Set("thinkingEndTags", stringArray(env, params.thinking_end_tags));
        return result;
    } catch (const std::exception& error) {
        Napi::Error::New(env, error.what()).ThrowAsJavaScriptException();
        return env.Undefined();
    }
}

// tensorwiseChatParse({text, format, parser, generationPrompt, isPartial, reasoningFormat, reasoningInContent}) →
// {content, reasoningContent, toolCalls: [{name, arguments, id}]}: the reply as llama-server parses it
// (common_chat_parse) with the parser of the apply (made with the same reasoningFormat).
Napi::Value chatParse(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject()) {
        Napi::TypeError::New(env, "tensorwiseChatParse takes one request object").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    try {
        const Napi::Object request = info[0].As<Napi::Object>();
        if (!request.Get("format").IsNumber())
            throw std::invalid_argument("format must be a chat format id");
        const int format = request.Get("format").As<Napi::Number>().Int32Value();
        if (format < 0 || format >= COMMON_CHAT_FORMAT_COUNT)
            throw std::invalid_argument("format is not a chat format id of this llama.cpp");
        common_chat_parser_params params;
        params.format = static_cast<common_chat_format>(format);
        params.generation_prompt = stringField(request, "generationPrompt");
        params.parse_tool_calls = true;
        params.reasoning_format = reasoningFormatField(request);
        params.reasoning_in_content = boolField(request, "reasoningInContent", false);
        const std::string parser = stringField(request, "parser");
        if (!parser.empty())
            params.parser.load(parser);
        const common_chat_msg message = common_chat_parse(stringField(request, "text"), boolField(request, "isPartial", false), params);

        Napi::Object result = Napi::Object::New(env);
        result.Set("content", Napi::String::New(env, message.content));
        result.Set("reasoningContent", Napi::String::New(env, message.reasoning_content));
        Napi::Array calls = Napi::Array::New(env, message.tool_calls.size());
        for (size_t i = 0; i < message.tool_calls.size(); i++) {
            Napi::Object call = Napi::Object::New(env);
            call.Set("name", Napi::String::New(env, message.tool_calls[i].name));
            call.Set("arguments", Napi::String::New(env, message.tool_calls[i].arguments));
            call.Set("id", Napi::String::New(env, message.tool_calls[i].id));
            calls.Set(i, call);
        }
        result.Set("toolCalls", calls);
        return result;
    } catch (const std::exception& error) {
        Napi::Error::New(env, error.what()).ThrowAsJavaScriptException();
        return env.Undefined();
    }
}

// tensorwiseSetGrammarSampling(addonGrammar, {lazy, triggers: [{type, value}], preservedTokens, prefill}): how every
// evaluation state of this grammar builds its sampler (tensorwiseInitGrammarSampler). Call before generating with it.
Napi::Value setGrammarSampling(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsObject()) {
        Napi::TypeError::New(env, "tensorwiseSetGrammarSampling takes an AddonGrammar and an options object").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    try {
        AddonGrammar* grammar = Napi::ObjectWrap<AddonGrammar>::Unwrap(info[0].As<Napi::Object>());
        const Napi::Object options = info[1].As<Napi::Object>();
        TensorwiseGrammarSampling sampling;
        sampling.lazy = boolField(options, "lazy", false);
        sampling.prefill = stringField(options, "prefill");
        if (options.Has("triggers") && options.Get("triggers").IsArray()) {
            const Napi::Array triggers = options.Get("triggers").As<Napi::Array>();
            for (uint32_t i = 0; i < triggers.Length(); i++) {
                const Napi::Object trigger = triggers.Get(i).As<Napi::Object>();
                sampling.triggers.push_back({trigger.Get("type").As<Napi::Number>().Int32Value(), stringField(trigger, "value")});
            }
        }
        if (options.Has("preservedTokens") && options.Get("preservedTokens").IsArray()) {
            const Napi::Array tokens = options.Get("preservedTokens").As<Napi::Array>();
            for (uint32_t i = 0; i < tokens.Length(); i++)
                sampling.preservedTokens.push_back(tokens.Get(i).As<Napi::String>().Utf8Value());
        }
        if (sampling.lazy && sampling.triggers.empty())
            throw std::invalid_argument("a lazy grammar needs at least one trigger");
        grammar->tensorwiseSampling = std::move(sampling);
        return env.Undefined();
    } catch (const std::exception& error) {
        Napi::Error::New(env, error.what()).ThrowAsJavaScriptException();
        return env.Undefined();
    }
}

}  // namespace

// source: common_sampler_init (common/sampling.cpp) for the grammar and its triggers, the grammar_triggers handler of
// tools/server/server-schema.cpp for a trigger word that is one preserved token.
llama_sampler* tensorwiseInitGrammarSampler(const llama_vocab* vocab, const std::string& grammar, const std::string& root,
    const TensorwiseGrammarSampling& sampling) {
    if (!sampling.lazy) {
        llama_sampler* sampler = llama_sampler_init_grammar(vocab, grammar.c_str(), root.c_str());
        if (sampler == nullptr || sampling.prefill.empty())
            return sampler;
        const std::vector<llama_token> tokens = common_tokenize(vocab, sampling.prefill, false, true);
        try {
            for (size_t i = 0; i < tokens.size(); i++) {
                const std::string piece = common_token_to_piece(vocab, tokens[i], true);
                // some tokenizers add a space before the first special token
                if (i == 0 && !piece.empty() && std::isspace(static_cast<unsigned char>(piece[0])) &&
                    !std::isspace(static_cast<unsigned char>(sampling.prefill[0])))
                    continue;
                llama_sampler_accept(sampler, tokens[i]);
            }
        } catch (const std::exception&) {
            // the grammar rejects the generation prompt as this vocabulary tokenizes it (llama-server would fail the same way)
            llama_sampler_free(sampler);
            return nullptr;
        }
        return sampler;
    }
    std::vector<std::string> patterns;
    std::vector<llama_token> tokens;
    for (const auto& trigger : sampling.triggers) {
        switch (trigger.type) {
            case COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN:
            case COMMON_GRAMMAR_TRIGGER_TYPE_WORD: {
                const std::vector<llama_token> ids = common_tokenize(vocab, trigger.value, false, true);
                bool preserved = false;
                for (const auto& text : sampling.preservedTokens)
                    preserved = preserved || text == trigger.value;
                if (ids.size() == 1 && preserved)
                    tokens.push_back(ids[0]);
                else
                    patterns.push_back(regex_escape(trigger.value));
                break;
            }
            case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN:
                patterns.push_back(trigger.value);
                break;
            case COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL: {
                const std::string& pattern = trigger.value;
                std::string anchored = "^$";
                if (!pattern.empty())
                    anchored = (pattern.front() != '^' ? "^" : "") + pattern + (pattern.back() != '$' ? "$" : "");
                patterns.push_back(anchored);
                break;
            }
            default:
                return nullptr;
        }
    }
    std::vector<const char*> patternPointers;
    for (const auto& pattern : patterns)
        patternPointers.push_back(pattern.c_str());
    return llama_sampler_init_grammar_lazy_patterns(vocab, grammar.c_str(), root.c_str(), patternPointers.data(), patternPointers.size(),
        tokens.data(), tokens.size());
}

void tensorwiseRegisterChatExports(Napi::Env env, Napi::Object exports) {
    exports.Set("tensorwiseChatApply", Napi::Function::New(env, chatApply, "tensorwiseChatApply"));
    exports.Set("tensorwiseChatParse", Napi::Function::New(env, chatParse, "tensorwiseChatParse"));
    exports.Set("tensorwiseSetGrammarSampling", Napi::Function::New(env, setGrammarSampling, "tensorwiseSetGrammarSampling"));
}
