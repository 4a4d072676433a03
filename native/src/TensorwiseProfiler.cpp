#include "TensorwiseProfiler.h"

#include <algorithm>
#include <tuple>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

std::atomic<unsigned> tensorwiseProfileCancelGeneration{0};

namespace {

using Clock = std::chrono::steady_clock;

double elapsedUs(Clock::time_point since) {
    return std::chrono::duration<double, std::micro>(Clock::now() - since).count();
}

double median(std::vector<double> values) {
    if (values.empty()) return -1;
    std::sort(values.begin(), values.end());
    size_t mid = values.size() / 2;
    return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// One op's time from timings of a graph with one copy of it (`singleUs`) and with `k` independent copies (`manyUs`):
// the slope (T_k - T_1) / (k - 1), so the fixed per-graph cost cancels out. Noise can make the slope meaningless
// (<= 0 or above the single-graph time); then the single graph is the bound. Both lists must be non-empty.
struct SlopeTiming {
    double medianUs;
    double minUs;
};

SlopeTiming slopeTiming(const std::vector<double>& singleUs, const std::vector<double>& manyUs, int k) {
    const double singleMedian = median(singleUs);
    const double singleMin = *std::min_element(singleUs.begin(), singleUs.end());
    const double slopeMedian = (median(manyUs) - singleMedian) / (k - 1);
    const double slopeMin = (*std::min_element(manyUs.begin(), manyUs.end()) - singleMin) / (k - 1);
    SlopeTiming timing;
    timing.medianUs = slopeMedian > 0 && slopeMedian <= singleMedian * 1.5 ? slopeMedian : singleMedian;
    timing.minUs = slopeMin > 0 && slopeMin <= timing.medianUs ? slopeMin : std::min(singleMin, timing.medianUs);
    return timing;
}

struct OpRequest {
    ggml_type type;
    int64_t rows;  // output features (ne1 of the weight)
    int64_t cols;  // input features (ne0 of the weight, the row length)
};

// How much op `i`'s time grows from `from` to `to` tokens, to decide whether timing it at `to` fits the bounds: as the
// op of this device timed at both sizes grew (the same type first, then the nearest size), else linearly. A batch-1
// matmul on a slow device is mostly fixed cost (llvmpipe: 1024x1024 F16 13.5 ms at 1 token, 128 ms at 32), so the
// linear estimate (32x) skipped the prefill sizes of every op but the smallest, and the cost model had to guess them.
// The mirror of MachineProfile.ts batchGrowth, which prices the points skipped anyway.
double batchGrowth(const std::vector<OpRequest>& ops, const std::vector<std::vector<std::pair<int64_t, double>>>& timed,
                   size_t i, int64_t from, int64_t to) {
    const double linear = (double) to / (double) from;
    auto at = [](const std::vector<std::pair<int64_t, double>>& points, int64_t batch) {
        for (const auto& [b, us] : points) if (b == batch) return us;
        return -1.0;
    };
    const double elements = (double) ops[i].rows * (double) ops[i].cols;
    double bestRank = 1e300;
    double growth = linear;
    for (size_t j = 0; j < ops.size(); j++) {
        if (j == i) continue;
        const double usFrom = at(timed[j], from);
        const double usTo = at(timed[j], to);
        if (usFrom <= 0 || usTo <= 0) continue;
        const double rank = (ops[j].type == ops[i].type ? 0 : 1000) + std::fabs(std::log((double) ops[j].rows * (double) ops[j].cols / elements));
        if (rank < bestRank) {
            bestRank = rank;
            growth = std::min(linear, std::max(1.0, usTo / usFrom));
        }
    }
    return growth;
}

// One expert weight [cols, rows, count] of which each token uses `used` (GGML_OP_MUL_MAT_ID).
struct ExpertOpRequest {
    OpRequest op;  // one expert's matrix
    int64_t count;
    int64_t used;
};

// One layer's attention as llama.cpp builds it (llm_graph_context::build_attn_mha), timed at (tokens, keys) points with
// and without flash attention and for each KV cache type: what the flash-attention and KV-type knobs cost.
struct AttentionRequest {
    int64_t headDim = 0;   // K (and Q) head size
    int64_t headDimV = 0;  // V head size
    int64_t heads = 0;
    int64_t kvHeads = 0;
    std::vector<std::pair<int64_t, int64_t>> points;  // (tokens, keys)
    std::vector<ggml_type> kvTypes;
};

struct Request {
    std::vector<OpRequest> ops;
    AttentionRequest attention;  // headDim 0: none
    std::vector<ExpertOpRequest> expertOps;
    std::vector<int64_t> batchSizes;     // token counts timed on GPU devices
    std::vector<int64_t> cpuBatchSizes;  // token counts timed on the CPU (prefill on the CPU is rare on a GPU machine)
    std::vector<std::string> devices;    // device names; empty = every CPU and GPU device
    int threads = 1;
    int warmup = 2;
    int repeats = 7;
    double maxMsPerPoint = 400;          // stop repeating one measurement after this much time
    // Skip a batch size whose time, extrapolated linearly from the op's previous measured batch, exceeds this; the
    // cost model extrapolates linearly from the largest measured batch instead (large matmuls are compute-bound).
    double maxEstimatedMsPerPoint = 1e9;
    double timeLimitMs = 60000;          // whole profile
    size_t transferBytes = 64u << 20;
    size_t switchBytes = 16384;
    size_t cpuScanBytes = 256u << 20;
    // Bytes of distinct weights a decode (batch-1) timing streams through: a real decode reads every weight of the
    // model once per token, so a weight set that fits in the last-level cache would be timed at cache speed while the
    // model runs at memory speed. The caller passes the model's weight bytes (capped); 0 = the plain slope timing.
    size_t decodeWorkingSetBytes = 0;
    // Time CPU weights as a load with no GPU device (llama.cpp's `--device none`) lays them out: in the CPU's extra
    // buffer types where they apply, even when this binary sees a GPU (see cpuWeightBufferType).
    bool cpuOnlyLoad = false;
};

struct MatmulResult {
    std::string device;
    OpRequest op;
    int64_t batch;
    double medianUs;
    double minUs;
    int samples;
    bool supported;
    std::string weightBufferType;  // where the timed weights lived (an extra CPU buffer type where llama.cpp repacks)
};

struct ExpertMatmulResult {
    std::string device;
    ExpertOpRequest op;
    int64_t batch;
    int64_t distinct;  // experts the batch's routing selected
    double medianUs;
    double minUs;
    int samples;
    bool supported;
    std::string weightBufferType;
};

// Copy of the experts a micro-batch uses from the device's pinned host buffer, the way the scheduler does it for an
// offloaded host-resident MUL_MAT_ID (ggml_backend_sched_compute_splits, "copying only the experts that are used").
struct ExpertCopyResult {
    std::string device;
    ExpertOpRequest op;
    int64_t batch;
    int64_t distinct;
    double bytes;
    double medianUs;
};

struct AttentionResult {
    std::string device;
    bool flash;
    ggml_type kvType;
    int64_t tokens;
    int64_t keys;
    double medianUs = -1;
    double minUs = -1;
    int samples = 0;
    bool supported = false;
};

struct TransferResult {
    std::string device;
    double pinnedH2dBytesPerSec = -1;
    double pageableH2dBytesPerSec = -1;
    double d2hBytesPerSec = -1;
    double switchUs = -1;       // one small activation copy + sync + an (almost) empty graph launch on the device
    double copySmallUs = -1;    // just the small copy + sync
    double launchUs = -1;       // just the tiny graph compute
};

struct Response {
    std::vector<MatmulResult> matmuls;
    std::vector<TransferResult> transfers;
    std::vector<ExpertMatmulResult> expertMatmuls;
    std::vector<ExpertCopyResult> expertCopies;
    std::vector<AttentionResult> attentions;
    std::vector<std::pair<std::string, std::string>> devices;  // name, type
    double cpuReadBytesPerSec = -1;
    double cpuLaunchUs = -1;  // one (almost) empty graph on the CPU backend: thread wake-up + barrier + join
    double elapsedMs = 0;
    bool truncated = false;
    bool cancelled = false;
};

struct BackendDeleter { void operator()(ggml_backend_t b) const { if (b) ggml_backend_free(b); } };
struct BufferDeleter { void operator()(ggml_backend_buffer_t b) const { if (b) ggml_backend_buffer_free(b); } };
struct ContextDeleter { void operator()(ggml_context* c) const { if (c) ggml_free(c); } };
using BackendPtr = std::unique_ptr<ggml_backend, BackendDeleter>;
using BufferPtr = std::unique_ptr<ggml_backend_buffer, BufferDeleter>;
using ContextPtr = std::unique_ptr<ggml_context, ContextDeleter>;

ContextPtr newContext(size_t tensors, size_t graphs = 1) {
    ggml_init_params params = {ggml_tensor_overhead() * tensors + ggml_graph_overhead() * graphs, nullptr, true};
    return ContextPtr(ggml_init(params));
}

// Same as llama.cpp's CPU backend setup: the thread count goes through the registry's proc address
// (source: llama_context constructor, "ggml_backend_set_n_threads").
void setThreads(ggml_backend_t backend, ggml_backend_dev_t dev, int threads) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    if (reg == nullptr) return;
    auto fn = (ggml_backend_set_n_threads_t) ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    if (fn != nullptr) fn(backend, threads);
}

// The buffer type llama.cpp loads a CPU weight into, for the op `build` makes of it (nullptr: the plain CPU buffer
// type). Mirrors make_cpu_buft_list (src/llama-model.cpp): where the model uses a GPU device with a pinned host buffer
// type, host weights go there as plain data (timed there too: that memory is not always as fast for the CPU — on Mesa's
// llvmpipe a CPU-only placement's prompt ran 20-25% slower from Vulkan_Host than a load without the GPU); on a CPU-only load the CPU's extra buffer types (AMX, CPU_REPACK, KleidiAI) come first, and a
// weight takes the first whose kernels run its op (select_weight_buft / weight_buft_supported in
// src/llama-model-loader.cpp), repacked at load for kernels several times faster than the plain ones on some CPUs
// (AMX on Xeons, Q4_0/Q4_K on AVX2). The profiler must time the kernels the model will run.
template <typename Build>
ggml_backend_buffer_type_t cpuWeightBufferType(ggml_backend_dev_t cpuDev, bool cpuOnlyLoad, Build build) {
    for (size_t i = 0; i < ggml_backend_dev_count() && !cpuOnlyLoad; i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        const auto type = ggml_backend_dev_type(dev);
        ggml_backend_buffer_type_t host = type == GGML_BACKEND_DEVICE_TYPE_GPU || type == GGML_BACKEND_DEVICE_TYPE_IGPU
            ? ggml_backend_dev_host_buffer_type(dev) : nullptr;
        if (host == nullptr) continue;
        ContextPtr ctx = newContext(8, 0);
        ggml_tensor* op = build(ctx.get());
        BufferPtr probe(ggml_backend_buft_alloc_buffer(host, 0));
        if (!probe) return nullptr;
        op->src[0]->buffer = probe.get();
        const bool supported = ggml_backend_dev_supports_op(cpuDev, op);
        op->src[0]->buffer = nullptr;
        return supported ? host : nullptr;
    }
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(cpuDev);
    auto extraBufts = reg == nullptr ? nullptr
        : (ggml_backend_dev_get_extra_bufts_t) ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    if (extraBufts == nullptr) return nullptr;
    for (ggml_backend_buffer_type_t* buft = extraBufts(cpuDev); buft != nullptr && *buft != nullptr; ++buft) {
        ContextPtr ctx = newContext(8, 0);
        ggml_tensor* op = build(ctx.get());
        ggml_tensor* weight = op->src[0];
        // a zero-size buffer of the candidate type, as weight_buft_supported does, so supports_op sees the buffer type
        BufferPtr probe(ggml_backend_buft_alloc_buffer(*buft, 0));
        if (!probe) continue;
        weight->buffer = probe.get();
        const bool supported = ggml_backend_dev_supports_op(cpuDev, op);
        weight->buffer = nullptr;
        if (supported) return *buft;
    }
    return nullptr;
}

// The weights of one timed op: in the CPU's extra buffer type that llama.cpp would load them into (see
// cpuWeightBufferType), in a context of their own, or else with the graph's other tensors in the backend's own buffer.
struct TimedWeights {
    ggml_backend_buffer_type_t extraBuft = nullptr;
    ContextPtr ctx;
    BufferPtr buffer;
    std::string bufferType;  // reported with the timing

