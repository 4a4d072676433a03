// tensorwise native generation loop: prompt decode + token-by-token decode and sampling on one generation thread per
// context (kept for the context's life), with a persistent ggml CPU threadpool attached to the context, tokens streamed
// to JS in batches.
//
// Why: node-llama-cpp runs every llama_decode and every sampling step as a separate N-API AsyncWorker on libuv's
// shared pool, with a JS round trip between them, and never attaches a ggml threadpool (so every graph compute starts
// and joins its worker threads). Stock llama-bench (tools/llama-bench/llama-bench.cpp test_gen) does neither; this loop
// does the same work as it does per token, plus sampling.
#include "TensorwiseGenerate.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "AddonContext.h"
#include "AddonModel.h"
#include "TensorwiseSpeculative.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "llama.h"

namespace {

struct GenerationState {
    // inputs
    llama_context* ctx = nullptr;
    const llama_vocab* vocab = nullptr;
    llama_seq_id seq = 0;
    int32_t startPosition = 0;
    std::vector<llama_token> prompt;
    int32_t maxTokens = 0;
    bool stopAtEog = true;
    float temperature = 0.0f;
    uint32_t seed = 0;
    int32_t topK = 40;
    float topP = 0.95f;
    float minP = 0.0f;
    float repeatPenalty = 1.0f;          // 1 = off
    int32_t repeatPenaltyLastTokens = 64;
    // speculative decoding (TensorwiseSpeculative.h); type empty: none
    TensorwiseSpecRequest spec;
    TensorwiseSpecStats specStats;
    std::string specNote;  // why a requested speculation did not run (empty: it ran)

    // shared with the JS thread
    std::atomic<bool> abortRequested{false};
    // > 0: adaptive prompt chunks (see the prompt loop in run()); 0: full micro-batches
    double promptChunkTargetMs = 0;
    std::mutex mutex;
    std::vector<llama_token> pendingTokens;
    std::vector<double> pendingTimes;
    bool callPending = false;
    bool finished = false;
    bool finishDelivered = false;
    std::string error;
    std::string stopReason;  // "maxTokens" | "eog" | "abort" | "error"
    int32_t decodedTokens = 0;  // tokens now in the KV cache for the sequence, from position 0
    int32_t promptDecoded = 0;  // prompt tokens decoded so far by this call
    int32_t promptDelivered = -1;
    double calledAtMs = -1;  // when notify last queued a JS call, ms since `started`; -1: never

