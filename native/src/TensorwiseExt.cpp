#include "TensorwiseExt.h"
#include "TensorwiseGenerate.h"
#include "TensorwiseChat.h"
#include "TensorwiseGrammar.h"
#include "TensorwiseProfiler.h"
#include "TensorwiseRpc.h"

#include <map>
#include <regex>

#include "AddonContext.h"
#include "AddonModel.h"
#include "ggml-backend.h"
#include "llama-ext.h"
#include "llama-model.h"

const char* tensorwiseDeviceTypeName(enum ggml_backend_dev_type type) {
    switch (type) {
        case GGML_BACKEND_DEVICE_TYPE_CPU: return "cpu";
        case GGML_BACKEND_DEVICE_TYPE_GPU: return "gpu";
        case GGML_BACKEND_DEVICE_TYPE_IGPU: return "igpu";
        case GGML_BACKEND_DEVICE_TYPE_ACCEL: return "accel";
        default: return "unknown";
    }
}

namespace {

const char* deviceTypeName(enum ggml_backend_dev_type type) { return tensorwiseDeviceTypeName(type); }

// Every buffer type a tensor can be placed in: each device's own buffer type and its pinned host buffer type.
// source: common/arg.cpp parse_tensor_buffer_overrides (device buffer types), extended with host buffer types.
std::map<std::string, ggml_backend_buffer_type_t> listBufferTypes() {
    std::map<std::string, ggml_backend_buffer_type_t> result;
    for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(dev)) {
            result[ggml_backend_buft_name(buft)] = buft;
        }
        if (ggml_backend_buffer_type_t host = ggml_backend_dev_host_buffer_type(dev)) {
            result[ggml_backend_buft_name(host)] = host;
        }
    }
    return result;
}

Napi::Object describeBufferType(Napi::Env env, ggml_backend_buffer_type_t buft) {
    Napi::Object item = Napi::Object::New(env);
    item.Set("name", Napi::String::New(env, ggml_backend_buft_name(buft)));
    item.Set("isHost", Napi::Boolean::New(env, ggml_backend_buft_is_host(buft)));
    ggml_backend_dev_t dev = ggml_backend_buft_get_device(buft);
    if (dev != nullptr) {
        item.Set("device", Napi::String::New(env, ggml_backend_dev_name(dev)));
        item.Set("deviceType", Napi::String::New(env, deviceTypeName(ggml_backend_dev_type(dev))));
    } else {
        item.Set("device", env.Null());
        item.Set("deviceType", env.Null());
    }
    return item;
}

Napi::Value getExtVersion(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), TENSORWISE_EXT_VERSION);
}

Napi::Value getBufferTypes(const Napi::CallbackInfo& info) {
    auto bufferTypes = listBufferTypes();
    Napi::Array result = Napi::Array::New(info.Env(), bufferTypes.size());
    uint32_t index = 0;
    for (const auto& [name, buft] : bufferTypes) {
        result.Set(index++, describeBufferType(info.Env(), buft));
    }
    return result;
}

Napi::Value getDevices(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Array result = Napi::Array::New(env, ggml_backend_dev_count());
    for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        size_t freeBytes = 0;
        size_t totalBytes = 0;
        ggml_backend_dev_memory(dev, &freeBytes, &totalBytes);

        Napi::Object item = Napi::Object::New(env);
        item.Set("name", Napi::String::New(env, ggml_backend_dev_name(dev)));
        item.Set("description", Napi::String::New(env, ggml_backend_dev_description(dev)));
        item.Set("type", Napi::String::New(env, deviceTypeName(ggml_backend_dev_type(dev))));
        ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
        item.Set("backend", reg != nullptr ? Napi::Value(Napi::String::New(env, ggml_backend_reg_name(reg))) : env.Null());
        item.Set("freeBytes", Napi::Number::New(env, (double) freeBytes));
        item.Set("totalBytes", Napi::Number::New(env, (double) totalBytes));
        ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(dev);
        item.Set("bufferType", buft != nullptr ? Napi::Value(Napi::String::New(env, ggml_backend_buft_name(buft))) : env.Null());
        ggml_backend_buffer_type_t host = ggml_backend_dev_host_buffer_type(dev);
        item.Set("hostBufferType", host != nullptr ? Napi::Value(Napi::String::New(env, ggml_backend_buft_name(host))) : env.Null());
        result.Set((uint32_t) i, item);
    }
    return result;
}