    // Where to create the weight tensors.
    ggml_context* context(ggml_context* graphCtx) const { return extraBuft != nullptr ? ctx.get() : graphCtx; }

    // Once the graph's tensors are allocated: fills every weight of `outputs` with 0x11 bytes (small normal numbers in
    // f32/f16/bf16 and in every quant block's scale: no NaN/denormal slow paths). A repacking buffer type converts the
    // data as it is set and takes only whole tensors, so its weights are allocated here and set, not memset. False when
    // they could not be allocated.
    bool fill(const std::vector<ggml_tensor*>& outputs) {
        if (extraBuft == nullptr) {
            for (ggml_tensor* y : outputs)
                ggml_backend_tensor_memset(y->src[0], 0x11, 0, ggml_nbytes(y->src[0]));
            return true;
        }
        buffer.reset(ggml_backend_alloc_ctx_tensors_from_buft(ctx.get(), extraBuft));
        if (!buffer) return false;
        std::vector<uint8_t> data;
        for (ggml_tensor* y : outputs) {
            if (data.size() < ggml_nbytes(y->src[0])) data.assign(ggml_nbytes(y->src[0]), 0x11);
            ggml_backend_tensor_set(y->src[0], data.data(), 0, ggml_nbytes(y->src[0]));
        }
        return true;
    }
};

// The placement of `count` weights for timing on `backend`; `build` makes the op of one weight (as in
// cpuWeightBufferType).
template <typename Build>
TimedWeights timedWeights(ggml_backend_t backend, size_t count, bool cpuOnlyLoad, Build build) {
    TimedWeights weights;
    ggml_backend_dev_t device = ggml_backend_get_device(backend);
    if (device != nullptr && ggml_backend_dev_type(device) == GGML_BACKEND_DEVICE_TYPE_CPU)
        weights.extraBuft = cpuWeightBufferType(device, cpuOnlyLoad, build);
    if (weights.extraBuft != nullptr) weights.ctx = newContext(count, 0);
    weights.bufferType = ggml_backend_buft_name(weights.extraBuft != nullptr ? weights.extraBuft : ggml_backend_get_default_buffer_type(backend));
    return weights;
}

// Slope timing: at most this many matmuls per timed graph, and at most this many weight bytes for them together.
constexpr size_t kMaxSlopeOps = 8;
constexpr size_t kSlopeWeightBudget = 256u << 20;
// Decode timing over a working set: at most this many distinct weights (graph nodes) however small the op.
constexpr size_t kMaxDecodeOps = 256;

class Profiler {
public:
    Profiler(const Request& request, unsigned generation)
        : req(request), generation(generation), started(Clock::now()), budgetStarted(started) {}

    // The time limit applies to the matmul phase only (from budgetStarted): links are few, short and bounded by
    // maxMsPerPoint each, and a device without a link timing cannot be planned for at all.
    bool cancelled(Response& out) {
        if (tensorwiseProfileCancelGeneration.load() != generation) { out.cancelled = true; return true; }
        return false;
    }

    bool stop(Response& out) {
        if (cancelled(out)) return true;
        if (!linkPhase && elapsedUs(budgetStarted) / 1000 > req.timeLimitMs) { out.truncated = true; return true; }
        return false;
    }

