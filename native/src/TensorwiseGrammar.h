#pragma once
// tensorwise: JSON schema → GBNF through llama.cpp's own converter (common/json-schema-to-grammar.h), so structured
// output is constrained by exactly the grammar llama-server would build for the same schema.
#include "napi.h"

void tensorwiseRegisterGrammarExports(Napi::Env env, Napi::Object exports);
