// Speculative decoding sessions for the native generation loop; see TensorwiseSpeculative.h.
// source: examples/speculative-simple/speculative-simple.cpp (the order of draft, rewind, verify, process, accept).
#include "TensorwiseSpeculative.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include "common.h"
#include "speculative.h"

namespace {

std::mutex sessionsMutex;
std::map<llama_context*, std::unique_ptr<TensorwiseSpecSession>> sessions;

std::mutex historiesMutex;
std::map<llama_context*, std::map<llama_seq_id, TensorwiseSequenceHistory>> histories;

bool needsDraftContext(common_speculative_type type) {
    return type == COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE || type == COMMON_SPECULATIVE_TYPE_DRAFT_MTP ||
        type == COMMON_SPECULATIVE_TYPE_DRAFT_EAGLE3 || type == COMMON_SPECULATIVE_TYPE_DRAFT_DFLASH ||
        type == COMMON_SPECULATIVE_TYPE_DRAFT_DSPARK;
}

}  // namespace

struct TensorwiseSpecSession::Impl {
    common_params_speculative params;
    common_speculative_type type = COMMON_SPECULATIVE_TYPE_NONE;
    common_speculative* spec = nullptr;
    // how many tokens of each sequence, from position 0, the draft context holds (the target's, by construction)
    std::map<llama_seq_id, int32_t> draftKnown;
    std::vector<llama_token> result;

    ~Impl() {
        if (spec != nullptr) common_speculative_free(spec);
    }
};

TensorwiseSpecSession::TensorwiseSpecSession(llama_context* target, const TensorwiseSpecRequest& request)
    : target_(target), request_(request), impl_(std::make_unique<Impl>()) {
    const common_speculative_type type = common_speculative_type_from_name(request.type);
    if (type == COMMON_SPECULATIVE_TYPE_COUNT || type == COMMON_SPECULATIVE_TYPE_NONE)
        throw std::runtime_error("unknown speculative type \"" + request.type + "\" (llama.cpp's types: " + common_speculative_all_types_str() + ")");
    if (needsDraftContext(type) && request.draftCtx == nullptr)
        throw std::runtime_error("speculative type " + request.type + " needs a draft context");
    if (!needsDraftContext(type) && request.draftCtx != nullptr)
        throw std::runtime_error("speculative type " + request.type + " takes no draft context");
    if (request.nMax < 1) throw std::runtime_error("the most tokens to draft must be at least 1");
    // a target whose memory cannot drop a sequence's tail (recurrent state) needs llama.cpp's checkpoints to undo a
    // rejected draft (common_prompt_checkpoint), which this loop does not take
    if (common_context_can_seq_rm(target) != COMMON_CONTEXT_SEQ_RM_TYPE_PART)
        throw std::runtime_error("this model keeps a recurrent state that cannot drop a rejected draft: speculative decoding on it is not supported");
    impl_->type = type;
    impl_->params.types = {type};
    impl_->params.draft.n_max = request.nMax;
    impl_->params.draft.n_min = std::max(0, request.nMin);
    impl_->params.draft.ctx_tgt = target;
    impl_->params.draft.ctx_dft = request.draftCtx;
    for (common_params_speculative_ngram_map* ngram : {&impl_->params.ngram_simple, &impl_->params.ngram_map_k, &impl_->params.ngram_map_k4v}) {
        if (request.ngramSizeN > 0) ngram->size_n = (uint16_t) request.ngramSizeN;
        if (request.ngramSizeM > 0) ngram->size_m = (uint16_t) request.ngramSizeM;
    }
    impl_->spec = common_speculative_init(impl_->params, llama_n_seq_max(target));
    if (impl_->spec == nullptr) throw std::runtime_error("llama.cpp could not start speculative decoding of type " + request.type);
}

TensorwiseSpecSession::~TensorwiseSpecSession() = default;

bool TensorwiseSpecSession::serves(llama_context* target, const TensorwiseSpecRequest& request) const {
    return target == target_ && request.type == request_.type && request.nMax == request_.nMax && request.nMin == request_.nMin &&
        request.draftCtx == request_.draftCtx && request.ngramSizeN == request_.ngramSizeN && request.ngramSizeM == request_.ngramSizeM;
}

