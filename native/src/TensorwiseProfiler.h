#pragma once
// tensorwise operator profiler: times weight matrix multiplications and transfers on this machine's real ggml backends.

#include "napi.h"

void tensorwiseRegisterProfilerExports(Napi::Env env, Napi::Object exports);
