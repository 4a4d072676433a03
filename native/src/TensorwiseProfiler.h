#pragma once
// tensorwise operator profiler: times weight matrix multiplications and transfers on this machine's real ggml backends,
// and drives llama.cpp's own automatic fitting (common_fit_params). Both run in worker threads (Napi::AsyncWorker).

#include <atomic>

#include "napi.h"

// Bumped whenever a running profile or fit should stop at the next measurement (tensorwiseCancelProfiles()).
extern std::atomic<unsigned> tensorwiseProfileCancelGeneration;

void tensorwiseRegisterProfilerExports(Napi::Env env, Napi::Object exports);

// Registers tensorwiseFitParams (TensorwiseFit.cpp).
void tensorwiseRegisterFitExports(Napi::Env env, Napi::Object exports);