    // Runs `fn` warmup + repeats times (bounded by maxMsPerPoint); returns the per-run times in µs. A point the time
    // limit reaches before its warm-up is done returns no times at all (the point is left unmeasured, so the cost model
    // extrapolates it): a cold first run is not a timing — on an H100 it took 30-70× a warm one (first kernel launch
    // of a fresh backend context; bench/results/2026-11-27-h100/README.md). A point `mustMeasure` marks runs its
    // warm-up and repeats whatever the time limit (only a cancel stops it).
    template <typename Fn>
    std::vector<double> time(Fn fn, Response& out) {
        auto halt = [&] { return mustMeasure ? cancelled(out) : stop(out); };
        std::vector<double> samples;
        for (int i = 0; i < req.warmup; i++) {
            if (halt()) return samples;
            auto t0 = Clock::now();
            fn();
            if (elapsedUs(t0) / 1000 > req.maxMsPerPoint) break;  // a slow op needs no long warm-up
        }
        double spent = 0;
        for (int i = 0; i < req.repeats; i++) {
            if (i == 0 && halt()) break;
            auto t0 = Clock::now();
            fn();
            double us = elapsedUs(t0);
            samples.push_back(us);
            spent += us;
            if (spent / 1000 > req.maxMsPerPoint || halt()) break;
        }
        return samples;
    }

    // Times one weight matmul as it runs inside a larger graph. A graph of its own would also pay the per-graph cost
    // (CPU: a disposable thread pool is created per ggml_graph_compute without llama.cpp's persistent one — measured
    // ~4-6 ms here, more than a whole small-model decode; GPU: submit + sync). So two graphs are timed, one with a
    // single matmul and one with K matmuls over K distinct weights (no cache reuse across them), and the per-op time
    // is the slope (T_K - T_1) / (K - 1): the fixed per-graph cost cancels out.
    //
    // At batch 1 (decode) the K weights add up to the decode working set (the model's weight bytes, capped), and the
    // single-matmul graphs rotate over all K weights, so neither timing finds its weight in the cache: a decode streams
    // the whole model from memory every token, and that is the rate the cost model needs.
    void matmul(ggml_backend_t backend, const std::string& dev, const OpRequest& op, int64_t batch, Response& out) {
        MatmulResult result{dev, op, batch, -1, -1, 0, false};
        const size_t weightBytes = ggml_row_size(op.type, op.cols) * (size_t) op.rows;
        // Only on the CPU: a decode there streams weights through the CPU's caches. On a GPU the rotation over up to
        // kMaxDecodeOps single-matmul graphs corrupted the heap inside Mesa's lavapipe (ggml_vk_graph_cleanup →
        // command pool cleanup, SIGABRT "corrupted double-linked list"), so GPUs keep the plain slope timing. That was
        // while every point reused one Vulkan context, which alone corrupted lavapipe's heap (see pointBackend); the
        // rotation has not been tried again since.
        ggml_backend_dev_t device = ggml_backend_get_device(backend);
        const bool onCpu = device != nullptr && ggml_backend_dev_type(device) == GGML_BACKEND_DEVICE_TYPE_CPU;
        const bool decode = onCpu && batch == 1 && req.decodeWorkingSetBytes > 0;
        const size_t wanted = decode
            ? std::min<size_t>(kMaxDecodeOps, (req.decodeWorkingSetBytes + weightBytes - 1) / std::max<size_t>(1, weightBytes))
            : std::min<size_t>(kMaxSlopeOps, kSlopeWeightBudget / std::max<size_t>(1, weightBytes));
        const int k = (int) std::max<size_t>(2, wanted);
        const int singles = decode ? k : 1;
        ggml_init_params params = {ggml_tensor_overhead() * (4 * k + 8) + ggml_graph_overhead() +
            ggml_graph_overhead_custom(4, false) * singles, nullptr, true};
        ContextPtr ctx(ggml_init(params));
        TimedWeights weights = timedWeights(backend, k, req.cpuOnlyLoad, [&](ggml_context* c) {
            return ggml_mul_mat(c, ggml_new_tensor_2d(c, op.type, op.cols, op.rows), ggml_new_tensor_2d(c, GGML_TYPE_F32, op.cols, 512));
        });
        result.weightBufferType = weights.bufferType;
        ggml_tensor* x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, op.cols, batch);
        std::vector<ggml_tensor*> outputs;
        for (int i = 0; i < k; i++) {
            ggml_tensor* w = ggml_new_tensor_2d(weights.context(ctx.get()), op.type, op.cols, op.rows);
            outputs.push_back(ggml_mul_mat(ctx.get(), w, x));
        }
        if (!ggml_backend_supports_op(backend, outputs[0])) {
            out.matmuls.push_back(result);
            return;
        }
        BufferPtr buffer(ggml_backend_alloc_ctx_tensors(ctx.get(), backend));
        if (!buffer || !weights.fill(outputs)) {
            out.matmuls.push_back(result);
            return;
        }
        ggml_backend_tensor_memset(x, 0x3c, 0, ggml_nbytes(x));
        std::vector<ggml_cgraph*> single;
        for (int i = 0; i < singles; i++) {
            single.push_back(ggml_new_graph_custom(ctx.get(), 4, false));
            ggml_build_forward_expand(single.back(), outputs[i]);
        }
        ggml_cgraph* many = ggml_new_graph(ctx.get());
        for (ggml_tensor* y : outputs)
            ggml_build_forward_expand(many, y);

        size_t next = 0;
        auto singleUs = time([&] { ggml_backend_graph_compute(backend, single[next++ % single.size()]); }, out);
        auto manyUs = time([&] { ggml_backend_graph_compute(backend, many); }, out);
        result.supported = true;
        result.samples = (int) std::min(singleUs.size(), manyUs.size());
        if (singleUs.empty() || manyUs.empty()) {
            out.matmuls.push_back(result);
            return;
        }
        const SlopeTiming timing = slopeTiming(singleUs, manyUs, k);
        result.medianUs = timing.medianUs;
        result.minUs = timing.minUs;
        out.matmuls.push_back(result);
    }

