// llama.cpp's own automatic fitting (`--fit`, common_fit_params in libllama-common), reachable from JS so the `fit`
// strategy is exactly what llama.cpp would choose for the same free-memory target.
#include <algorithm>
#include <string>
#include <vector>

#include "TensorwiseProfiler.h"
#include "fit.h"
#include "ggml-backend.h"
#include "llama.h"

namespace {

struct FitRequest {
    std::string modelPath;
    std::vector<std::pair<std::string, double>> margins;  // device name → bytes to leave free
    double defaultMargin = 1024.0 * 1024 * 1024;          // llama.cpp's default --fit-target (common.h)
    uint32_t contextSize = 2048;
    uint32_t batchSize = 512;
    uint32_t minContext = 0;
    bool useMmap = true;
};

struct FitResponse {
    int status = 2;
    int32_t gpuLayers = 0;
    uint32_t contextSize = 0;
    std::vector<std::pair<std::string, std::string>> overrides;  // pattern, buffer type
    std::vector<std::pair<std::string, double>> marginsUsed;
};

// The devices llama.cpp's model loader picks when llama_model_params.devices is null: every GPU, else iGPUs.
// source: llama_model_load_from_file_impl (src/llama.cpp), device selection.
std::vector<ggml_backend_dev_t> modelDevices() {
    std::vector<ggml_backend_dev_t> gpus, igpus;
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        auto type = ggml_backend_dev_type(dev);
        if (type == GGML_BACKEND_DEVICE_TYPE_GPU) gpus.push_back(dev);
        if (type == GGML_BACKEND_DEVICE_TYPE_IGPU) igpus.push_back(dev);
    }
    return gpus.empty() ? igpus : gpus;
}

class FitWorker : public Napi::AsyncWorker {
public:
    FitWorker(Napi::Env env, FitRequest request)
        : Napi::AsyncWorker(env, "tensorwiseFit"), deferred(Napi::Promise::Deferred::New(env)), req(std::move(request)) {}

    Napi::Promise promise() { return deferred.Promise(); }

    void Execute() override {
        llama_model_params mparams = llama_model_default_params();
        if (!req.useMmap) mparams.load_mode = LLAMA_LOAD_MODE_NONE;
        llama_context_params cparams = llama_context_default_params();
        cparams.n_ctx = req.contextSize;  // non-zero: common_fit_params keeps it unless n_ctx_min allows less
        cparams.n_batch = req.batchSize;
        cparams.n_ubatch = req.batchSize;  // node-llama-cpp sets n_ubatch = n_batch
        cparams.n_seq_max = 1;
        cparams.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;  // as PlacedModel loads

        std::vector<float> split(llama_max_devices(), 0.0f);
        std::vector<llama_model_tensor_buft_override> overrides(llama_max_tensor_buft_overrides(), {nullptr, nullptr});
        std::vector<size_t> margins(std::max<size_t>(llama_max_devices(), 1), (size_t) req.defaultMargin);
        auto devs = modelDevices();
        for (size_t i = 0; i < devs.size() && i < margins.size(); i++) {
            std::string name = ggml_backend_dev_name(devs[i]);
            for (const auto& [n, bytes] : req.margins) {
                if (n == name) margins[i] = (size_t) std::max(0.0, bytes);
            }
            res.marginsUsed.push_back({name, (double) margins[i]});
        }
        res.status = (int) common_fit_params(req.modelPath.c_str(), &mparams, &cparams, split.data(), overrides.data(),
            margins.data(), req.minContext == 0 ? cparams.n_ctx : req.minContext, nullptr, GGML_LOG_LEVEL_ERROR);
        res.gpuLayers = mparams.n_gpu_layers;
        res.contextSize = cparams.n_ctx;
        if (mparams.tensor_buft_overrides != nullptr) {
            for (const auto* o = mparams.tensor_buft_overrides; o->pattern != nullptr; o++) {
                res.overrides.push_back({o->pattern, o->buft != nullptr ? ggml_backend_buft_name(o->buft) : ""});
            }
        }
    }

    void OnOK() override {
        Napi::Env env = Env();
        Napi::Object result = Napi::Object::New(env);
        static const char* names[] = {"success", "failure", "error"};
        result.Set("status", names[res.status >= 0 && res.status <= 2 ? res.status : 2]);
        result.Set("gpuLayers", res.gpuLayers);
        result.Set("contextSize", res.contextSize);
        Napi::Array overrides = Napi::Array::New(env);
        for (size_t i = 0; i < res.overrides.size(); i++) {
            Napi::Array pair = Napi::Array::New(env, 2);
            pair.Set((uint32_t) 0, res.overrides[i].first);
            pair.Set((uint32_t) 1, res.overrides[i].second);
            overrides.Set((uint32_t) i, pair);
        }
        result.Set("overrides", overrides);
        Napi::Object margins = Napi::Object::New(env);
        for (const auto& [name, bytes] : res.marginsUsed) margins.Set(name, bytes);
        result.Set("margins", margins);
        deferred.Resolve(result);
    }

    void OnError(const Napi::Error& error) override { deferred.Reject(error.Value()); }

private:
    Napi::Promise::Deferred deferred;
    FitRequest req;
    FitResponse res;
};

// tensorwiseFitParams({modelPath, margins: {deviceName: bytes}, contextSize, batchSize, minContext, useMmap}) → Promise
Napi::Value fitParams(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject() || !info[0].As<Napi::Object>().Get("modelPath").IsString()) {
        Napi::TypeError::New(env, "tensorwiseFitParams({modelPath, ...}) needs a model path").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    Napi::Object o = info[0].As<Napi::Object>();
    FitRequest req;
    req.modelPath = o.Get("modelPath").As<Napi::String>().Utf8Value();
    if (o.Has("margins") && o.Get("margins").IsObject()) {
        Napi::Object m = o.Get("margins").As<Napi::Object>();
        Napi::Array keys = m.GetPropertyNames();
        for (uint32_t i = 0; i < keys.Length(); i++) {
            std::string key = keys.Get(i).As<Napi::String>().Utf8Value();
            req.margins.push_back({key, m.Get(key).As<Napi::Number>().DoubleValue()});
        }
    }
    auto num = [&](const char* key, double fallback) {
        return o.Has(key) && o.Get(key).IsNumber() ? o.Get(key).As<Napi::Number>().DoubleValue() : fallback;
    };
    req.defaultMargin = num("defaultMargin", req.defaultMargin);
    req.contextSize = (uint32_t) num("contextSize", 2048);
    req.batchSize = (uint32_t) num("batchSize", 512);
    req.minContext = (uint32_t) num("minContext", 0);
    req.useMmap = o.Has("useMmap") && o.Get("useMmap").IsBoolean() ? o.Get("useMmap").As<Napi::Boolean>().Value() : true;
    if (req.contextSize < 1 || req.batchSize < 1) {
        Napi::RangeError::New(env, "contextSize and batchSize must be positive").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    auto* worker = new FitWorker(env, std::move(req));
    Napi::Promise promise = worker->promise();
    worker->Queue();
    return promise;
}

}  // namespace

void tensorwiseRegisterFitExports(Napi::Env env, Napi::Object exports) {
    exports.DefineProperties({Napi::PropertyDescriptor::Function("tensorwiseFitParams", fitParams)});
}