    Napi::ThreadSafeFunction tsfn;
    Napi::ObjectReference contextRef;
    Napi::ObjectReference draftContextRef;
    std::chrono::steady_clock::time_point started;
};

double msSince(const std::chrono::steady_clock::time_point& start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Runs on the JS thread: hands the tokens gathered so far to the callback, and the end once.
void deliver(Napi::Env env, Napi::Function callback, const std::shared_ptr<GenerationState>& state) {
    std::vector<llama_token> tokens;
    std::vector<double> times;
    bool finished;
    int32_t promptDecoded;
    bool progressed;
    {
        std::lock_guard<std::mutex> lock(state->mutex);
        tokens.swap(state->pendingTokens);
        times.swap(state->pendingTimes);
        state->callPending = false;
        finished = state->finished && !state->finishDelivered;
        if (finished) state->finishDelivered = true;
        promptDecoded = state->promptDecoded;
        progressed = promptDecoded != state->promptDelivered;
        state->promptDelivered = promptDecoded;
    }
    if (tokens.empty() && !finished && !progressed) return;
    Napi::Uint32Array tokenArray = Napi::Uint32Array::New(env, tokens.size());
    Napi::Float64Array timeArray = Napi::Float64Array::New(env, times.size());
    for (size_t i = 0; i < tokens.size(); i++) {
        tokenArray[i] = (uint32_t) tokens[i];
        timeArray[i] = times[i];
    }
    Napi::Value end = env.Null();
    if (finished) {
        Napi::Object info = Napi::Object::New(env);
        info.Set("reason", Napi::String::New(env, state->stopReason));
        info.Set("decodedTokens", Napi::Number::New(env, state->decodedTokens));
        info.Set("error", state->error.empty() ? env.Null() : Napi::Value(Napi::String::New(env, state->error)));
        if (!state->spec.type.empty()) {
            Napi::Object spec = Napi::Object::New(env);
            spec.Set("type", Napi::String::New(env, state->spec.type));
            spec.Set("steps", Napi::Number::New(env, state->specStats.steps));
            spec.Set("fullyAccepted", Napi::Number::New(env, state->specStats.fullyAccepted));
            spec.Set("drafted", Napi::Number::New(env, state->specStats.drafted));
            spec.Set("accepted", Napi::Number::New(env, state->specStats.accepted));
            spec.Set("note", state->specNote.empty() ? env.Null() : Napi::Value(Napi::String::New(env, state->specNote)));
            info.Set("speculative", spec);
        }
        end = info;
        state->contextRef.Reset();
        state->draftContextRef.Reset();
    }
    callback.Call({tokenArray, timeArray, end, Napi::Number::New(env, promptDecoded)});
}

// At most one JS call per this many ms while tokens stream (the end and the first token always go at once), so a fast
// decode does not wake the JS thread every few ms while ggml's threads may hold every core. Tokens keep their own
// sampling times, so timing is unaffected; the UI still gets a batch per frame.
constexpr double MIN_MS_BETWEEN_CALLS = 16;

void notify(const std::shared_ptr<GenerationState>& state, bool force) {
    {
        std::lock_guard<std::mutex> lock(state->mutex);
        if (state->callPending && !force) return;
        const double now = msSince(state->started);
        if (!force && state->calledAtMs >= 0 && now - state->calledAtMs < MIN_MS_BETWEEN_CALLS) return;
        state->callPending = true;
        state->calledAtMs = now;
    }
    state->tsfn.NonBlockingCall([state](Napi::Env env, Napi::Function callback) { deliver(env, callback, state); });
}

using ThreadpoolNew = decltype(ggml_threadpool_new)*;
using ThreadpoolFree = decltype(ggml_threadpool_free)*;

// One persistent threadpool per context, attached on its first native generation and kept (node-llama-cpp's own
// decodes then use it too) until the context is freed: the CPU backend keeps a pointer to the last threadpool it ran
// with and pauses it at the next graph compute (ggml_backend_cpu_set_threadpool), so it must outlive the context.
std::mutex threadpoolsMutex;
std::map<llama_context*, ggml_threadpool*> threadpools;
// a draft context runs on its target's threadpool (they take turns on one thread): draft → target
std::map<llama_context*, llama_context*> borrowedThreadpools;

ThreadpoolFree cpuThreadpoolFree() {
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (cpu == nullptr) return nullptr;
    return (ThreadpoolFree) ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(cpu), "ggml_threadpool_free");
}

// source: tools/llama-bench/llama-bench.cpp main (a threadpool created for the context and attached to it)
void attachThreadpool(llama_context* ctx) {
    std::lock_guard<std::mutex> lock(threadpoolsMutex);
    if (threadpools.count(ctx) != 0) return;
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (cpu == nullptr) return;
    auto threadpoolNew = (ThreadpoolNew) ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(cpu), "ggml_threadpool_new");
    if (threadpoolNew == nullptr || cpuThreadpoolFree() == nullptr) return;
    ggml_threadpool_params params = ggml_threadpool_params_default(llama_n_threads(ctx));
    ggml_threadpool* threadpool = threadpoolNew(&params);
    if (threadpool == nullptr) return;
    llama_attach_threadpool(ctx, threadpool, nullptr);
    threadpools[ctx] = threadpool;
}

// The draft context decodes between the target's steps on the same thread: it runs on the target's pool, so that
// no second pool's workers spin beside the first's.
void shareThreadpool(llama_context* draft, llama_context* target) {
    std::lock_guard<std::mutex> lock(threadpoolsMutex);
    auto pool = threadpools.find(target);
    if (pool == threadpools.end() || threadpools.count(draft) != 0 || borrowedThreadpools.count(draft) != 0) return;
    llama_attach_threadpool(draft, pool->second, nullptr);
    borrowedThreadpools[draft] = target;
}