    // One layer's attention over `keys` cached positions for `tokens` new ones, as llm_graph_context::build_attn_mha
    // builds it: with flash attention one GGML_OP_FLASH_ATTN_EXT over K and V in the cache's type; without it
    // KQ = K·Q (F32), a masked soft-max, and KQV = V·KQ with V stored transposed (llama.cpp's v_trans cache layout).
    // Slope-timed like matmul(): one attention against k independent ones (their own Q, K, V), so the graph launch cancels.
    void attention(ggml_backend_t backend, const std::string& dev, bool flash, ggml_type kvType, int64_t tokens, int64_t keys, Response& out) {
        const AttentionRequest& a = req.attention;
        AttentionResult result{dev, flash, kvType, tokens, keys};
        const int k = 4;
        ContextPtr ctx = newContext(16 * k + 8, 2);
        const int64_t maskRows = tokens;  // llama.cpp's KQ mask: [n_kv, n_tokens] (build_attn_inp_kq_mask, no padding in this version)
        ggml_tensor* mask = ggml_new_tensor_2d(ctx.get(), flash ? GGML_TYPE_F16 : GGML_TYPE_F32, keys, maskRows);
        const float scale = 1.0f / std::sqrt((float) a.headDim);
        std::vector<ggml_tensor*> inputs = {mask};
        std::vector<ggml_tensor*> outputs;
        for (int i = 0; i < k; i++) {
            // the views llama.cpp hands in after its permutes: Q [D, tokens, heads], K [D, keys, kv heads]
            ggml_tensor* q = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, a.headDim, tokens, a.heads);
            ggml_tensor* kc = ggml_new_tensor_3d(ctx.get(), kvType, a.headDim, keys, a.kvHeads);
            inputs.insert(inputs.end(), {q, kc});
            if (flash) {
                ggml_tensor* v = ggml_new_tensor_3d(ctx.get(), kvType, a.headDimV, keys, a.kvHeads);
                inputs.push_back(v);
                ggml_tensor* cur = ggml_flash_attn_ext(ctx.get(), q, kc, v, mask, scale, 0.0f, 0.0f);
                ggml_flash_attn_ext_set_prec(cur, GGML_PREC_F32);
                outputs.push_back(cur);
            } else {
                ggml_tensor* vt = ggml_new_tensor_3d(ctx.get(), kvType, keys, a.headDimV, a.kvHeads);
                inputs.push_back(vt);
                ggml_tensor* kq = ggml_mul_mat(ctx.get(), kc, q);
                ggml_mul_mat_set_prec(kq, GGML_PREC_F32);
                kq = ggml_soft_max_ext(ctx.get(), kq, mask, scale, 0.0f);
                outputs.push_back(ggml_mul_mat(ctx.get(), vt, kq));
            }
        }
        bool supported = true;
        for (ggml_tensor* t : outputs) supported = supported && ggml_backend_supports_op(backend, t);
        if (!flash)
            for (ggml_tensor* t : outputs) supported = supported && ggml_backend_supports_op(backend, t->src[1]) && ggml_backend_supports_op(backend, t->src[1]->src[0]);
        if (!supported) {
            out.attentions.push_back(result);
            return;
        }
        BufferPtr buffer(ggml_backend_alloc_ctx_tensors(ctx.get(), backend));
        if (!buffer) {
            out.attentions.push_back(result);
            return;
        }
        // finite, moderate values in every type (0x3c bytes: F16 1.05, F32 0.011, q8_0 blocks of scale 1.05); the mask all 0
        for (ggml_tensor* t : inputs) ggml_backend_tensor_memset(t, t == mask ? 0 : 0x3c, 0, ggml_nbytes(t));
        ggml_cgraph* single = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(single, outputs[0]);
        ggml_cgraph* many = ggml_new_graph(ctx.get());
        for (ggml_tensor* y : outputs) ggml_build_forward_expand(many, y);
        auto singleUs = time([&] { ggml_backend_graph_compute(backend, single); }, out);
        auto manyUs = time([&] { ggml_backend_graph_compute(backend, many); }, out);
        result.supported = true;
        result.samples = (int) std::min(singleUs.size(), manyUs.size());
        if (!singleUs.empty() && !manyUs.empty()) {
            const SlopeTiming timing = slopeTiming(singleUs, manyUs, k);
            result.medianUs = timing.medianUs;
            result.minUs = timing.minUs;
        }
        out.attentions.push_back(result);
    }

    // Uniform routing, as the cost model assumes (planner/expectedDistinctExperts.ts): each of `batch` tokens picks
    // `used` distinct experts of `count`, every expert equally likely; a fixed seed makes profiles repeatable.
    static std::vector<int32_t> routeUniform(const ExpertOpRequest& op, int64_t batch) {
        std::mt19937 rng((uint32_t) (op.count * 7919 + op.used * 131 + batch));
        std::vector<int32_t> experts(op.count);
        std::iota(experts.begin(), experts.end(), 0);
        std::vector<int32_t> ids;
        ids.reserve((size_t) (op.used * batch));
        for (int64_t t = 0; t < batch; t++) {
            for (int64_t j = 0; j < op.used; j++) {
                std::uniform_int_distribution<int64_t> pick(j, op.count - 1);
                std::swap(experts[j], experts[pick(rng)]);
                ids.push_back(experts[j]);
            }
        }
        return ids;
    }

    static int64_t distinctOf(const std::vector<int32_t>& ids, int64_t count) {
        std::vector<bool> seen(count, false);
        int64_t n = 0;
        for (int32_t id : ids) if (!seen[id]) { seen[id] = true; n++; }
        return n;
    }

    // Times ggml_mul_mat_id(experts[cols, rows, count], x[cols, 1, batch], ids[used, batch]) as llm_graph_context::build_moe_ffn
    // builds it (one activation row per token, broadcast over its selected experts), slope-timed like matmul().
    void matmulId(ggml_backend_t backend, const std::string& dev, const ExpertOpRequest& op, int64_t batch, Response& out) {
        const std::vector<int32_t> route = routeUniform(op, batch);
        ExpertMatmulResult result{dev, op, batch, distinctOf(route, op.count), -1, -1, 0, false};
        const size_t weightBytes = ggml_row_size(op.op.type, op.op.cols) * (size_t) op.op.rows * (size_t) op.count;
        const int k = (int) std::max<size_t>(2, std::min<size_t>(kMaxSlopeOps, kSlopeWeightBudget / std::max<size_t>(1, weightBytes)));
        ContextPtr ctx = newContext(4 * k + 8, 2);
        // the experts where llama.cpp would repack them (the probe op is weight_buft_supported's)
        TimedWeights weights = timedWeights(backend, k, req.cpuOnlyLoad, [&](ggml_context* c) {
            return ggml_mul_mat_id(c, ggml_new_tensor_3d(c, op.op.type, op.op.cols, op.op.rows, op.count),
                ggml_new_tensor_3d(c, GGML_TYPE_F32, op.op.cols, op.used, 512), ggml_new_tensor_2d(c, GGML_TYPE_I32, op.used, 512));
        });
        result.weightBufferType = weights.bufferType;
        ggml_tensor* x = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, op.op.cols, 1, batch);
        ggml_tensor* ids = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_I32, op.used, batch);
        std::vector<ggml_tensor*> outputs;
        for (int i = 0; i < k; i++) {
            ggml_tensor* w = ggml_new_tensor_3d(weights.context(ctx.get()), op.op.type, op.op.cols, op.op.rows, op.count);
            outputs.push_back(ggml_mul_mat_id(ctx.get(), w, x, ids));
        }
        if (!ggml_backend_supports_op(backend, outputs[0])) {
            out.expertMatmuls.push_back(result);
            return;
        }
        BufferPtr buffer(ggml_backend_alloc_ctx_tensors(ctx.get(), backend));
        if (!buffer || !weights.fill(outputs)) {
            out.expertMatmuls.push_back(result);
            return;
        }
        ggml_backend_tensor_memset(x, 0x3c, 0, ggml_nbytes(x));
        ggml_backend_tensor_set(ids, route.data(), 0, ggml_nbytes(ids));
        ggml_cgraph* single = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(single, outputs[0]);
        ggml_cgraph* many = ggml_new_graph(ctx.get());
        for (ggml_tensor* y : outputs)
            ggml_build_forward_expand(many, y);
        auto singleUs = time([&] { ggml_backend_graph_compute(backend, single); }, out);
        auto manyUs = time([&] { ggml_backend_graph_compute(backend, many); }, out);
        result.supported = true;
        result.samples = (int) std::min(singleUs.size(), manyUs.size());
        if (singleUs.empty() || manyUs.empty()) {
            out.expertMatmuls.push_back(result);
            return;
        }
        const SlopeTiming timing = slopeTiming(singleUs, manyUs, k);
        result.medianUs = timing.medianUs;
        result.minUs = timing.minUs;
        out.expertMatmuls.push_back(result);
    }

    // The scheduler's copy of the used experts of a host-resident expert weight to the device, for one micro-batch:
    // consecutive used experts are grouped into one copy (source: copy_experts in ggml_backend_sched_compute_splits).
    void expertCopy(ggml_backend_t backend, ggml_backend_dev_t dev, const std::string& name, const ExpertOpRequest& op, int64_t batch, Response& out) {
        ggml_backend_buffer_type_t hostBuft = ggml_backend_dev_host_buffer_type(dev);
        if (hostBuft == nullptr) return;
        const size_t expertBytes = ggml_row_size(op.op.type, op.op.cols) * (size_t) op.op.rows;
        const size_t totalBytes = expertBytes * (size_t) op.count;
        ContextPtr ctx = newContext(2);
        ggml_tensor* w = ggml_new_tensor_3d(ctx.get(), op.op.type, op.op.cols, op.op.rows, op.count);
        BufferPtr buffer(ggml_backend_alloc_ctx_tensors(ctx.get(), backend));
        BufferPtr pinned(ggml_backend_buft_alloc_buffer(hostBuft, totalBytes));
        if (!buffer || !pinned) return;
        uint8_t* base = (uint8_t*) ggml_backend_buffer_get_base(pinned.get());
        std::memset(base, 0x11, totalBytes);
        const std::vector<int32_t> route = routeUniform(op, batch);
        std::vector<bool> used(op.count, false);
        for (int32_t id : route) used[id] = true;
        std::vector<std::pair<int64_t, int64_t>> runs;  // [first, last] of consecutive used experts
        for (int64_t e = 0; e < op.count; e++) {
            if (!used[e]) continue;
            if (!runs.empty() && runs.back().second == e - 1) runs.back().second = e;
            else runs.push_back({e, e});
        }
        ExpertCopyResult result{name, op, batch, distinctOf(route, op.count), 0, -1};
        for (auto [first, last] : runs) result.bytes += (double) ((last - first + 1) * expertBytes);
        auto us = time([&] {
            for (auto [first, last] : runs)
                ggml_backend_tensor_set_async(backend, w, base + first * expertBytes, first * expertBytes, (last - first + 1) * expertBytes);
            ggml_backend_synchronize(backend);
        }, out);
        result.medianUs = median(us);
        out.expertCopies.push_back(result);
    }

    void transfers(ggml_backend_t backend, ggml_backend_dev_t dev, const std::string& name, Response& out) {
        TransferResult result;
        result.device = name;
        ContextPtr ctx = newContext(4);
        ggml_tensor* big = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I8, (int64_t) req.transferBytes);
        ggml_tensor* small = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I8, (int64_t) req.switchBytes);
        ggml_tensor* tiny = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 16);
        ggml_tensor* sum = ggml_add(ctx.get(), tiny, tiny);
        BufferPtr buffer(ggml_backend_alloc_ctx_tensors(ctx.get(), backend));
        if (!buffer) {
            out.transfers.push_back(result);
            return;
        }
        const double bytes = (double) req.transferBytes;

        // pageable host memory → device: what llama.cpp does for host weights loaded with mmap.
        std::vector<uint8_t> pageable(req.transferBytes, 0x11);
        auto pageableUs = time([&] { ggml_backend_tensor_set(big, pageable.data(), 0, req.transferBytes); }, out);
        result.pageableH2dBytesPerSec = bytes / (median(pageableUs) * 1e-6);
        auto d2hUs = time([&] { ggml_backend_tensor_get(big, pageable.data(), 0, req.transferBytes); }, out);
        result.d2hBytesPerSec = bytes / (median(d2hUs) * 1e-6);
        pageable.clear();
        pageable.shrink_to_fit();

        // pinned host memory (the device's host buffer type, CUDA_Host / Vulkan_Host) → device: what the scheduler's
        // copy of a host-resident weight costs when the model is loaded without mmap.
        if (ggml_backend_buffer_type_t hostBuft = ggml_backend_dev_host_buffer_type(dev)) {
            BufferPtr pinned(ggml_backend_buft_alloc_buffer(hostBuft, req.transferBytes));
            if (pinned) {
                void* base = ggml_backend_buffer_get_base(pinned.get());
                std::memset(base, 0x11, req.transferBytes);
                auto pinnedUs = time([&] { ggml_backend_tensor_set(big, base, 0, req.transferBytes); }, out);
                result.pinnedH2dBytesPerSec = bytes / (median(pinnedUs) * 1e-6);
            }
        }

        // one CPU↔GPU switch: the scheduler copies the activations across and synchronises, then launches the split.
        std::vector<uint8_t> activations(req.switchBytes, 0x11);
        auto copyUs = time([&] {
            ggml_backend_tensor_set(small, activations.data(), 0, req.switchBytes);
            ggml_backend_synchronize(backend);
        }, out);
        result.copySmallUs = median(copyUs);
        ggml_backend_tensor_memset(tiny, 0, 0, ggml_nbytes(tiny));
        ggml_cgraph* graph = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(graph, sum);
        auto launchUs = time([&] { ggml_backend_graph_compute(backend, graph); }, out);
        result.launchUs = median(launchUs);
        result.switchUs = result.copySmallUs + result.launchUs;
        out.transfers.push_back(result);
    }

    // The fixed cost of one CPU graph compute with the inference thread count, which every single-op timing includes
    // once but a llama.cpp decode pays once per graph (the cost model subtracts it per op).
    void cpuLaunch(ggml_backend_t backend, Response& out) {
        ContextPtr ctx = newContext(4);
        ggml_tensor* tiny = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 16);
        ggml_tensor* sum = ggml_add(ctx.get(), tiny, tiny);
        BufferPtr buffer(ggml_backend_alloc_ctx_tensors(ctx.get(), backend));
        if (!buffer) return;
        ggml_backend_tensor_memset(tiny, 0, 0, ggml_nbytes(tiny));
        ggml_cgraph* graph = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(graph, sum);
        auto us = time([&] { ggml_backend_graph_compute(backend, graph); }, out);
        out.cpuLaunchUs = median(us);
    }

    // CPU read bandwidth: a scan of a large buffer with the inference thread count.
    void cpuRead(Response& out) {
        size_t words = req.cpuScanBytes / sizeof(uint64_t);
        std::vector<uint64_t> data(words, 0x1111111111111111ull);
        int threads = std::max(1, req.threads);
        std::vector<uint64_t> sums(threads, 0);
        auto scan = [&] {
            std::vector<std::thread> pool;
            for (int t = 0; t < threads; t++) {
                pool.emplace_back([&, t] {
                    size_t from = words * t / threads, to = words * (t + 1) / threads;
                    uint64_t s = 0;
                    for (size_t i = from; i < to; i++) s += data[i];
                    sums[t] = s;
                });
            }
            for (auto& th : pool) th.join();
        };
        auto us = time(scan, out);
        out.cpuReadBytesPerSec = (double) (words * sizeof(uint64_t)) / (median(us) * 1e-6);
    }

    // The backend a measured point runs on. The CPU keeps one (its thread count is set once); a GPU gets a fresh backend
    // context per point, as the transfers above do. Reusing one Vulkan context from batch-1 mat-vec points into the
    // first 32-token matmul corrupted the heap inside Mesa's lavapipe 22.3 ("corrupted double-linked list" in
    // ggml_vk_matmul → libvulkan_lvp.so) in 3 of 5 runs of a standalone program that does nothing but this profiler's
    // ggml calls on Q8_0 2048-wide weights; with a context per point, 0 of 6 crashed. Pipelines are compiled per device
    // (ggml-vulkan caches them there), so a new context costs no recompilation, and every point is warmed up anyway.
    static std::shared_ptr<ggml_backend> pointBackend(bool isCpu, ggml_backend_dev_t dev, ggml_backend_t shared) {
        auto borrowed = std::shared_ptr<ggml_backend>(shared, [](ggml_backend*) {});
        if (isCpu) return borrowed;
        ggml_backend_t fresh = ggml_backend_dev_init(dev, nullptr);
        if (fresh == nullptr) return borrowed;
        return std::shared_ptr<ggml_backend>(fresh, [](ggml_backend* b) { ggml_backend_free(b); });
    }

    void run(Response& out) {
        struct Dev { ggml_backend_dev_t dev; std::string name; bool isCpu; };
        std::vector<Dev> devs;
        for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
            ggml_backend_dev_t dev = ggml_backend_dev_get(i);
            auto type = ggml_backend_dev_type(dev);
            if (type != GGML_BACKEND_DEVICE_TYPE_CPU && type != GGML_BACKEND_DEVICE_TYPE_GPU &&
                type != GGML_BACKEND_DEVICE_TYPE_IGPU) continue;
            std::string name = ggml_backend_dev_name(dev);
            if (!req.devices.empty() && std::find(req.devices.begin(), req.devices.end(), name) == req.devices.end()) continue;
            devs.push_back({dev, name, type == GGML_BACKEND_DEVICE_TYPE_CPU});
            out.devices.push_back({name, type == GGML_BACKEND_DEVICE_TYPE_CPU ? "cpu" : "gpu"});
        }
        // every device's link before any matmul, outside the time limit: a device (an rpc-server's above all) whose
        // link was never timed is left out of every plan, whereas a missing matmul point is only extrapolated
        linkPhase = true;
        for (const Dev& d : devs) {
            if (d.isCpu) continue;
            if (stop(out)) break;
            BackendPtr backend(ggml_backend_dev_init(d.dev, nullptr));
            if (backend) transfers(backend.get(), d.dev, d.name, out);
        }
        linkPhase = false;
        budgetStarted = Clock::now();
        if (!stop(out)) cpuRead(out);
        // every GPU's transfer costs before any matmul and whatever the time limit (a few 16 MiB copies each): a plan
        // cannot be priced without them, while a matmul the time limit cuts is extrapolated
        for (const Dev& d : devs) {
            if (tensorwiseProfileCancelGeneration.load() != generation) { out.cancelled = true; break; }
            if (d.isCpu) continue;
            BackendPtr backend(ggml_backend_dev_init(d.dev, nullptr));
            if (backend) transfers(backend.get(), d.dev, d.name, out);
        }
        // the CPU first within each batch size: it is what every plan falls back to, and GPU pipelines compile lazily
        // (slow on llvmpipe)
        std::stable_sort(devs.begin(), devs.end(), [](const Dev& a, const Dev& b) { return a.isCpu && !b.isCpu; });
        struct DenseTiming {
            const Dev* d;
            BackendPtr backend;
            std::vector<int64_t> batches;
            std::vector<std::pair<int64_t, double>> last;                   // op → (batch, median µs)
            std::vector<std::vector<std::pair<int64_t, double>>> timed;    // op → every (batch, median µs)
        };
        std::vector<DenseTiming> dense;
        std::vector<int64_t> allBatches;
        for (const Dev& d : devs) {
            if (cancelled(out)) break;
            BackendPtr backend(ggml_backend_dev_init(d.dev, nullptr));
            if (!backend) continue;
            if (d.isCpu) {
                setThreads(backend.get(), d.dev, req.threads);
                cpuLaunch(backend.get(), out);
            }
            std::vector<int64_t> batches = d.isCpu ? req.cpuBatchSizes : req.batchSizes;
            std::sort(batches.begin(), batches.end());
            allBatches.insert(allBatches.end(), batches.begin(), batches.end());
            dense.push_back({&d, std::move(backend), batches, std::vector<std::pair<int64_t, double>>(req.ops.size(), {0, -1}),
                std::vector<std::vector<std::pair<int64_t, double>>>(req.ops.size())});
        }
        std::sort(allBatches.begin(), allBatches.end());
        allBatches.erase(std::unique(allBatches.begin(), allBatches.end()), allBatches.end());
        // Batch size by batch size across the devices, every op at the small batches first, so a time limit cuts only
        // the large-batch points of every device (extrapolated), not a whole device. Each device's two smallest batches
        // are measured whatever the time limit (only a cancel stops them): decode (batch 1) and the first prefill
        // micro-batch. A device without a decode timing cannot be planned for, and one without a prefill timing gets
        // its prefill extrapolated from decode, which is off by orders of magnitude on a GPU: the CPU-first order this
        // replaced left an H100 with cold batch-1 points only, and the planner then priced its op offload 40× too slow
        // and chose not to use the GPU (bench/results/2026-11-27-h100/README.md). The first prefill micro-batch is the
        // smallest of 32 tokens or more (llama.cpp offloads from 32): a smaller size between (a speculative
        // verification's 8) is measured when there is time, and skipping it skips no micro-batch after it.
        for (int64_t batch : allBatches) {
            for (DenseTiming& t : dense) {
                const Dev& d = *t.d;
                auto at = std::find(t.batches.begin(), t.batches.end(), batch);
                if (at == t.batches.end()) continue;
                auto prefill = std::find_if(t.batches.begin(), t.batches.end(), [](int64_t b) { return b >= 32; });
                if (prefill == t.batches.end()) prefill = t.batches.size() > 1 ? t.batches.begin() + 1 : t.batches.begin();
                const bool must = at == t.batches.begin() || at == prefill;
                for (size_t i = 0; i < req.ops.size(); i++) {
                    if (must ? cancelled(out) : stop(out)) break;
                    auto& [lastBatch, lastUs] = t.last[i];
                    if (lastBatch > 0 && lastUs < 0 && !must) continue;  // unsupported or skipped before
                    // estimated from the last point timed (a must batch after a skipped one: from the one before)
                    int64_t fromBatch = lastBatch;
                    double fromUs = lastUs;
                    if (fromUs < 0 && !t.timed[i].empty()) std::tie(fromBatch, fromUs) = t.timed[i].back();
                    if (fromBatch > 0 && fromUs >= 0) {
                        double estimatedMs = fromUs * batchGrowth(req.ops, t.timed, i, fromBatch, batch) / 1000;
                        double leftMs = req.timeLimitMs - elapsedUs(budgetStarted) / 1000;
                        if (estimatedMs > req.maxEstimatedMsPerPoint || (!must && estimatedMs * (1 + req.warmup) > leftMs / 2)) {
                            lastUs = -1;
                            continue;
                        }
                    }
                    mustMeasure = must;
                    matmul(pointBackend(d.isCpu, d.dev, t.backend.get()).get(), d.name, req.ops[i], batch, out);
                    mustMeasure = false;
                    const MatmulResult& r = out.matmuls.back();
                    lastBatch = batch;
                    lastUs = r.supported && r.medianUs > 0 ? r.medianUs : -1;
                    if (r.supported && r.medianUs > 0) t.timed[i].push_back({batch, r.medianUs});
                }
            }
        }
        dense.clear();
        // expert weights (MUL_MAT_ID) after every device's dense ops, which the cost model cannot do without (it
        // prices experts from dense matmuls where these are missing): decode (the `used` experts of one token) and the
        // prefill micro-batches, with the same skip rule; on GPUs also the copy of the experts each micro-batch uses
        for (const Dev& d : devs) {
            if (req.expertOps.empty() || stop(out)) break;
            BackendPtr backend(ggml_backend_dev_init(d.dev, nullptr));
            if (!backend) continue;
            if (d.isCpu) setThreads(backend.get(), d.dev, req.threads);
            std::vector<int64_t> batches = d.isCpu ? req.cpuBatchSizes : req.batchSizes;
            std::sort(batches.begin(), batches.end());
            std::vector<std::pair<int64_t, double>> lastId(req.expertOps.size(), {0, -1});
            for (int64_t batch : batches) {
                for (size_t i = 0; i < req.expertOps.size(); i++) {
                    if (stop(out)) break;
                    auto& [lastBatch, lastUs] = lastId[i];
                    if (lastBatch > 0 && lastUs < 0) continue;
                    if (lastBatch > 0) {
                        double estimatedMs = lastUs * (double) batch / (double) lastBatch / 1000;
                        double leftMs = req.timeLimitMs - elapsedUs(started) / 1000;
                        if (estimatedMs > req.maxEstimatedMsPerPoint || estimatedMs * (1 + req.warmup) > leftMs / 2) {
                            lastUs = -1;
                            continue;
                        }
                    }
                    matmulId(pointBackend(d.isCpu, d.dev, backend.get()).get(), d.name, req.expertOps[i], batch, out);
                    const ExpertMatmulResult& r = out.expertMatmuls.back();
                    lastId[i] = {batch, r.supported ? r.medianUs : -1};
                    if (!d.isCpu && batch > 1 && !stop(out)) expertCopy(pointBackend(d.isCpu, d.dev, backend.get()).get(), d.dev, d.name, req.expertOps[i], batch, out);
                }
            }
        }
        // one layer's attention at each (tokens, keys) point, with and without flash attention, per KV cache type (a
        // quantized V cache only with flash attention: llama.cpp refuses it without)
        for (const Dev& d : devs) {
            if (req.attention.headDim <= 0 || stop(out)) break;
            BackendPtr backend(ggml_backend_dev_init(d.dev, nullptr));
            if (!backend) continue;
            if (d.isCpu) setThreads(backend.get(), d.dev, req.threads);
            for (const auto& [tokens, keys] : req.attention.points)
                for (ggml_type kvType : req.attention.kvTypes)
                    for (bool flash : {false, true}) {
                        if (!flash && kvType != GGML_TYPE_F16) continue;
                        if (stop(out)) break;
                        attention(pointBackend(d.isCpu, d.dev, backend.get()).get(), d.name, flash, kvType, tokens, keys, out);
                    }
        }
        out.elapsedMs = elapsedUs(started) / 1000;
    }

