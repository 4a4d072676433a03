#pragma once
// Speculative decoding for the native generation loop (TensorwiseGenerate.cpp), through llama.cpp's own
// common_speculative_* (common/speculative.h: what llama-server and llama-speculative-simple use): n-gram lookup over
// the sequence's own tokens, a separate draft model's context, or the model's multi-token-prediction (MTP) head in a
// context of type LLAMA_CONTEXT_TYPE_MTP beside the target's.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llama.h"

// What one generation asks for: the speculative type by llama.cpp's name ("ngram-simple", "ngram-map-k",
// "ngram-mod", "draft-simple", "draft-mtp"), the most and fewest tokens drafted per step (--spec-draft-n-max/-n-min),
// and for the draft types the draft context (the draft model's, or the MTP context of the target model).
struct TensorwiseSpecRequest {
    std::string type;
    int32_t nMax = 3;
    int32_t nMin = 0;
    llama_context* draftCtx = nullptr;
    // n-gram lookup: the n-gram looked up and the m-gram drafted after it (--spec-ngram-*-size-n / -size-m); 0: llama.cpp's
    int32_t ngramSizeN = 0;
    int32_t ngramSizeM = 0;
};

// Counters of one generation: target steps that verified a draft, those that kept all of it, tokens drafted and accepted.
struct TensorwiseSpecStats {
    int32_t steps = 0;
    int32_t fullyAccepted = 0;  // steps that kept their whole draft (no rejection seen: how α is estimated)
    int32_t drafted = 0;
    int32_t accepted = 0;
};

// The speculative state of one target context (kept across its generations: n-gram tables and the draft context's
// KV cache follow the sequence), and the tokens of each of its sequences this loop has decoded.
class TensorwiseSpecSession {
public:
    // Throws std::runtime_error with llama.cpp's reason (an unknown type, incompatible vocabularies, a draft context
    // with another number of sequences, a target that cannot remove a sequence's tail).
    TensorwiseSpecSession(llama_context* target, const TensorwiseSpecRequest& request);
    ~TensorwiseSpecSession();
    TensorwiseSpecSession(const TensorwiseSpecSession&) = delete;
    TensorwiseSpecSession& operator=(const TensorwiseSpecSession&) = delete;

    // Whether this session serves `request` on `target` (else a new one is made).
    bool serves(llama_context* target, const TensorwiseSpecRequest& request) const;
    llama_context* draftContext() const { return request_.draftCtx; }

    // Before a generation of `seq` whose first `startPosition` tokens are in the target's KV cache: brings the draft
    // context to the same tokens (from `history`, the tokens this loop decoded for the sequence). Returns false when
    // the draft cannot follow (its prefix is unknown, or an MTP head missed the target's decode of it): the
    // generation then runs without speculation.
    bool sync(llama_seq_id seq, int32_t startPosition, const std::vector<llama_token>& history);

    // After the prompt: tells the speculators every token of `seq` so far (n-gram tables are built from them).
    void start(llama_seq_id seq, const std::vector<llama_token>& history);

    // After every target decode of `batch` (prompt chunks and verification batches): the draft context decodes it too.
    bool process(const llama_batch& batch);

    // The draft for the token after `idLast` at position `pos0` of `seq`, at most `nMax` tokens (0: none);
    // `history` holds every token before `idLast`.
    std::vector<llama_token> draft(llama_seq_id seq, int32_t pos0, llama_token idLast, const std::vector<llama_token>& history, int32_t nMax);

    // Before verifying: the draft context drops what drafting left after position `pos` (the target's next position).
    void rewindDraft(llama_seq_id seq, int32_t pos);

    // After verifying: `accepted` of the draft's tokens were the target's, and both caches keep positions below `pos`.
    void accept(llama_seq_id seq, uint16_t accepted, int32_t pos);

private:
    llama_context* target_;
    TensorwiseSpecRequest request_;
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Releases every speculative session that uses `ctx` as its target or its draft (the context is being freed).
void tensorwiseReleaseSpecSessions(llama_context* ctx);

// The session for `target` serving `request`, made (or made again) as needed; throws as its constructor.
TensorwiseSpecSession& tensorwiseSpecSession(llama_context* target, const TensorwiseSpecRequest& request);

// The tokens this loop decoded for one sequence of a context: `tokens` are those at positions `from`, `from` + 1, …
// (`from` > 0 where the cache held tokens this loop did not decode, e.g. a KV cache restored from a file). Kept for
// n-gram lookup and to bring a draft context to the target's tokens.
struct TensorwiseSequenceHistory {
    int32_t from = 0;
    std::vector<llama_token> tokens;
};

// The history of `seq` of `ctx` (created empty); stable while the context lives.
TensorwiseSequenceHistory& tensorwiseSequenceHistory(llama_context* ctx, llama_seq_id seq);
