#include "TensorwiseProfiler.h"

void tensorwiseRegisterProfilerExports(Napi::Env env, Napi::Object exports) {
    (void) env;
    (void) exports;
}