private:
    const Request& req;
    unsigned generation;
    bool mustMeasure = false;  // see time()
    Clock::time_point started;
    Clock::time_point budgetStarted;  // where the time limit starts: after the link phase
    bool linkPhase = false;
};

class ProfileWorker : public Napi::AsyncWorker {
public:
    ProfileWorker(Napi::Env env, Request request)
        : Napi::AsyncWorker(env, "tensorwiseProfile"), deferred(Napi::Promise::Deferred::New(env)),
          request(std::move(request)), generation(tensorwiseProfileCancelGeneration.load()) {}

    Napi::Promise promise() { return deferred.Promise(); }

    void Execute() override {
        try {
            Profiler(request, generation).run(response);
        } catch (const std::exception& e) {
            SetError(std::string("profile failed: ") + e.what());
        }
    }

    void OnOK() override {
        Napi::Env env = Env();
        Napi::Object result = Napi::Object::New(env);
        Napi::Array devices = Napi::Array::New(env);
        for (size_t i = 0; i < response.devices.size(); i++) {
            Napi::Object d = Napi::Object::New(env);
            d.Set("name", response.devices[i].first);
            d.Set("type", response.devices[i].second);
            devices.Set((uint32_t) i, d);
        }
        result.Set("devices", devices);
        Napi::Array matmuls = Napi::Array::New(env);
        for (size_t i = 0; i < response.matmuls.size(); i++) {
            const MatmulResult& m = response.matmuls[i];
            Napi::Object o = Napi::Object::New(env);
            o.Set("device", m.device);
            o.Set("type", ggml_type_name(m.op.type));
            o.Set("rows", (double) m.op.rows);
            o.Set("cols", (double) m.op.cols);
            o.Set("batch", (double) m.batch);
            o.Set("supported", m.supported);
            o.Set("medianUs", m.medianUs);
            o.Set("minUs", m.minUs);
            o.Set("samples", m.samples);
            o.Set("weightBufferType", m.weightBufferType);
            matmuls.Set((uint32_t) i, o);
        }
        result.Set("matmuls", matmuls);
        Napi::Array transfers = Napi::Array::New(env);
        for (size_t i = 0; i < response.transfers.size(); i++) {
            const TransferResult& t = response.transfers[i];
            Napi::Object o = Napi::Object::New(env);
            o.Set("device", t.device);
            o.Set("pinnedH2dBytesPerSec", t.pinnedH2dBytesPerSec);
            o.Set("pageableH2dBytesPerSec", t.pageableH2dBytesPerSec);
            o.Set("d2hBytesPerSec", t.d2hBytesPerSec);
            o.Set("switchUs", t.switchUs);
            o.Set("copySmallUs", t.copySmallUs);
            o.Set("launchUs", t.launchUs);
            transfers.Set((uint32_t) i, o);
        }
        result.Set("transfers", transfers);
        auto expertFields = [&](Napi::Object o, const std::string& device, const ExpertOpRequest& op, int64_t batch, int64_t distinct) {
            o.Set("device", device);
            o.Set("type", ggml_type_name(op.op.type));
            o.Set("rows", (double) op.op.rows);
            o.Set("cols", (double) op.op.cols);
            o.Set("count", (double) op.count);
            o.Set("used", (double) op.used);
            o.Set("batch", (double) batch);
            o.Set("distinct", (double) distinct);
        };
        Napi::Array expertMatmuls = Napi::Array::New(env);
        for (size_t i = 0; i < response.expertMatmuls.size(); i++) {
            const ExpertMatmulResult& m = response.expertMatmuls[i];
            Napi::Object o = Napi::Object::New(env);
            expertFields(o, m.device, m.op, m.batch, m.distinct);
            o.Set("supported", m.supported);
            o.Set("medianUs", m.medianUs);
            o.Set("minUs", m.minUs);
            o.Set("samples", m.samples);
            o.Set("weightBufferType", m.weightBufferType);
            expertMatmuls.Set((uint32_t) i, o);
        }
        result.Set("expertMatmuls", expertMatmuls);
        Napi::Array expertCopies = Napi::Array::New(env);
        for (size_t i = 0; i < response.expertCopies.size(); i++) {
            const ExpertCopyResult& c = response.expertCopies[i];
            Napi::Object o = Napi::Object::New(env);
            expertFields(o, c.device, c.op, c.batch, c.distinct);
            o.Set("bytes", c.bytes);
            o.Set("medianUs", c.medianUs);
            expertCopies.Set((uint32_t) i, o);
        }
        result.Set("expertCopies", expertCopies);
        Napi::Array attentions = Napi::Array::New(env);
        for (size_t i = 0; i < response.attentions.size(); i++) {
            const AttentionResult& r = response.attentions[i];
            Napi::Object o = Napi::Object::New(env);
            o.Set("device", r.device);
            o.Set("flash", r.flash);
            o.Set("kvType", ggml_type_name(r.kvType));
            o.Set("tokens", (double) r.tokens);
            o.Set("keys", (double) r.keys);
            o.Set("supported", r.supported);
            o.Set("medianUs", r.medianUs);
            o.Set("minUs", r.minUs);
            o.Set("samples", r.samples);
            attentions.Set((uint32_t) i, o);
        }
        result.Set("attentions", attentions);
        result.Set("cpuReadBytesPerSec", response.cpuReadBytesPerSec);
        result.Set("cpuLaunchUs", response.cpuLaunchUs);
        result.Set("elapsedMs", response.elapsedMs);
        result.Set("truncated", response.truncated);
        result.Set("cancelled", response.cancelled);
        deferred.Resolve(result);
    }

