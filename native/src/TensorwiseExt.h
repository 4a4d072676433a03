#pragma once
// tensorwise extensions to node-llama-cpp's addon: per-tensor buffer-type overrides, the buffer types this binary
// offers, and llama.cpp's per-buffer-type memory breakdown (model weights / context = KV cache / compute = scratch).

#include <string>
#include <vector>

#include "ggml-backend.h"
#include "llama.h"
#include "llama-ext.h"
#include "napi.h"

// Bumped when the JS side needs something new from the native side; checked by the engine at load.
#define TENSORWISE_EXT_VERSION 6

struct TensorwiseTensorBufferOverrides {
    // Owns the pattern strings that `overrides` points into (llama.cpp keeps only the `const char *`).
    std::vector<std::string> patterns;
    // Null-terminated, as `llama_model_params.tensor_buft_overrides` requires.
    std::vector<llama_model_tensor_buft_override> overrides;
};

// Parses a list of device names (llama.cpp's `--device`, e.g. `["Vulkan0"]`; `[]` = none: the CPU alone) into a
// null-terminated list for `llama_model_params.devices`. Returns an empty string on success, otherwise the reason.
std::string tensorwiseParseDevices(const Napi::Value& list, std::vector<ggml_backend_dev_t>& out);

// Parses `[[pattern, bufferTypeName], ...]` into `out`. Returns an empty string on success, otherwise the reason.
std::string tensorwiseParseTensorBufferOverrides(const Napi::Value& list, TensorwiseTensorBufferOverrides& out);

void tensorwiseRegisterExports(Napi::Env env, Napi::Object exports);

// llama.cpp's per-buffer-type memory accounting as [{name, isHost, device, deviceType, model, context, compute}].
Napi::Array tensorwiseBreakdownToArray(Napi::Env env, const llama_memory_breakdown& breakdown);

// ggml's device type as the JS side names it ("cpu", "gpu", "igpu", "accel").
const char* tensorwiseDeviceTypeName(enum ggml_backend_dev_type type);

// tensorwiseSimulateMemory (native/src/TensorwiseSimulate.cpp).
void tensorwiseRegisterSimulateExports(Napi::Env env, Napi::Object exports);