bool abortCallback(void* data) {
    return static_cast<GenerationState*>(data)->abortRequested.load(std::memory_order_relaxed);
}

// Greedy: the first token with the highest logit (what llama_sampler_init_greedy picks).
llama_token argmax(const float* logits, int32_t nVocab) {
    int32_t best = 0;
    for (int32_t i = 1; i < nVocab; i++) {
        if (logits[i] > logits[best]) best = i;
    }
    return best;
}

// Token selection with the same llama.cpp samplers, in the same order, as node-llama-cpp's AddonSampler
// (llama/addon/AddonSampler.cpp, rebuildChainIfNeeded): repeat penalty, then greedy at temperature 0, else top-k,
// top-p, min-p, temperature and the seeded distribution. The repeat penalty sees the last `repeatPenaltyLastTokens`
// generated tokens except the newline token (node-llama-cpp's LlamaChat getPenaltyTokens with penalizeNewLine off),
// so it is applied and fed by hand instead of through llama_sampler_sample, which would feed it every token.
class Sampling {
public:
    Sampling(const GenerationState& s, int32_t nVocab) : nVocab(nVocab), newline(llama_vocab_nl(s.vocab)) {
        if (s.repeatPenalty != 1.0f && s.repeatPenaltyLastTokens > 0)
            penalties = llama_sampler_init_penalties(nVocab, s.repeatPenaltyLastTokens, s.repeatPenalty, 0.0f, 0.0f);
        if (s.temperature <= 0.0f && penalties == nullptr) return;  // plain argmax
        chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
        if (s.temperature <= 0.0f) {
            llama_sampler_chain_add(chain, llama_sampler_init_greedy());
            return;
        }
        if (s.topK > 0) llama_sampler_chain_add(chain, llama_sampler_init_top_k(std::min(s.topK, nVocab)));
        if (s.topP >= 0.0f && s.topP < 1.0f) llama_sampler_chain_add(chain, llama_sampler_init_top_p(s.topP, 1));
        if (s.minP > 0.0f) llama_sampler_chain_add(chain, llama_sampler_init_min_p(s.minP, 1));
        llama_sampler_chain_add(chain, llama_sampler_init_temp(s.temperature));
        llama_sampler_chain_add(chain, llama_sampler_init_dist(s.seed));
    }
    ~Sampling() {
        if (chain != nullptr) llama_sampler_free(chain);
        if (penalties != nullptr) llama_sampler_free(penalties);
    }
    Sampling(const Sampling&) = delete;
    Sampling& operator=(const Sampling&) = delete;

    llama_token sample(const float* logits) {
        if (chain == nullptr) return argmax(logits, nVocab);
        candidates.resize(nVocab);
        for (int32_t i = 0; i < nVocab; i++) candidates[i] = {i, logits[i], 0.0f};
        llama_token_data_array array{candidates.data(), candidates.size(), -1, false};
        if (penalties != nullptr) llama_sampler_apply(penalties, &array);
        llama_sampler_apply(chain, &array);
        const llama_token token = array.data[array.selected].id;
        if (penalties != nullptr && token != newline) llama_sampler_accept(penalties, token);
        return token;
    }

private:
    int32_t nVocab;
    llama_token newline;
    llama_sampler* penalties = nullptr;
    llama_sampler* chain = nullptr;
    std::vector<llama_token_data> candidates;
};

// Decodes `count` tokens starting at `first` at positions pos.., logits for the last one only (or for every one:
// a draft's verification); false when aborted/failed.
bool decodeChunk(GenerationState& s, llama_batch& batch, const llama_token* first, int32_t count, int32_t pos, int32_t& rc, bool allLogits = false) {
    batch.n_tokens = count;
    for (int32_t i = 0; i < count; i++) {
        batch.token[i] = first[i];
        batch.pos[i] = pos + i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = s.seq;
        batch.logits[i] = allLogits || i == count - 1;
    }
    rc = llama_decode(s.ctx, batch);
    return rc == 0;
}

