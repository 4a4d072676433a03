// tensorwise: JSON schema → GBNF with llama.cpp's json_schema_to_grammar (libllama-common, which the addon links; see
// native/CMakeLists.txt). The grammar is then handed to node-llama-cpp's LlamaGrammar, whose sampler is
// llama_sampler_init_grammar.
#include "TensorwiseGrammar.h"

#include <exception>
#include <string>

#include "json-schema-to-grammar.h"
#include "json.h"

namespace {

// tensorwiseJsonSchemaToGrammar(schemaJsonText: string) → GBNF text; throws an Error with llama.cpp's message when the
// text is not JSON or the schema cannot be converted (an unsupported keyword, a pattern with no grammar equivalent…).
Napi::Value jsonSchemaToGrammar(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) {
        Napi::TypeError::New(env, "tensorwiseJsonSchemaToGrammar takes the schema as JSON text").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    const std::string text = info[0].As<Napi::String>().Utf8Value();
    try {
        const common_json schema = common_json::parse(text);
        return Napi::String::New(env, json_schema_to_grammar(schema));
    } catch (const std::exception& error) {
        Napi::Error::New(env, error.what()).ThrowAsJavaScriptException();
        return env.Undefined();
    }
}

}  // namespace

void tensorwiseRegisterGrammarExports(Napi::Env env, Napi::Object exports) {
    exports.Set("tensorwiseJsonSchemaToGrammar", Napi::Function::New(env, jsonSchemaToGrammar, "tensorwiseJsonSchemaToGrammar"));
}