// Throws a JS error naming the first bad override, so a bad plan never reaches the AddonModel constructor.
Napi::Value validateTensorBufferOverrides(const Napi::CallbackInfo& info) {
    TensorwiseTensorBufferOverrides parsed;
    std::string error = tensorwiseParseTensorBufferOverrides(info[0], parsed);
    if (!error.empty()) {
        Napi::Error::New(info.Env(), error).ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }
    return Napi::Number::New(info.Env(), (double) parsed.patterns.size());
}

}  // namespace

Napi::Array tensorwiseBreakdownToArray(Napi::Env env, const llama_memory_breakdown& breakdown) {
    Napi::Array result = Napi::Array::New(env);
    uint32_t index = 0;
    for (const auto& [buft, data] : breakdown) {
        if (data.model == 0 && data.context == 0 && data.compute == 0) {
            continue;
        }
        Napi::Object item = describeBufferType(env, buft);
        item.Set("model", Napi::Number::New(env, (double) data.model));
        item.Set("context", Napi::Number::New(env, (double) data.context));
        item.Set("compute", Napi::Number::New(env, (double) data.compute));
        result.Set(index++, item);
    }
    return result;
}

namespace {

// Model weights per buffer type, readable right after load (no context needed).
Napi::Value getModelMemoryBreakdown(const Napi::CallbackInfo& info) {
    AddonModel* model = Napi::ObjectWrap<AddonModel>::Unwrap(info[0].As<Napi::Object>());
    if (model == nullptr || model->disposed || !model->modelLoaded || model->model == nullptr) {
        Napi::Error::New(info.Env(), "Model is not loaded").ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }
    llama_memory_breakdown breakdown;
    for (const auto& [buft, size] : model->model->memory_breakdown()) {
        breakdown[buft].model += size;
    }
    return tensorwiseBreakdownToArray(info.Env(), breakdown);
}

// Weights, KV cache and compute buffers per buffer type, as llama.cpp accounts them for a context.
// source: llama_get_memory_breakdown (src/llama-ext.h) = llama_context::memory_breakdown().
Napi::Value getContextMemoryBreakdown(const Napi::CallbackInfo& info) {
    AddonContext* context = Napi::ObjectWrap<AddonContext>::Unwrap(info[0].As<Napi::Object>());
    if (context == nullptr || context->ctx == nullptr) {
        Napi::Error::New(info.Env(), "Context is not loaded").ThrowAsJavaScriptException();
        return info.Env().Undefined();
    }
    return tensorwiseBreakdownToArray(info.Env(), llama_get_memory_breakdown(context->ctx));
}

}  // namespace

std::string tensorwiseParseDevices(const Napi::Value& list, std::vector<ggml_backend_dev_t>& out) {
    if (!list.IsArray()) {
        return "devices must be an array of device names";
    }
    Napi::Array items = list.As<Napi::Array>();
    out.clear();
    for (uint32_t i = 0; i < items.Length(); i++) {
        if (!items.Get(i).IsString()) {
            return "device #" + std::to_string(i) + " must be a device name";
        }
        std::string name = items.Get(i).As<Napi::String>().Utf8Value();
        ggml_backend_dev_t dev = ggml_backend_dev_by_name(name.c_str());
        // source: common/arg.cpp parse_device_list — only GPU-like devices can be listed; the CPU is always used
        if (dev == nullptr || ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU) {
            std::string available;
            for (size_t d = 0; d < ggml_backend_dev_count(); d++) {
                ggml_backend_dev_t candidate = ggml_backend_dev_get(d);
                if (ggml_backend_dev_type(candidate) == GGML_BACKEND_DEVICE_TYPE_CPU) continue;
                available += (available.empty() ? "" : ", ") + std::string(ggml_backend_dev_name(candidate));
            }
            return "device #" + std::to_string(i) + " \"" + name + "\" is not a GPU device of this binary (it has: " +
                (available.empty() ? "none" : available) + ")";
        }
        out.push_back(dev);
    }
    out.push_back(nullptr);
    return "";
}