// Delivers one generated token (the first at once); true when the loop must stop after it (end of generation).
bool emit(const std::shared_ptr<GenerationState>& state, llama_token token, int32_t generated) {
    GenerationState& s = *state;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.pendingTokens.push_back(token);
        s.pendingTimes.push_back(msSince(s.started));
    }
    notify(state, generated == 1);
    return s.stopAtEog && llama_vocab_is_eog(s.vocab, token);
}

void run(const std::shared_ptr<GenerationState>& state) {
    GenerationState& s = *state;
    llama_memory_t memory = llama_get_memory(s.ctx);
    const int32_t nBatch = (int32_t) llama_n_batch(s.ctx);
    const int32_t nVocab = llama_vocab_n_tokens(s.vocab);

    std::string reason = "maxTokens";
    std::string error;
    attachThreadpool(s.ctx);
    llama_set_abort_callback(s.ctx, abortCallback, &s);

    Sampling sampling(s, nVocab);

    // the tokens of this sequence this loop has decoded: those before startPosition stay, the rest are replaced
    TensorwiseSequenceHistory& history = tensorwiseSequenceHistory(s.ctx, s.seq);
    if (s.startPosition < history.from || (int32_t) (history.from + history.tokens.size()) < s.startPosition) {
        history.from = s.startPosition;  // the cache holds tokens this loop did not decode
        history.tokens.clear();
    } else {
        history.tokens.resize(s.startPosition - history.from);
    }

    TensorwiseSpecSession* spec = nullptr;
    if (!s.spec.type.empty()) {
        try {
            spec = &tensorwiseSpecSession(s.ctx, s.spec);
        } catch (const std::exception& e) {
            error = std::string("speculative decoding could not start: ") + e.what();
        }
        if (spec != nullptr && s.spec.draftCtx != nullptr) {
            shareThreadpool(s.spec.draftCtx, s.ctx);
            if (!spec->sync(s.seq, s.startPosition, history.from == 0 ? history.tokens : std::vector<llama_token>())) {
                s.specNote = "the draft's cache does not hold this sequence's earlier tokens (this loop did not decode them): generated without speculation";
                spec = nullptr;
            }
        }
    }

    llama_batch batch = llama_batch_init(std::max<int32_t>(nBatch, 1), 0, 1);
    int32_t pos = s.startPosition;
    int32_t rc = 0;
    if (!error.empty()) reason = "error";
    llama_memory_seq_rm(memory, s.seq, s.startPosition, -1);

    // With a chunk target, the prompt goes in chunks from 32 tokens, doubling towards the micro-batch while one takes
    // under half the target and halving (never below 32) above it: an abort waits for the chunk in flight, since GPU
    // backends do not call llama.cpp's abort callback inside a graph. 32 = the smallest batch for which a GPU backend
    // runs host-resident weights itself (GGML_OP_OFFLOAD_MIN_BATCH's default): smaller chunks would move that work to
    // the CPU and multiply the per-decode cost.
    // with speculation the prompt's last token goes with the first draft, as llama.cpp's speculative loop does
    // (examples/speculative-simple/speculative-simple.cpp): the same decodes as stock llama.cpp, so the same tokens
    const bool lastPromptTokenWithDraft = spec != nullptr && !s.prompt.empty();
    const size_t promptEnd = s.prompt.size() - (lastPromptTokenWithDraft ? 1 : 0);
    const bool adaptive = s.promptChunkTargetMs > 0;
    const int32_t minChunk = std::min<int32_t>(32, nBatch);
    int32_t chunk = adaptive ? minChunk : nBatch;
    for (size_t done = 0; done < promptEnd && reason == "maxTokens";) {
        int32_t count = (int32_t) std::min<size_t>(chunk, promptEnd - done);
        const auto chunkStarted = std::chrono::steady_clock::now();
        const bool decoded = decodeChunk(s, batch, s.prompt.data() + done, count, pos, rc);
        if (adaptive) {
            const double ms = msSince(chunkStarted);
            if (ms < s.promptChunkTargetMs / 2) chunk = std::min<int32_t>(nBatch, chunk * 2);
            else if (ms > s.promptChunkTargetMs) chunk = std::max<int32_t>(minChunk, chunk / 2);
        }
        if (!decoded) {
            reason = rc == 2 || s.abortRequested ? "abort" : "error";
            if (reason == "error") error = "llama_decode failed on the prompt (code " + std::to_string(rc) + ")";
            break;
        }
        if (spec != nullptr && !spec->process(batch)) {
            s.specNote = "the draft could not decode the prompt: generated without speculation";
            spec = nullptr;
        }
        history.tokens.insert(history.tokens.end(), s.prompt.begin() + done, s.prompt.begin() + done + count);
        pos += count;
        done += count;
        {
            std::lock_guard<std::mutex> lock(s.mutex);
            s.promptDecoded = (int32_t) done;
        }
        if (done < s.prompt.size()) notify(state, false);
    }

    if (spec != nullptr && reason == "maxTokens") spec->start(s.seq, history.tokens);
    // the first token comes from the prompt's logits (with speculation: from the first step's, which decodes the
    // prompt's last token); then each step decodes the last token (not yet in the cache) with a draft behind it when
    // one was made: source: examples/speculative-simple/speculative-simple.cpp
    int32_t generated = 0;
    llama_token last = -1;
    bool promptLastPending = false;
    if (lastPromptTokenWithDraft) {
        last = s.prompt.back();
        promptLastPending = true;
    } else if (reason == "maxTokens" && s.maxTokens > 0) {
        last = sampling.sample(llama_get_logits_ith(s.ctx, -1));
        generated++;
        if (emit(state, last, generated)) reason = "eog";
    }
    std::vector<llama_token> step;
    while (reason == "maxTokens" && generated < s.maxTokens) {
        if (s.abortRequested) { reason = "abort"; break; }
        // at most what the reply and the context still hold after the step's own token
        const int32_t room = std::min<int32_t>(s.maxTokens - generated - 1, (int32_t) llama_n_ctx(s.ctx) - pos - 2);
        std::vector<llama_token> draft;
        if (spec != nullptr && room > 0) {
            draft = spec->draft(s.seq, pos, last, history.tokens, std::min(room, s.spec.nMax));
            spec->rewindDraft(s.seq, pos);
        }
        step.assign(1, last);
        step.insert(step.end(), draft.begin(), draft.end());
        if ((int32_t) step.size() > nBatch) step.resize(nBatch);
        if (!decodeChunk(s, batch, step.data(), (int32_t) step.size(), pos, rc, step.size() > 1)) {
            reason = rc == 2 || s.abortRequested ? "abort" : "error";
            if (reason == "error") error = "llama_decode failed while generating (code " + std::to_string(rc) + ")";
            break;
        }
        if (spec != nullptr && !spec->process(batch)) {
            s.specNote = "the draft could not decode a verified step: the rest was generated without speculation";
            spec = nullptr;
        }
        history.tokens.push_back(last);
        pos++;
        if (promptLastPending) {
            promptLastPending = false;
            std::lock_guard<std::mutex> lock(s.mutex);
            s.promptDecoded = (int32_t) s.prompt.size();
        }
        // the target's token after each position: each draft token it agrees with is accepted, and the first
        // disagreement (or the token after a whole accepted draft) is the target's own, the next step's `last`
        int32_t accepted = 0;
        for (int32_t i = 0; i < (int32_t) step.size(); i++) {
            const llama_token token = sampling.sample(llama_get_logits_ith(s.ctx, step.size() > 1 ? i : -1));
            generated++;
            const bool eog = emit(state, token, generated);
            const bool agrees = i + 1 < (int32_t) step.size() && token == step[i + 1];
            if (agrees) {  // decoded in this step at `pos`: in the cache already
                accepted++;
                history.tokens.push_back(token);
                pos++;
            }
            if (eog) reason = "eog";
            if (eog || !agrees || generated >= s.maxTokens) {
                last = agrees ? -1 : token;
                break;
            }
        }
        if (step.size() > 1) {
            if (accepted == (int32_t) draft.size()) s.specStats.fullyAccepted++;
            s.specStats.steps++;
            s.specStats.drafted += (int32_t) draft.size();
            s.specStats.accepted += accepted;
        }
        // the cache keeps the last token and the accepted draft; the rejected rest goes, from the draft's cache too
        if (spec != nullptr) spec->accept(s.seq, (uint16_t) accepted, pos);
        else if (step.size() > 1) llama_memory_seq_rm(memory, s.seq, pos, -1);
        if (last < 0) break;
    }
    if (reason != "maxTokens" && reason != "eog" && pos > s.startPosition) {
        // an aborted decode may leave a partial batch in the cache: keep only what was fully decoded
        llama_memory_seq_rm(memory, s.seq, pos, -1);
    }

    llama_batch_free(batch);
    llama_set_abort_callback(s.ctx, nullptr, nullptr);
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.finished = true;
        s.stopReason = reason;
        s.error = error;
        s.decodedTokens = pos;
    }
    notify(state, true);
    s.tsfn.Release();
}