bool TensorwiseSpecSession::sync(llama_seq_id seq, int32_t startPosition, const std::vector<llama_token>& history) {
    llama_context* draft = request_.draftCtx;
    if (draft == nullptr) return true;
    int32_t& known = impl_->draftKnown[seq];
    if (known > startPosition) {
        llama_memory_seq_rm(llama_get_memory(draft), seq, startPosition, -1);
        known = startPosition;
    }
    if (known < startPosition) {
        // the MTP head reads the target's hidden states, so only the target's own decode can fill its cache; a draft
        // model catches up on the tokens this loop decoded
        if (impl_->type != COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE || (int32_t) history.size() < startPosition) {
            llama_memory_seq_rm(llama_get_memory(draft), seq, 0, -1);
            known = 0;
            return false;
        }
        const int32_t nBatch = (int32_t) llama_n_batch(draft);
        llama_batch batch = llama_batch_init(nBatch, 0, 1);
        bool ok = true;
        while (ok && known < startPosition) {
            const int32_t count = std::min(nBatch, startPosition - known);
            batch.n_tokens = count;
            for (int32_t i = 0; i < count; i++) {
                batch.token[i] = history[known + i];
                batch.pos[i] = known + i;
                batch.n_seq_id[i] = 1;
                batch.seq_id[i][0] = seq;
                batch.logits[i] = i == count - 1;
            }
            ok = llama_decode(draft, batch) == 0;
            if (ok) known += count;
        }
        llama_batch_free(batch);
        if (!ok) {
            llama_memory_seq_rm(llama_get_memory(draft), seq, 0, -1);
            known = 0;
            return false;
        }
    }
    return true;
}

void TensorwiseSpecSession::start(llama_seq_id seq, const std::vector<llama_token>& history) {
    common_speculative_begin(impl_->spec, seq, history);
}

bool TensorwiseSpecSession::process(const llama_batch& batch) {
    if (!common_speculative_process(impl_->spec, batch)) return false;
    if (request_.draftCtx != nullptr) {
        for (int32_t i = 0; i < batch.n_tokens; i++) {
            int32_t& known = impl_->draftKnown[batch.seq_id[i][0]];
            known = std::max(known, batch.pos[i] + 1);
        }
    }
    return true;
}

std::vector<llama_token> TensorwiseSpecSession::draft(llama_seq_id seq, int32_t pos0, llama_token idLast, const std::vector<llama_token>& history, int32_t nMax) {
    impl_->result.clear();
    if (nMax < 1) return {};
    common_speculative_get_draft_params(impl_->spec, seq) = {
        /* .drafting = */ true,
        /* .n_max    = */ nMax,
        /* .pos0     = */ pos0,
        /* .id_last  = */ idLast,
        /* .prompt   = */ &history,
        /* .result   = */ &impl_->result,
    };
    common_speculative_draft(impl_->spec);
    if ((int32_t) impl_->result.size() > nMax) impl_->result.resize(nMax);
    return impl_->result;
}

void TensorwiseSpecSession::rewindDraft(llama_seq_id seq, int32_t pos) {
    if (request_.draftCtx == nullptr) return;
    llama_memory_seq_rm(llama_get_memory(request_.draftCtx), seq, pos, -1);
    int32_t& known = impl_->draftKnown[seq];
    known = std::min(known, pos);
}

void TensorwiseSpecSession::accept(llama_seq_id seq, uint16_t accepted, int32_t pos) {
    common_speculative_accept(impl_->spec, seq, accepted);
    llama_memory_seq_rm(llama_get_memory(target_), seq, pos, -1);
    rewindDraft(seq, pos);
}

void tensorwiseReleaseSpecSessions(llama_context* ctx) {
    std::vector<std::unique_ptr<TensorwiseSpecSession>> released;
    {
        std::lock_guard<std::mutex> lock(sessionsMutex);
        for (auto it = sessions.begin(); it != sessions.end();) {
            if (it->first == ctx || it->second->draftContext() == ctx) {
                released.push_back(std::move(it->second));
                it = sessions.erase(it);
            } else {
                ++it;
            }
        }
    }
    std::lock_guard<std::mutex> lock(historiesMutex);
    histories.erase(ctx);
}

TensorwiseSpecSession& tensorwiseSpecSession(llama_context* target, const TensorwiseSpecRequest& request) {
    std::lock_guard<std::mutex> lock(sessionsMutex);
    auto found = sessions.find(target);
    if (found != sessions.end() && found->second->serves(target, request)) return *found->second;
    if (found != sessions.end()) sessions.erase(found);
    auto made = std::make_unique<TensorwiseSpecSession>(target, request);  // throws with llama.cpp's reason
    TensorwiseSpecSession& session = *made;
    sessions[target] = std::move(made);
    return session;
}

TensorwiseSequenceHistory& tensorwiseSequenceHistory(llama_context* ctx, llama_seq_id seq) {
    std::lock_guard<std::mutex> lock(historiesMutex);
    return histories[ctx][seq];
}