std::string tensorwiseParseTensorBufferOverrides(const Napi::Value& list, TensorwiseTensorBufferOverrides& out) {
    if (!list.IsArray()) {
        return "tensorBufferOverrides must be an array of [pattern, bufferType] pairs";
    }
    Napi::Array items = list.As<Napi::Array>();
    if (items.Length() > llama_max_tensor_buft_overrides()) {
        return "too many tensor buffer overrides: " + std::to_string(items.Length()) + " (llama.cpp allows " +
            std::to_string(llama_max_tensor_buft_overrides()) + ")";
    }

    auto bufferTypes = listBufferTypes();
    out.patterns.clear();
    out.overrides.clear();
    out.patterns.reserve(items.Length());

    for (uint32_t i = 0; i < items.Length(); i++) {
        Napi::Value item = items.Get(i);
        if (!item.IsArray() || item.As<Napi::Array>().Length() != 2 ||
            !item.As<Napi::Array>().Get((uint32_t) 0).IsString() || !item.As<Napi::Array>().Get((uint32_t) 1).IsString()) {
            return "tensor buffer override #" + std::to_string(i) + " must be a [pattern, bufferType] pair of strings";
        }
        std::string pattern = item.As<Napi::Array>().Get((uint32_t) 0).As<Napi::String>().Utf8Value();
        std::string bufferTypeName = item.As<Napi::Array>().Get((uint32_t) 1).As<Napi::String>().Utf8Value();

        if (pattern.empty()) {
            return "tensor buffer override #" + std::to_string(i) + " has an empty pattern";
        }
        try {
            // the same regex engine and flavour llama.cpp's loader uses (std::regex, ECMAScript)
            std::regex compiled(pattern);
            (void) compiled;
        } catch (const std::regex_error& e) {
            return "tensor buffer override #" + std::to_string(i) + " has an invalid pattern \"" + pattern + "\": " + e.what();
        }

        auto found = bufferTypes.find(bufferTypeName);
        if (found == bufferTypes.end()) {
            std::string available;
            for (const auto& [name, buft] : bufferTypes) {
                available += (available.empty() ? "" : ", ") + name;
            }
            return "tensor buffer override #" + std::to_string(i) + " names an unknown buffer type \"" + bufferTypeName +
                "\" (this binary offers: " + available + ")";
        }

        out.patterns.push_back(pattern);
        out.overrides.push_back({nullptr, found->second});
    }

    for (size_t i = 0; i < out.patterns.size(); i++) {
        out.overrides[i].pattern = out.patterns[i].c_str();
    }
    out.overrides.push_back({nullptr, nullptr});
    return "";
}

void tensorwiseRegisterExports(Napi::Env env, Napi::Object exports) {
    exports.DefineProperties({
        Napi::PropertyDescriptor::Function("tensorwiseExtVersion", getExtVersion),
        Napi::PropertyDescriptor::Function("tensorwiseGetBufferTypes", getBufferTypes),
        Napi::PropertyDescriptor::Function("tensorwiseGetDevices", getDevices),
        Napi::PropertyDescriptor::Function("tensorwiseValidateTensorBufferOverrides", validateTensorBufferOverrides),
        Napi::PropertyDescriptor::Function("tensorwiseGetModelMemoryBreakdown", getModelMemoryBreakdown),
        Napi::PropertyDescriptor::Function("tensorwiseGetContextMemoryBreakdown", getContextMemoryBreakdown),
    });
    tensorwiseRegisterProfilerExports(env, exports);
    tensorwiseRegisterRpcExports(env, exports);
    tensorwiseRegisterGenerateExports(env, exports);
    tensorwiseRegisterGrammarExports(env, exports);
    tensorwiseRegisterChatExports(env, exports);
    tensorwiseRegisterSimulateExports(env, exports);
}
