// moe-routing: how many distinct experts each micro-batch of a prompt really routes to, per MoE layer.
// Reads the router's choice (the "ffn_moe_topk-<layer>" tensor, [n_expert_used, n_tokens] I32, named in
// llm_graph_context::build_moe_ffn) through llama.cpp's graph eval callback (llama_context_params.cb_eval) and prints
// one JSON line per micro-batch and layer: {"ubatch":U,"layer":L,"tokens":T,"distinct":D,"experts":N}.
// Built and run by bench/drivers/moe-routing.mjs against the same prebuilt libraries the app loads.
//
// usage: moe-routing <model.gguf> <ubatch> <prompt-file> <backend-dir> [threads]
// (backend-dir: the folder of the dlopen'ed ggml backends, libggml-cpu-*.so)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "ggml.h"
#include "llama.h"

namespace {

struct State {
    int ubatch = 0;
    int nExpert = 0;
    std::vector<uint8_t> bytes;
};

bool onEval(ggml_tensor* t, bool ask, void* user) {
    const char* prefix = "ffn_moe_topk-";
    if (std::strncmp(t->name, prefix, std::strlen(prefix)) != 0) return ask ? false : true;
    if (ask) return true;
    auto* state = (State*) user;
    const int layer = std::atoi(t->name + std::strlen(prefix));
    state->bytes.resize(ggml_nbytes(t));
    ggml_backend_tensor_get(t, state->bytes.data(), 0, state->bytes.size());
    std::set<int32_t> distinct;
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
        for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
            int32_t id;
            std::memcpy(&id, state->bytes.data() + i1 * t->nb[1] + i0 * t->nb[0], sizeof id);
            distinct.insert(id);
        }
    std::printf("{\"ubatch\":%d,\"layer\":%d,\"tokens\":%lld,\"used\":%lld,\"distinct\":%zu,\"experts\":%d}\n",
        state->ubatch, layer, (long long) t->ne[1], (long long) t->ne[0], distinct.size(), state->nExpert);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s <model.gguf> <ubatch> <prompt-file> <backend-dir> [threads]\n", argv[0]);
        return 2;
    }
    const int ubatch = std::atoi(argv[2]);
    const int threads = argc > 5 ? std::atoi(argv[5]) : 1;
    std::ifstream in(argv[3]);
    std::stringstream text;
    text << in.rdbuf();
    const std::string prompt = text.str();

    llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
    ggml_backend_load_all_from_path(argv[4]);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model* model = llama_model_load_from_file(argv[1], mp);
    if (model == nullptr) { std::fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    const llama_vocab* vocab = llama_model_get_vocab(model);
    std::vector<llama_token> tokens(prompt.size() + 8);
    const int n = llama_tokenize(vocab, prompt.c_str(), (int) prompt.size(), tokens.data(), (int) tokens.size(), true, false);
    if (n <= 0) { std::fprintf(stderr, "cannot tokenize the prompt\n"); return 1; }
    tokens.resize(n);

    State state;
    state.ubatch = ubatch;
    char value[32] = {0};
    // the expert count is metadata of the model's architecture ("<arch>.expert_count")
    char arch[64] = {0};
    llama_model_meta_val_str(model, "general.architecture", arch, sizeof arch);
    if (llama_model_meta_val_str(model, (std::string(arch) + ".expert_count").c_str(), value, sizeof value) > 0) state.nExpert = std::atoi(value);

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t) n + 16;
    cp.n_batch = (uint32_t) n;
    cp.n_ubatch = (uint32_t) ubatch;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    cp.cb_eval = onEval;
    cp.cb_eval_user_data = &state;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (ctx == nullptr) { std::fprintf(stderr, "cannot create a context\n"); return 1; }
    llama_batch batch = llama_batch_get_one(tokens.data(), n);
    const int rc = llama_decode(ctx, batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    if (rc != 0) { std::fprintf(stderr, "llama_decode failed: %d\n", rc); return 1; }
    return 0;
}
