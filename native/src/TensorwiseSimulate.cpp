// llama.cpp's own memory accounting of a whole configuration without allocating it: the model loaded with
// `no_alloc` (weights per buffer type) and a context reserved on it (KV cache and compute buffers per buffer type),
// with every knob a plan sets — the devices (--device), -ngl, tensor overrides, context, micro-batch, flash attention, KV cache types,
// KV offload and op offload. The same mechanism common_fit_params uses (common/fit.cpp,
// common_get_device_memory_data), but returning llama_get_memory_breakdown per buffer type.
#include <string>
#include <vector>

#include "TensorwiseExt.h"
#include "ggml-backend.h"
#include "llama-ext.h"
#include "llama.h"

namespace {

struct SimulateRequest {
    std::string modelPath;
    int32_t gpuLayers = 0;
    TensorwiseTensorBufferOverrides overrides;
    bool hasOverrides = false;
    std::vector<ggml_backend_dev_t> devices;  // null-terminated; empty: llama.cpp picks (every GPU)
    uint32_t contextSize = 2048;
    uint32_t batchSize = 512;
    uint32_t sequences = 1;
    bool flashAttention = false;
    int32_t typeK = GGML_TYPE_F16;
    int32_t typeV = GGML_TYPE_F16;
    bool kvOffload = true;
    bool opOffload = true;
    bool swaFull = false;  // node-llama-cpp's AddonContext default (swaFullCache false); llama.cpp's own is true
};

struct BufferMemory {
    ggml_backend_buffer_type_t buft;
    llama_memory_breakdown_data data;
};

class SimulateWorker : public Napi::AsyncWorker {
public:
    SimulateWorker(Napi::Env env, SimulateRequest request)
        : Napi::AsyncWorker(env, "tensorwiseSimulateMemory"), deferred(Napi::Promise::Deferred::New(env)), req(std::move(request)) {}

    Napi::Promise promise() { return deferred.Promise(); }

    void Execute() override {
        llama_model_params mparams = llama_model_default_params();
        mparams.no_alloc = true;
        mparams.load_mode = LLAMA_LOAD_MODE_NONE;  // device buffers are the same either way (as common/fit.cpp)
        mparams.n_gpu_layers = req.gpuLayers;
        if (!req.devices.empty()) mparams.devices = req.devices.data();
        if (req.hasOverrides) {
            // the request was moved here: point the patterns at the strings this worker owns
            for (size_t i = 0; i < req.overrides.patterns.size(); i++) req.overrides.overrides[i].pattern = req.overrides.patterns[i].c_str();
            mparams.tensor_buft_overrides = req.overrides.overrides.data();
        }
        llama_model* model = llama_model_load_from_file(req.modelPath.c_str(), mparams);
        if (model == nullptr) {
            SetError("llama.cpp could not load the model for the memory simulation");
            return;
        }
        llama_context_params cparams = llama_context_default_params();
        cparams.n_ctx = req.contextSize;
        cparams.n_batch = req.batchSize;
        cparams.n_ubatch = req.batchSize;  // node-llama-cpp sets n_ubatch = n_batch
        cparams.n_seq_max = req.sequences;
        cparams.kv_unified = false;         // as node-llama-cpp's AddonContext
        cparams.flash_attn_type = req.flashAttention ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
        cparams.type_k = (ggml_type) req.typeK;
        cparams.type_v = (ggml_type) req.typeV;
        cparams.offload_kqv = req.kvOffload;
        cparams.op_offload = req.opOffload;
        cparams.swa_full = req.swaFull;
        cparams.no_perf = true;
        llama_context* ctx = llama_init_from_model(model, cparams);
        if (ctx == nullptr) {
            llama_model_free(model);
            SetError("llama.cpp could not create a context with these settings (see its log for the reason)");
            return;
        }
        for (const auto& [buft, data] : llama_get_memory_breakdown(ctx)) result.push_back({buft, data});
        llama_free(ctx);
        llama_model_free(model);
    }