// One generation thread per context, started by its first native generation and kept until the context is freed, as
// stock llama-bench decodes every repetition on its one main thread; after a generation it stays on its CPU for
// GENERATION_THREAD_SPIN_MS (yielding to anything else runnable there) before it sleeps, as ggml's threadpool workers
// poll before they sleep. Measured on 2 threads, 2 cores, back-to-back 64-token prompts on the ≈100 MiB F16 model
// (bench/results/2026-11-25-parity-small-epyc2c/back-to-back.md): a thread started per request ran them 12–17% slower
// than with 5 ms between requests; a kept thread that slept at once put the ggml worker and itself on one core for
// whole requests (6 of 12 took 129 ms instead of 70); kept and spinning, 70.3 ms back to back, llama-bench 70.2.
struct GenerationThread {
    std::thread thread;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::shared_ptr<GenerationState>> jobs;  // JS serialises generations per context: at most one waits
    std::atomic<int> queued{0};
    std::atomic<bool> stop{false};
};

constexpr int GENERATION_THREAD_SPIN_MS = 20;

std::mutex generationThreadsMutex;
std::map<llama_context*, std::unique_ptr<GenerationThread>> generationThreads;

void generationThreadLoop(GenerationThread* self) {
    for (;;) {
        std::shared_ptr<GenerationState> job;
        // stay on this CPU a little while for a next request, yielding it to anything else runnable there
        const auto spinUntil = std::chrono::steady_clock::now() + std::chrono::milliseconds(GENERATION_THREAD_SPIN_MS);
        while (self->queued.load(std::memory_order_acquire) == 0 && !self->stop.load(std::memory_order_acquire) &&
               std::chrono::steady_clock::now() < spinUntil)
            std::this_thread::yield();
        {
            std::unique_lock<std::mutex> lock(self->mutex);
            self->wake.wait(lock, [self] { return self->stop || !self->jobs.empty(); });
            if (self->jobs.empty()) return;  // stopping, nothing left to run
            job = std::move(self->jobs.front());
            self->jobs.pop_front();
            self->queued.fetch_sub(1, std::memory_order_release);
        }
        run(job);
    }
}

