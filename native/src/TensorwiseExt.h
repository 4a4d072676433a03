#pragma once
// tensorwise extensions to node-llama-cpp's addon: per-tensor buffer-type overrides, the buffer types this binary
// offers, and llama.cpp's per-buffer-type memory breakdown (model weights / context = KV cache / compute = scratch).

#include <string>
#include <vector>

#include "llama.h"
#include "napi.h"

// Bumped when the JS side needs something new from the native side; checked by the engine at load.
#define TENSORWISE_EXT_VERSION 2

struct TensorwiseTensorBufferOverrides {
    // Owns the pattern strings that `overrides` points into (llama.cpp keeps only the `const char *`).
    std::vector<std::string> patterns;
    // Null-terminated, as `llama_model_params.tensor_buft_overrides` requires.
    std::vector<llama_model_tensor_buft_override> overrides;
};

// Parses `[[pattern, bufferTypeName], ...]` into `out`. Returns an empty string on success, otherwise the reason.
std::string tensorwiseParseTensorBufferOverrides(const Napi::Value& list, TensorwiseTensorBufferOverrides& out);

void tensorwiseRegisterExports(Napi::Env env, Napi::Object exports);
