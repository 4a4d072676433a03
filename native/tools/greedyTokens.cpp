// greedy-tokens: stock llama.cpp's greedy continuation of a prompt given as token ids, on the placement that llama.cpp
// command-line flags describe. The flags are read by llama.cpp's own parser (common_params_parse, as llama-completion
// reads them: -m, -ngl, -ot, -c, -b, -ub, -t, -fa, -ctk/-ctv, --no-op-offload, --load-mode, -n, …) and turned into the
// library's parameters by common_model_params_to_llama / common_context_params_to_llama; none of common's automatic
// fitting or warm-up runs, so the placement is exactly what the flags say. Decoding follows tools/completion: an encoder
// model encodes the prompt and decodes from its decoder start token; the prompt goes in n_batch chunks with the last
// token's logits kept, then one token per decode, each picked by llama_sampler_init_greedy, stopping at an
// end-of-generation token. Built and run by electron/engine/testing/archCorpus against the libraries the app loads.
//
// What llama.cpp allocated per buffer type is printed too (llama_get_memory_breakdown, src/llama-ext.h: weights, KV
// cache and compute buffers), so a caller can check that the same flags put the same bytes in the same places.
//
// usage: greedy-tokens --prompt-ids 1,2,3 -n N [llama.cpp flags…]
// prints one JSON line {"prompt":[…],"tokens":[…],"stop":"eog"|"max-tokens","memory":[{"bufferType":…,"model":…,
// "context":…,"compute":…},…]} (exit 0) or {"error":"…"} (exit 1).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "arg.h"
#include "common.h"
#include "log.h"
#include "llama.h"
#include "../src/llama-ext.h"

namespace {

std::string jsonString(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') { out += '\\'; out += c; }
        else if (static_cast<unsigned char>(c) < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
        else out += c;
    }
    return out + "\"";
}

int fail(const std::string& message) {
    std::printf("{\"error\":%s}\n", jsonString(message).c_str());
    std::fflush(stdout);
    return 1;
}

std::string jsonMemory(const llama_memory_breakdown& breakdown) {
    std::string out = "[";
    for (const auto& [buft, data] : breakdown) {
        if (data.model == 0 && data.context == 0 && data.compute == 0) continue;
        out += (out.size() > 1 ? "," : "");
        out += "{\"bufferType\":" + jsonString(ggml_backend_buft_name(buft)) + ",\"model\":" + std::to_string(data.model) +
            ",\"context\":" + std::to_string(data.context) + ",\"compute\":" + std::to_string(data.compute) + "}";
    }
    return out + "]";
}

std::string jsonTokens(const std::vector<llama_token>& tokens) {
    std::string out = "[";
    for (size_t i = 0; i < tokens.size(); i++) out += (i > 0 ? "," : "") + std::to_string(tokens[i]);
    return out + "]";
}

bool parseIds(const std::string& text, std::vector<llama_token>& ids) {
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
        char* end = nullptr;
        const long value = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || value < 0) return false;
        ids.push_back(static_cast<llama_token>(value));
    }
    return !ids.empty();
}

void quietLog(ggml_log_level level, const char* text, void*) {
    if (level >= GGML_LOG_LEVEL_WARN && level != GGML_LOG_LEVEL_CONT) std::fputs(text, stderr);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<llama_token> prompt;
    std::vector<char*> rest = {argv[0]};
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--prompt-ids") == 0 && i + 1 < argc) {
            if (!parseIds(argv[++i], prompt)) return fail("--prompt-ids takes comma-separated non-negative token ids");
        } else {
            rest.push_back(argv[i]);
        }
    }
    if (prompt.empty()) return fail("--prompt-ids is required");

    llama_log_set(quietLog, nullptr);
    common_params params;
    if (!common_params_parse(static_cast<int>(rest.size()), rest.data(), params, LLAMA_EXAMPLE_COMPLETION))
        return fail("llama.cpp rejected the flags (see stderr)");
    common_log_set_verbosity_thold(-1);
    llama_backend_init();

    llama_model_params modelParams = common_model_params_to_llama(params);
    llama_model* model = llama_model_load_from_file(params.model.path.c_str(), modelParams);
    if (model == nullptr) return fail("llama.cpp could not load the model " + params.model.path);
    const llama_context_params contextParams = common_context_params_to_llama(params);
    llama_context* ctx = llama_init_from_model(model, contextParams);
    if (ctx == nullptr) { llama_model_free(model); return fail("llama.cpp could not create the context"); }
    const llama_vocab* vocab = llama_model_get_vocab(model);
    const int32_t nVocab = llama_vocab_n_tokens(vocab);
    for (const llama_token token : prompt)
        if (token >= nVocab) { llama_free(ctx); llama_model_free(model); return fail("prompt token id " + std::to_string(token) + " is outside the vocabulary"); }

    // source: tools/completion/completion.cpp — encoder models encode the prompt, then decode from the start token
    std::vector<llama_token> input = prompt;
    if (llama_model_has_encoder(model)) {
        if (llama_encode(ctx, llama_batch_get_one(input.data(), static_cast<int32_t>(input.size()))) != 0) {
            llama_free(ctx); llama_model_free(model); return fail("llama_encode failed");
        }
        llama_token start = llama_model_decoder_start_token(model);
        if (start == LLAMA_TOKEN_NULL) start = llama_vocab_bos(vocab);
        input = {start};
    }

    const int32_t nBatch = static_cast<int32_t>(llama_n_batch(ctx));
    for (size_t at = 0; at < input.size(); at += static_cast<size_t>(nBatch)) {
        const int32_t count = static_cast<int32_t>(std::min(input.size() - at, static_cast<size_t>(nBatch)));
        const int status = llama_decode(ctx, llama_batch_get_one(input.data() + at, count));
        if (status != 0) { llama_free(ctx); llama_model_free(model); return fail("llama_decode of the prompt failed (" + std::to_string(status) + ")"); }
    }

    llama_sampler* sampler = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(sampler, llama_sampler_init_greedy());
    std::vector<llama_token> tokens;
    const char* stop = "max-tokens";
    const int32_t maxTokens = params.n_predict < 0 ? 16 : params.n_predict;
    while (static_cast<int32_t>(tokens.size()) < maxTokens) {
        llama_token token = llama_sampler_sample(sampler, ctx, -1);
        if (llama_vocab_is_eog(vocab, token)) { stop = "eog"; break; }
        tokens.push_back(token);
        if (static_cast<int32_t>(tokens.size()) == maxTokens) break;
        const int status = llama_decode(ctx, llama_batch_get_one(&token, 1));
        if (status != 0) {
            llama_sampler_free(sampler); llama_free(ctx); llama_model_free(model);
            return fail("llama_decode of generated token " + std::to_string(tokens.size()) + " failed (" + std::to_string(status) + ")");
        }
    }
    std::printf("{\"prompt\":%s,\"tokens\":%s,\"stop\":\"%s\",\"memory\":%s}\n", jsonTokens(prompt).c_str(), jsonTokens(tokens).c_str(), stop,
        jsonMemory(llama_get_memory_breakdown(ctx)).c_str());
    std::fflush(stdout);
    llama_sampler_free(sampler);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
