// Linked into stock llama.cpp programs that expect their backends linked in (tests/test-llama-archs.cpp): node-llama-cpp's
// prebuilt ggml loads the CPU and GPU backends with dlopen (GGML_BACKEND_DL), so nothing is registered until someone
// calls ggml_backend_load_all(). This constructor does, before main(), from the executable's own folder (where the
// build puts links to every backend library). source: ggml/src/ggml-backend-reg.cpp ggml_backend_load_all.
#include "ggml-backend.h"

namespace {
struct LoadAllBackends {
    LoadAllBackends() { ggml_backend_load_all(); }
} loadAllBackends;
}  // namespace