    void OnError(const Napi::Error& error) override { deferred.Reject(error.Value()); }

private:
    Napi::Promise::Deferred deferred;
    Request request;
    Response response;
    unsigned generation;
};

ggml_type typeByName(const std::string& name) {
    for (int i = 0; i < GGML_TYPE_COUNT; i++) {
        const char* n = ggml_type_name((ggml_type) i);
        if (n != nullptr && ggml_blck_size((ggml_type) i) > 0 && name == n) return (ggml_type) i;
    }
    return GGML_TYPE_COUNT;
}

std::vector<int64_t> intList(Napi::Object o, const char* key, std::vector<int64_t> fallback) {
    if (!o.Has(key) || !o.Get(key).IsArray()) return fallback;
    Napi::Array a = o.Get(key).As<Napi::Array>();
    std::vector<int64_t> out;
    for (uint32_t i = 0; i < a.Length(); i++) {
        int64_t v = a.Get(i).As<Napi::Number>().Int64Value();
        if (v < 1 || v > 65536) throw std::runtime_error(std::string(key) + " entries must be in 1..65536");
        out.push_back(v);
    }
    return out;
}

double number(Napi::Object o, const char* key, double fallback) {
    return o.Has(key) && o.Get(key).IsNumber() ? o.Get(key).As<Napi::Number>().DoubleValue() : fallback;
}

