#pragma once
// tensorwise: remote devices through llama.cpp's RPC backend (ggml/src/ggml-rpc, served by tools/rpc/rpc-server).

#include "napi.h"

void tensorwiseRegisterRpcExports(Napi::Env env, Napi::Object exports);