    void OnOK() override {
        llama_memory_breakdown breakdown;
        for (const auto& item : result) breakdown[item.buft] = item.data;
        deferred.Resolve(tensorwiseBreakdownToArray(Env(), breakdown));
    }

    void OnError(const Napi::Error& error) override { deferred.Reject(error.Value()); }

private:
    Napi::Promise::Deferred deferred;
    SimulateRequest req;
    std::vector<BufferMemory> result;
};

// tensorwiseSimulateMemory({modelPath, gpuLayers, overrides, contextSize, batchSize, sequences, flashAttention,
//   typeK, typeV, kvOffload, opOffload, swaFull, devices}) → Promise<[{name, isHost, device, deviceType, model, context, compute}]>
Napi::Value simulateMemory(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject() || !info[0].As<Napi::Object>().Get("modelPath").IsString()) {
        Napi::TypeError::New(env, "tensorwiseSimulateMemory({modelPath, ...}) needs a model path").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    Napi::Object o = info[0].As<Napi::Object>();
    SimulateRequest req;
    req.modelPath = o.Get("modelPath").As<Napi::String>().Utf8Value();
    auto num = [&](const char* key, double fallback, double min, double max, bool& ok) {
        if (!o.Has(key) || o.Get(key).IsUndefined()) return fallback;
        double value = o.Get(key).IsNumber() ? o.Get(key).As<Napi::Number>().DoubleValue() : -1e300;
        if (!(value >= min && value <= max) || value != (double) (int64_t) value) ok = false;
        return value;
    };
    auto flag = [&](const char* key, bool fallback, bool& ok) {
        if (!o.Has(key) || o.Get(key).IsUndefined()) return fallback;
        if (!o.Get(key).IsBoolean()) {
            ok = false;
            return fallback;
        }
        return o.Get(key).As<Napi::Boolean>().Value();
    };
    bool ok = true;
    req.gpuLayers = (int32_t) num("gpuLayers", 0, 0, 100000, ok);
    req.contextSize = (uint32_t) num("contextSize", 2048, 1, 1 << 24, ok);
    req.batchSize = (uint32_t) num("batchSize", 512, 1, 1 << 20, ok);
    req.sequences = (uint32_t) num("sequences", 1, 1, 1024, ok);
    req.typeK = (int32_t) num("typeK", GGML_TYPE_F16, 0, GGML_TYPE_COUNT - 1, ok);
    req.typeV = (int32_t) num("typeV", GGML_TYPE_F16, 0, GGML_TYPE_COUNT - 1, ok);
    req.flashAttention = flag("flashAttention", false, ok);
    req.kvOffload = flag("kvOffload", true, ok);
    req.opOffload = flag("opOffload", true, ok);
    req.swaFull = flag("swaFull", false, ok);
    if (!ok) {
        Napi::RangeError::New(env, "tensorwiseSimulateMemory: a field is out of range or of the wrong type").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    if (o.Has("devices") && !o.Get("devices").IsUndefined()) {
        std::string error = tensorwiseParseDevices(o.Get("devices"), req.devices);
        if (!error.empty()) {
            Napi::Error::New(env, error).ThrowAsJavaScriptException();
            return env.Undefined();
        }
    }
    if (o.Has("overrides") && !o.Get("overrides").IsUndefined()) {
        std::string error = tensorwiseParseTensorBufferOverrides(o.Get("overrides"), req.overrides);
        if (!error.empty()) {
            Napi::Error::New(env, error).ThrowAsJavaScriptException();
            return env.Undefined();
        }
        req.hasOverrides = req.overrides.patterns.size() > 0;
    }
    auto* worker = new SimulateWorker(env, std::move(req));
    Napi::Promise promise = worker->promise();
    worker->Queue();
    return promise;
}

}  // namespace

void tensorwiseRegisterSimulateExports(Napi::Env env, Napi::Object exports) {
    exports.DefineProperties({Napi::PropertyDescriptor::Function("tensorwiseSimulateMemory", simulateMemory)});
}
