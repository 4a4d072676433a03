// llama.cpp's own memory accounting of a whole configuration without allocating it: the model loaded with
// `no_alloc` (weights per buffer type) and a context reserved on it (KV cache and compute buffers per buffer type),
// with every knob a plan sets — the devices (--device), -ngl, tensor overrides, context, micro-batch, flash attention, KV cache types,
// KV offload and op offload. The same mechanism common_fit_params uses (common/fit.cpp,
// common_get_device_memory_data), but returning llama_get_memory_breakdown per buffer type.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

// A buffer type's accounting as text, described where it was simulated: a child's buffer types may be statics that
// only the child initialised (the CPU's extra buffer types are set up on first use), so no pointer crosses over.
struct DescribedMemory {
    std::string name;
    bool isHost = false;
    std::string device;      // empty: none
    std::string deviceType;
    llama_memory_breakdown_data data;
};

DescribedMemory describe(const BufferMemory& item) {
    DescribedMemory d;
    d.name = ggml_backend_buft_name(item.buft);
    d.isHost = ggml_backend_buft_is_host(item.buft);
    if (ggml_backend_dev_t dev = ggml_backend_buft_get_device(item.buft)) {
        d.device = ggml_backend_dev_name(dev);
        d.deviceType = tensorwiseDeviceTypeName(ggml_backend_dev_type(dev));
    }
    d.data = item.data;
    return d;
}

class SimulateWorker : public Napi::AsyncWorker {
public:
    SimulateWorker(Napi::Env env, SimulateRequest request)
        : Napi::AsyncWorker(env, "tensorwiseSimulateMemory"), deferred(Napi::Promise::Deferred::New(env)), req(std::move(request)) {}

    Napi::Promise promise() { return deferred.Promise(); }

    void Execute() override {
        // A configuration without a GPU lets the CPU's extra buffer types (AMX, CPU_REPACK) take weights, and on some
        // models llama.cpp then aborts while reserving the graph (GGML_ASSERT(*cur_backend_id != -1) in
        // ggml_backend_sched_split_graph: stock llama.cpp's CPU build does the same on MLA models as Q8_0, and
        // --no-repack avoids it). An abort cannot be caught, so such a simulation runs in a forked child: its abort
        // becomes this call's error instead of ending the app. Only CPU-only configurations fork (every buffer type
        // they report is a static one of the CPU backend, valid in this process too, and no GPU driver is touched).
        if (cpuOnly()) {
            simulateInChild();
            return;
        }
        std::string error = simulate(result);
        if (!error.empty()) SetError(error);
    }

    // Whether the configuration uses no device but the CPU: `--device none`, or no GPU registered at all.
    bool cpuOnly() const {
        if (!req.devices.empty()) return req.devices[0] == nullptr;
        for (size_t i = 0; i < ggml_backend_dev_count(); i++)
            if (ggml_backend_dev_type(ggml_backend_dev_get(i)) != GGML_BACKEND_DEVICE_TYPE_CPU) return false;
        return true;
    }