// tensorwiseProfileOperators({ops: [{type, rows, cols}], batchSizes, cpuBatchSizes, devices, threads, ...}) → Promise
Napi::Value profileOperators(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsObject()) {
        Napi::TypeError::New(env, "tensorwiseProfileOperators(request) needs a request object").ThrowAsJavaScriptException();
        return env.Undefined();
    }
    Napi::Object o = info[0].As<Napi::Object>();
    Request req;
    try {
        Napi::Array ops = o.Get("ops").As<Napi::Array>();
        for (uint32_t i = 0; i < ops.Length(); i++) {
            Napi::Object op = ops.Get(i).As<Napi::Object>();
            std::string typeName = op.Get("type").As<Napi::String>().Utf8Value();
            ggml_type type = typeByName(typeName);
            int64_t rows = op.Get("rows").As<Napi::Number>().Int64Value();
            int64_t cols = op.Get("cols").As<Napi::Number>().Int64Value();
            if (type == GGML_TYPE_COUNT) throw std::runtime_error("unknown ggml type \"" + typeName + "\"");
            if (rows < 1 || cols < 1 || rows > (1 << 20) || cols > (1 << 20) || cols % ggml_blck_size(type) != 0)
                throw std::runtime_error("bad shape for " + typeName + ": " + std::to_string(rows) + "×" + std::to_string(cols));
            req.ops.push_back({type, rows, cols});
        }
        if (o.Has("expertOps") && o.Get("expertOps").IsArray()) {
            Napi::Array experts = o.Get("expertOps").As<Napi::Array>();
            for (uint32_t i = 0; i < experts.Length(); i++) {
                Napi::Object e = experts.Get(i).As<Napi::Object>();
                std::string typeName = e.Get("type").As<Napi::String>().Utf8Value();
                ggml_type type = typeByName(typeName);
                int64_t rows = e.Get("rows").As<Napi::Number>().Int64Value();
                int64_t cols = e.Get("cols").As<Napi::Number>().Int64Value();
                int64_t count = e.Get("count").As<Napi::Number>().Int64Value();
                int64_t used = e.Get("used").As<Napi::Number>().Int64Value();
                if (type == GGML_TYPE_COUNT) throw std::runtime_error("unknown ggml type \"" + typeName + "\"");
                if (rows < 1 || cols < 1 || rows > (1 << 20) || cols > (1 << 20) || cols % ggml_blck_size(type) != 0)
                    throw std::runtime_error("bad expert shape for " + typeName + ": " + std::to_string(rows) + "×" + std::to_string(cols));
                if (count < 1 || count > 4096 || used < 1 || used > count)
                    throw std::runtime_error("expert counts must be 1 ≤ used ≤ count ≤ 4096, got " + std::to_string(used) + " of " + std::to_string(count));
                req.expertOps.push_back({{type, rows, cols}, count, used});
            }
        }
        req.batchSizes = intList(o, "batchSizes", {1, 32, 128, 512});
        req.cpuBatchSizes = intList(o, "cpuBatchSizes", {1, 32});
        if (o.Has("devices") && o.Get("devices").IsArray()) {
            Napi::Array d = o.Get("devices").As<Napi::Array>();
            for (uint32_t i = 0; i < d.Length(); i++) req.devices.push_back(d.Get(i).As<Napi::String>().Utf8Value());
        }
        req.threads = std::max(1, (int) number(o, "threads", 1));
        req.warmup = std::clamp((int) number(o, "warmup", 2), 0, 100);
        req.repeats = std::clamp((int) number(o, "repeats", 7), 1, 1000);
        req.maxMsPerPoint = number(o, "maxMsPerPoint", 400);
        req.maxEstimatedMsPerPoint = number(o, "maxEstimatedMsPerPoint", 1e9);
        req.timeLimitMs = number(o, "timeLimitMs", 60000);
        req.transferBytes = (size_t) std::clamp(number(o, "transferBytes", 64.0 * (1 << 20)), 4096.0, 4.0 * (1 << 30));
        req.switchBytes = (size_t) std::clamp(number(o, "switchBytes", 16384), 4.0, 64.0 * (1 << 20));
        req.cpuScanBytes = (size_t) std::clamp(number(o, "cpuScanBytes", 256.0 * (1 << 20)), 1.0 * (1 << 20), 8.0 * (1 << 30));
        req.decodeWorkingSetBytes = (size_t) std::clamp(number(o, "decodeWorkingSetBytes", 0), 0.0, 4.0 * (1 << 30));
        req.cpuOnlyLoad = o.Has("cpuOnlyLoad") && o.Get("cpuOnlyLoad").IsBoolean() && o.Get("cpuOnlyLoad").As<Napi::Boolean>().Value();
        if (o.Has("attention") && o.Get("attention").IsObject()) {
            Napi::Object a = o.Get("attention").As<Napi::Object>();
            AttentionRequest& at = req.attention;
            at.headDim = (int64_t) number(a, "headDim", 0);
            at.headDimV = (int64_t) number(a, "headDimV", (double) at.headDim);
            at.heads = (int64_t) number(a, "heads", 0);
            at.kvHeads = (int64_t) number(a, "kvHeads", 0);
            if (at.headDim < 1 || at.headDim > 1024 || at.headDimV < 1 || at.headDimV > 1024 || at.heads < 1 || at.heads > 1024 ||
                at.kvHeads < 1 || at.kvHeads > at.heads || at.heads % at.kvHeads != 0)
                throw std::runtime_error("attention needs 1 ≤ head sizes ≤ 1024 and 1 ≤ kvHeads ≤ heads ≤ 1024, heads a multiple of kvHeads");
            if (a.Has("points") && a.Get("points").IsArray()) {
                Napi::Array points = a.Get("points").As<Napi::Array>();
                for (uint32_t i = 0; i < points.Length() && i < 16; i++) {
                    Napi::Object point = points.Get(i).As<Napi::Object>();
                    int64_t tokens = (int64_t) number(point, "tokens", 0), keys = (int64_t) number(point, "keys", 0);
                    if (tokens < 1 || tokens > 8192 || keys < tokens || keys > (1 << 20)) throw std::runtime_error("attention points need 1 ≤ tokens ≤ keys");
                    at.points.push_back({tokens, keys});
                }
            }
            if (a.Has("kvTypes") && a.Get("kvTypes").IsArray()) {
                Napi::Array types = a.Get("kvTypes").As<Napi::Array>();
                for (uint32_t i = 0; i < types.Length() && i < 4; i++) {
                    std::string name = types.Get(i).As<Napi::String>().Utf8Value();
                    ggml_type type = GGML_TYPE_COUNT;
                    for (int t = 0; t < GGML_TYPE_COUNT; t++) if (ggml_type_name((ggml_type) t) != nullptr && name == ggml_type_name((ggml_type) t)) type = (ggml_type) t;
                    if (type != GGML_TYPE_F16 && type != GGML_TYPE_Q8_0 && type != GGML_TYPE_Q4_0) throw std::runtime_error("unknown KV cache type \"" + name + "\"");
                    at.kvTypes.push_back(type);
                }
            }
            if (at.kvTypes.empty()) at.kvTypes.push_back(GGML_TYPE_F16);
        }
    } catch (const std::exception& e) {
        Napi::TypeError::New(env, std::string("tensorwiseProfileOperators: ") + e.what()).ThrowAsJavaScriptException();
        return env.Undefined();
    }
    auto* worker = new ProfileWorker(env, std::move(req));
    Napi::Promise promise = worker->promise();
    worker->Queue();
    return promise;
}

Napi::Value cancelProfiles(const Napi::CallbackInfo& info) {
    tensorwiseProfileCancelGeneration++;
    return info.Env().Undefined();
}

}  // namespace

void tensorwiseRegisterProfilerExports(Napi::Env env, Napi::Object exports) {
    exports.DefineProperties({
        Napi::PropertyDescriptor::Function("tensorwiseProfileOperators", profileOperators),
        Napi::PropertyDescriptor::Function("tensorwiseCancelProfiles", cancelProfiles),
    });
    tensorwiseRegisterFitExports(env, exports);
}