void submitGeneration(const std::shared_ptr<GenerationState>& state) {
    GenerationThread* target;
    {
        std::lock_guard<std::mutex> lock(generationThreadsMutex);
        std::unique_ptr<GenerationThread>& slot = generationThreads[state->ctx];
        if (slot == nullptr) {
            slot = std::make_unique<GenerationThread>();
            slot->thread = std::thread(generationThreadLoop, slot.get());
        }
        target = slot.get();
    }
    {
        std::lock_guard<std::mutex> lock(target->mutex);
        target->jobs.push_back(state);
        target->queued.fetch_add(1, std::memory_order_release);
    }
    target->wake.notify_one();
}

// Lets the context's generation thread finish what it was given, then joins it. Never called from that thread: only
// the JS side disposes contexts, after their last generation ended (PlacedModel.dispose).
void stopGenerationThread(llama_context* ctx) {
    std::unique_ptr<GenerationThread> stopping;
    {
        std::lock_guard<std::mutex> lock(generationThreadsMutex);
        auto found = generationThreads.find(ctx);
        if (found == generationThreads.end()) return;
        stopping = std::move(found->second);
        generationThreads.erase(found);
    }
    {
        std::lock_guard<std::mutex> lock(stopping->mutex);
        stopping->stop.store(true, std::memory_order_release);
    }
    stopping->wake.notify_one();
    stopping->thread.join();
}