    // The simulation itself; returns an error message, or empty with `out` filled.
    std::string simulate(std::vector<BufferMemory>& out) {
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
        if (model == nullptr) return "llama.cpp could not load the model for the memory simulation";
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
            return "llama.cpp could not create a context with these settings (see its log for the reason)";
        }
        for (const auto& [buft, data] : llama_get_memory_breakdown(ctx)) out.push_back({buft, data});
        llama_free(ctx);
        llama_model_free(model);
        return "";
    }

    // The child's end of the pipe, for its abort callback (a plain function pointer cannot capture it).
    static inline int childPipe = -1;

    static void writeAll(int fd, const void* data, size_t size) {
        const char* p = static_cast<const char*>(data);
        while (size > 0) {
            ssize_t n = write(fd, p, size);
            if (n <= 0) return;
            p += n;
            size -= (size_t) n;
        }
    }

    // Child → parent: 'O', a count, then (buffer type, breakdown) pairs; 'E' and a message; or 'A' and llama.cpp's
    // abort message (the child then dies by abort()).
    void simulateInChild() {
        int fds[2];
        if (pipe(fds) != 0) {
            SetError("the memory simulation could not start (pipe failed)");
            return;
        }
        pid_t pid = fork();
        if (pid < 0) {
            close(fds[0]);
            close(fds[1]);
            SetError("the memory simulation could not start (fork failed)");
            return;
        }
        if (pid == 0) {
            close(fds[0]);
            childPipe = fds[1];
            // node's signal handlers were inherited: they would forward this child's SIGABRT to the parent's event loop
            // through libuv's shared signal pipe (and the parent would die of it); the child takes the defaults
            for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
            sigset_t all;
            sigfillset(&all);
            sigprocmask(SIG_UNBLOCK, &all, nullptr);
            // no logging into the parent's JS callbacks from here; llama.cpp's abort message goes to the parent
            llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
            ggml_set_abort_callback([](const char* message) {
                const char tag = 'A';
                writeAll(childPipe, &tag, 1);
                writeAll(childPipe, message, strlen(message));
            });
            std::vector<BufferMemory> out;
            std::string error = simulate(out);
            if (!error.empty()) {
                const char tag = 'E';
                writeAll(fds[1], &tag, 1);
                writeAll(fds[1], error.data(), error.size());
            } else {
                const char tag = 'O';
                const uint64_t count = out.size();
                writeAll(fds[1], &tag, 1);
                writeAll(fds[1], &count, sizeof count);
                for (const BufferMemory& item : out) {
                    const DescribedMemory d = describe(item);
                    for (const std::string* text : {&d.name, &d.device, &d.deviceType}) {
                        const uint64_t size = text->size();
                        writeAll(fds[1], &size, sizeof size);
                        writeAll(fds[1], text->data(), text->size());
                    }
                    const char host = d.isHost ? 1 : 0;
                    writeAll(fds[1], &host, 1);
                    writeAll(fds[1], &d.data, sizeof d.data);
                }
            }
            close(fds[1]);
            _exit(0);
        }
        close(fds[1]);
        std::string bytes;
        char chunk[4096];
        // a no-alloc simulation takes well under a second; two minutes means the child is stuck
        bool timedOut = true;
        for (int waitedMs = 0; waitedMs < 120000;) {
            pollfd p{fds[0], POLLIN, 0};
            int ready = poll(&p, 1, 1000);
            if (ready == 0) { waitedMs += 1000; continue; }
            ssize_t n = read(fds[0], chunk, sizeof chunk);
            if (n <= 0) { timedOut = false; break; }  // end of file: the child is done (exiting or aborted)
            bytes.append(chunk, (size_t) n);
        }
        close(fds[0]);
        if (timedOut) kill(pid, SIGKILL);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        if (timedOut) {
            SetError("the memory simulation did not finish within two minutes");
            return;
        }
        if (!bytes.empty() && bytes[0] == 'A') {
            SetError("llama.cpp aborts on this configuration without a GPU (" + bytes.substr(1) +
                "): its CPU repack buffer takes a weight whose op it cannot run; stock llama.cpp does the same, and --no-repack avoids it");
            return;
        }
        if (!bytes.empty() && bytes[0] == 'E') {
            SetError(bytes.substr(1));
            return;
        }
        uint64_t count = 0;
        if (bytes.size() < 1 + sizeof count || bytes[0] != 'O' || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            SetError("the memory simulation ended without a result" +
                std::string(WIFSIGNALED(status) ? " (killed by signal " + std::to_string(WTERMSIG(status)) + ")" : ""));
            return;
        }
        size_t at = 1;
        auto take = [&](void* into, size_t size) {
            if (bytes.size() - at < size) return false;
            memcpy(into, bytes.data() + at, size);
            at += size;
            return true;
        };
        bool whole = take(&count, sizeof count) && count < 4096;
        for (uint64_t i = 0; whole && i < count; i++) {
            DescribedMemory d;
            for (std::string* text : {&d.name, &d.device, &d.deviceType}) {
                uint64_t size = 0;
                if (!(whole = take(&size, sizeof size) && size <= bytes.size() - at)) break;
                text->assign(bytes.data() + at, size);
                at += size;
            }
            char host = 0;
            whole = whole && take(&host, 1) && take(&d.data, sizeof d.data);
            d.isHost = host != 0;
            if (whole) described.push_back(std::move(d));
        }
        if (!whole || at != bytes.size()) {
            described.clear();
            SetError("the memory simulation's result was cut short");
            return;
        }
        forked = true;
    }

    void OnOK() override {
        if (!forked) {
            llama_memory_breakdown breakdown;
            for (const auto& item : result) breakdown[item.buft] = item.data;
            deferred.Resolve(tensorwiseBreakdownToArray(Env(), breakdown));
            return;
        }
        // the same shape as tensorwiseBreakdownToArray's (TensorwiseExt.cpp describeBufferType)
        Napi::Env env = Env();
        Napi::Array array = Napi::Array::New(env);
        uint32_t index = 0;
        for (const DescribedMemory& d : described) {
            if (d.data.model == 0 && d.data.context == 0 && d.data.compute == 0) continue;
            Napi::Object item = Napi::Object::New(env);
            item.Set("name", Napi::String::New(env, d.name));
            item.Set("isHost", Napi::Boolean::New(env, d.isHost));
            item.Set("device", d.device.empty() ? env.Null() : Napi::String::New(env, d.device));
            item.Set("deviceType", d.device.empty() ? env.Null() : Napi::String::New(env, d.deviceType));
            item.Set("model", Napi::Number::New(env, (double) d.data.model));
            item.Set("context", Napi::Number::New(env, (double) d.data.context));
            item.Set("compute", Napi::Number::New(env, (double) d.data.compute));
            array.Set(index++, item);
        }
        deferred.Resolve(array);
    }

    void OnError(const Napi::Error& error) override { deferred.Reject(error.Value()); }

private:
    Napi::Promise::Deferred deferred;
    SimulateRequest req;
    std::vector<BufferMemory> result;
    std::vector<DescribedMemory> described;  // the forked simulation's result
    bool forked = false;
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
