#include "TensorwiseRpc.h"

#include <mutex>
#include <string>

#include "ggml-backend.h"

namespace {

typedef ggml_backend_reg_t (*rpc_add_server_t)(const char* endpoint);

std::mutex rpcMutex;

// The RPC backend's registry: already loaded by node-llama-cpp (ggml_backend_load_all_from_path over the addon's
// folder) when libggml-rpc.so lies beside the addon, otherwise loaded from `libraryPath`.
ggml_backend_reg_t findRpcReg(const std::string& libraryPath) {
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("RPC");
    if (reg == nullptr && !libraryPath.empty()) {
        reg = ggml_backend_load(libraryPath.c_str());
    }
    return reg;
}

// tensorwiseRpcAvailable(libraryPath?): whether the RPC backend is (or can be) loaded in this process.
Napi::Value rpcAvailable(const Napi::CallbackInfo& info) {
    std::string libraryPath = info.Length() > 0 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
    std::lock_guard<std::mutex> lock(rpcMutex);
    return Napi::Boolean::New(info.Env(), findRpcReg(libraryPath) != nullptr);
}

// tensorwiseAddRpcServer(endpoint, libraryPath?): connects to an rpc-server and registers its devices, as llama.cpp's
// common/arg.cpp add_rpc_devices does for `--rpc`. Returns the names of the devices it added ("RPC0", …); adding the
// same endpoint twice returns the same devices without registering them again.
// The caller must check the endpoint answers first: ggml-rpc aborts the process when it cannot connect.
Napi::Value addRpcServer(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) {
        Napi::TypeError::New(env, "tensorwiseAddRpcServer(endpoint) needs a \"host:port\" string").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    std::string endpoint = info[0].As<Napi::String>().Utf8Value();
    std::string libraryPath = info.Length() > 1 && info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "";

    std::lock_guard<std::mutex> lock(rpcMutex);
    ggml_backend_reg_t rpcReg = findRpcReg(libraryPath);
    if (rpcReg == nullptr) {
        Napi::Error::New(env, "the RPC backend (libggml-rpc.so) is not installed: run `npm run native` to build it")
            .ThrowAsJavaScriptException();
        return env.Undefined();
    }
    auto addServer = (rpc_add_server_t) ggml_backend_reg_get_proc_address(rpcReg, "ggml_backend_rpc_add_server");
    if (addServer == nullptr) {
        Napi::Error::New(env, "this RPC backend has no ggml_backend_rpc_add_server").ThrowAsJavaScriptException();
        return env.Undefined();
    }

    ggml_backend_reg_t serverReg = addServer(endpoint.c_str());
    if (serverReg == nullptr) {
        Napi::Error::New(env, "the rpc-server at " + endpoint + " offers no devices").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    // ggml_backend_rpc_add_server returns the same registry for an endpoint it already knows: register it once
    bool registered = false;
    for (size_t i = 0; i < ggml_backend_reg_count(); ++i) {
        registered = registered || ggml_backend_reg_get(i) == serverReg;
    }
    if (!registered) {
        ggml_backend_register(serverReg);
    }

    Napi::Array names = Napi::Array::New(env, ggml_backend_reg_dev_count(serverReg));
    for (size_t i = 0; i < ggml_backend_reg_dev_count(serverReg); ++i) {
        names.Set((uint32_t) i, Napi::String::New(env, ggml_backend_dev_name(ggml_backend_reg_dev_get(serverReg, i))));
    }
    return names;
}

}  // namespace

void tensorwiseRegisterRpcExports(Napi::Env env, Napi::Object exports) {
    exports.DefineProperties({
        Napi::PropertyDescriptor::Function("tensorwiseRpcAvailable", rpcAvailable),
        Napi::PropertyDescriptor::Function("tensorwiseAddRpcServer", addRpcServer),
    });
}