// tensorwiseGenerate(context, options, onTokens) → {abort()}
// options: {sequenceId, startPosition, prompt: Uint32Array, maxTokens, stopAtEog, temperature, seed, topK, topP,
//           minP?, repeatPenalty?, repeatPenaltyLastTokens?}
// onTokens(tokens: Uint32Array, msSinceStart: Float64Array, end: null | {reason, decodedTokens, error}, promptDecoded)
Napi::Value generate(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    AddonContext* context = Napi::ObjectWrap<AddonContext>::Unwrap(info[0].As<Napi::Object>());
    if (context == nullptr || context->ctx == nullptr || context->disposed) {
        Napi::Error::New(env, "Context is not loaded").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    Napi::Object options = info[1].As<Napi::Object>();
    auto state = std::make_shared<GenerationState>();
    state->ctx = context->ctx;
    state->vocab = context->model->vocab;
    state->seq = options.Get("sequenceId").As<Napi::Number>().Int32Value();
    state->startPosition = options.Get("startPosition").As<Napi::Number>().Int32Value();
    Napi::Uint32Array prompt = options.Get("prompt").As<Napi::Uint32Array>();
    state->prompt.assign(prompt.Data(), prompt.Data() + prompt.ElementLength());
    state->maxTokens = options.Get("maxTokens").As<Napi::Number>().Int32Value();
    state->stopAtEog = options.Get("stopAtEog").As<Napi::Boolean>().Value();
    state->temperature = options.Get("temperature").As<Napi::Number>().FloatValue();
    state->seed = options.Get("seed").As<Napi::Number>().Uint32Value();
    state->topK = options.Get("topK").As<Napi::Number>().Int32Value();
    state->topP = options.Get("topP").As<Napi::Number>().FloatValue();
    if (options.Has("minP") && options.Get("minP").IsNumber()) state->minP = options.Get("minP").As<Napi::Number>().FloatValue();
    if (options.Has("repeatPenalty") && options.Get("repeatPenalty").IsNumber())
        state->repeatPenalty = options.Get("repeatPenalty").As<Napi::Number>().FloatValue();
    if (options.Has("promptChunkTargetMs") && options.Get("promptChunkTargetMs").IsNumber())
        state->promptChunkTargetMs = options.Get("promptChunkTargetMs").As<Napi::Number>().DoubleValue();
    if (options.Has("repeatPenaltyLastTokens") && options.Get("repeatPenaltyLastTokens").IsNumber())
        state->repeatPenaltyLastTokens = options.Get("repeatPenaltyLastTokens").As<Napi::Number>().Int32Value();
    // speculative: {type, nMax, nMin?, draftContext?} (TensorwiseSpeculative.h); checked in JS, checked again here
    if (options.Has("speculative") && options.Get("speculative").IsObject()) {
        Napi::Object spec = options.Get("speculative").As<Napi::Object>();
        if (!spec.Get("type").IsString() || !spec.Get("nMax").IsNumber()) {
            Napi::TypeError::New(env, "speculative needs a type and nMax").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        state->spec.type = spec.Get("type").As<Napi::String>().Utf8Value();
        state->spec.nMax = spec.Get("nMax").As<Napi::Number>().Int32Value();
        if (spec.Has("nMin") && spec.Get("nMin").IsNumber()) state->spec.nMin = spec.Get("nMin").As<Napi::Number>().Int32Value();
        if (spec.Has("ngramSizeN") && spec.Get("ngramSizeN").IsNumber()) state->spec.ngramSizeN = spec.Get("ngramSizeN").As<Napi::Number>().Int32Value();
        if (spec.Has("ngramSizeM") && spec.Get("ngramSizeM").IsNumber()) state->spec.ngramSizeM = spec.Get("ngramSizeM").As<Napi::Number>().Int32Value();
        if (state->spec.type.size() > 32 || state->spec.nMax < 1 || state->spec.nMax > 64 || state->spec.nMin < 0 || state->spec.nMin > state->spec.nMax ||
            state->spec.ngramSizeN < 0 || state->spec.ngramSizeN > 64 || state->spec.ngramSizeM < 0 || state->spec.ngramSizeM > 64) {
            Napi::RangeError::New(env, "speculative: type at most 32 characters, nMax 1–64, nMin 0–nMax, n-gram sizes 0–64").ThrowAsJavaScriptException();
            return env.Undefined();
        }
        if (spec.Has("draftContext") && spec.Get("draftContext").IsObject()) {
            AddonContext* draft = Napi::ObjectWrap<AddonContext>::Unwrap(spec.Get("draftContext").As<Napi::Object>());
            if (draft == nullptr || draft->ctx == nullptr || draft->disposed || draft->ctx == context->ctx) {
                Napi::Error::New(env, "the draft context is not loaded").ThrowAsJavaScriptException();
                return env.Undefined();
            }
            state->spec.draftCtx = draft->ctx;
            state->draftContextRef = Napi::Persistent(spec.Get("draftContext").As<Napi::Object>());
        }
    }
    if (state->prompt.empty() && state->startPosition == 0) {
        Napi::Error::New(env, "the prompt is empty").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    if (state->startPosition + (int64_t) state->prompt.size() + state->maxTokens > (int64_t) llama_n_ctx(state->ctx)) {
        Napi::Error::New(env, "the prompt and reply do not fit in the context (" + std::to_string(llama_n_ctx(state->ctx)) +
            " tokens): shorten the conversation or load the model with a larger context").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    state->contextRef = Napi::Persistent(info[0].As<Napi::Object>());
    state->tsfn = Napi::ThreadSafeFunction::New(env, info[2].As<Napi::Function>(), "tensorwiseGenerate", 0, 1);
    state->started = std::chrono::steady_clock::now();
    submitGeneration(state);

    Napi::Object handle = Napi::Object::New(env);
    handle.Set("abort", Napi::Function::New(env, [state](const Napi::CallbackInfo&) { state->abortRequested = true; }));
    return handle;
}

}  // namespace

void tensorwiseReleaseContextThreadpool(llama_context* ctx) {
    stopGenerationThread(ctx);
    ggml_threadpool* threadpool = nullptr;
    {
        std::lock_guard<std::mutex> lock(threadpoolsMutex);
        // a draft context that ran on this one's pool (it is the draft being freed, or it must not keep the pool)
        borrowedThreadpools.erase(ctx);
        for (auto it = borrowedThreadpools.begin(); it != borrowedThreadpools.end();) {
            if (it->second == ctx) {
                llama_detach_threadpool(it->first);
                it = borrowedThreadpools.erase(it);
            } else {
                ++it;
            }
        }
        auto found = threadpools.find(ctx);
        if (found == threadpools.end()) return;
        threadpool = found->second;
        threadpools.erase(found);
    }
    if (ThreadpoolFree threadpoolFree = cpuThreadpoolFree()) threadpoolFree(threadpool);
}

void tensorwiseRegisterGenerateExports(Napi::Env env, Napi::Object exports) {
    exports.Set("tensorwiseGenerate", Napi::Function::New(env, generate, "tensorwiseGenerate"));
}
